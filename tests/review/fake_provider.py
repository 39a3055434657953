"""A fake OpenAI Responses API on loopback: a real HTTP server in a thread, so the client's
timeouts, status handling and parsing are exercised for real (only the provider is fake)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Route:
    status: int = 200
    body: bytes = b"{}"
    delay: float = 0.0  # seconds before answering (a timeout test)


@dataclass
class FakeOpenAI:
    url: str
    routes: dict[str, Route]
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, Authorization)

    def json_route(self, response_id: str, body: Any, status: int = 200) -> None:
        self.routes[f"/v1/responses/{response_id}"] = Route(status, json.dumps(body).encode())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI
    stopping: threading.Event

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out closed the socket: nothing to report


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        fake = self.server.fake
        fake.requests.append((self.path, self.headers.get("Authorization", "")))
        route = fake.routes.get(self.path, Route(404, b'{"error": {"message": "not found"}}'))
        if route.delay and self.server.stopping.wait(route.delay):
            return
        self.send_response(route.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        self.wfile.write(route.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # no stderr lines: the test captures logs and output


@contextmanager
def fake_openai() -> Iterator[FakeOpenAI]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.stopping = threading.Event()
    host, port = server.server_address[:2]
    server.fake = FakeOpenAI(url=f"http://{host}:{port}", routes={})
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server.fake
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
