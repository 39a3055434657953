"""A fake model provider on loopback: a real HTTP/1.1 server in a thread (or, for the bench, a
process of its own) answering ``POST /v1/messages``, ``/v1/responses`` and
``/v1/chat/completions`` with recorded bodies, so the real SDKs, their HTTP library and the
instrumented transport are exercised for real. Only the provider is fake.

Which reply a request gets is chosen by the ``model`` of its JSON body (``fake.route(model,
reply)``): the SDK call names its fixture, and nothing else of the request needs to be known.
A JSON reply is sent with a Content-Length; an SSE reply chunked (``Transfer-Encoding:
chunked``), ``chunk`` bytes at a time (cuts fall anywhere, even inside a UTF-8 character), with
optional gzip, a pause before the first byte and between chunks, a gate that holds the rest of
the stream after ``gate_after`` chunks until the test opens it, or one that holds the end of a
stream whose bytes were all sent.

``tests/review/fake_provider.py`` serves GET retrievals for the review pages; this one serves
the creating calls, so the two stay apart.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

JSON = "application/json"
SSE = "text/event-stream; charset=utf-8"


@dataclass
class Reply:
    body: bytes
    content_type: str = JSON
    status: int = 200
    chunk: int = 97  # bytes per chunk of a streamed reply
    gzip: bool = False  # when the request accepts it
    first_byte_delay: float = 0.0  # seconds before the headers
    chunk_delay: float = 0.0  # seconds between chunks
    gate: threading.Event | None = None
    gate_after: int = 1  # chunks sent before waiting at the gate
    hold_end: threading.Event | None = None  # after the last chunk, before the end

    @property
    def streamed(self) -> bool:
        return self.content_type.startswith("text/event-stream")


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeProvider:
    url: str
    routes: dict[str, Reply] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def route(self, model: str, reply: Reply) -> None:
        self.routes[model] = reply

    def requests_for(self, model: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if model_of(r.path, r.body) == model]


def model_of(path: str, body: bytes) -> str:
    """The model a request names: its body's ``model``, else the one its path names
    (``.../models/<model>:<method>``, where Gemini puts it)."""
    try:
        model = json.loads(body).get("model", "")
    except (ValueError, AttributeError):
        model = ""
    if not model:
        last = path.partition("?")[0].rstrip("/").rsplit("/", 1)[-1]
        model = unquote(last.rpartition(":")[0]) if ":" in last else ""
    return str(model)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeProvider
    stopping: threading.Event

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that closed its stream early: nothing to report


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Small chunks go out at once, as a provider's do (Nagle's algorithm would hold each one
    # back for the client's delayed ACK: tens of milliseconds).
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        fake = self.server.fake
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with fake.lock:
            fake.received.append(Received(self.path, dict(self.headers.items()), body))
        reply = fake.routes.get(model_of(self.path, body))
        if reply is None:
            self._send(404, JSON, b'{"error": {"message": "no such model on the fake"}}')
            return
        if reply.first_byte_delay:
            time.sleep(reply.first_byte_delay)
        accepts_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if not reply.streamed:
            payload = gzip.compress(reply.body) if reply.gzip and accepts_gzip else reply.body
            encoding = "gzip" if reply.gzip and accepts_gzip else None
            self._send(reply.status, reply.content_type, payload, encoding)
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        compress = reply.gzip and accepts_gzip
        if compress:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        data = gzip.compress(reply.body) if compress else reply.body
        try:
            for n, start in enumerate(range(0, len(data), reply.chunk)):
                if n and reply.chunk_delay:
                    time.sleep(reply.chunk_delay)
                if reply.gate is not None and n == reply.gate_after and not self._wait(reply.gate):
                    return
                self._chunk(data[start : start + reply.chunk])
            if reply.hold_end is not None and not self._wait(reply.hold_end):
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True  # the client went away mid-stream

    def _wait(self, gate: threading.Event) -> bool:
        while not gate.wait(0.05):
            if self.server.stopping.is_set():
                self.close_connection = True
                return False
        return True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send(
        self, status: int, content_type: str, body: bytes, encoding: str | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def fake_provider(host: str = "127.0.0.1", port: int = 0) -> Iterator[FakeProvider]:
    server = _Server((host, port), _Handler)
    server.stopping = threading.Event()
    bound_host, bound_port = server.server_address[:2]
    server.fake = FakeProvider(url=f"http://{bound_host}:{bound_port}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server.fake
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def main(argv: list[str] | None = None) -> int:
    """A fake provider process for the bench: serves one body for every model, prints its URL
    on stdout, and runs until stdin closes."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("body", type=Path, help="the file to serve, byte for byte")
    parser.add_argument("--sse", action="store_true", help="serve it as text/event-stream")
    parser.add_argument("--chunk", type=int, default=97)
    parser.add_argument("--first-byte-ms", type=float, default=0.0)
    parser.add_argument("--chunk-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    reply = Reply(
        args.body.read_bytes(),
        content_type=SSE if args.sse else JSON,
        chunk=args.chunk,
        first_byte_delay=args.first_byte_ms / 1000,
        chunk_delay=args.chunk_ms / 1000,
    )

    class AnyModel(dict):  # type: ignore[type-arg]
        def get(self, key: Any, default: Any = None) -> Any:
            return reply

    with fake_provider() as fake:
        fake.routes = AnyModel()
        print(fake.url, flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
