"""Case 13 (the client's half): a 5xx from a console that is not ready (a dependency down, e.g.
Redis: ``/readyz`` answers 503, or nothing) is retried without using up the exchange's
attempts; a 5xx from a console that is ready counts against the exchange, as before."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from console_client._delivery import Console, Options, Outcome
from console_client._spool import Entry


class FakeConsole(ThreadingHTTPServer):
    ready = 503
    posts = 0


class Handler(BaseHTTPRequestHandler):
    server: FakeConsole

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def do_GET(self) -> None:
        self._answer(self.server.ready if self.path == "/readyz" else 404)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.posts += 1
        self._answer(500)


@pytest.fixture
def fake() -> Iterator[FakeConsole]:
    server = FakeConsole(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_5xx_while_the_console_is_not_ready_does_not_use_up_attempts(
    fake: FakeConsole, tmp_path: Any
) -> None:
    host, port = fake.server_address[:2]
    console = Console(f"http://{host}:{port}", "t", Options(spool_dir=tmp_path, max_attempts=2))
    entry = Entry(key="k", conversation="c", body=b"{}")
    for _ in range(5):  # more 500s than the exchange's attempts: none counted
        assert console._post(entry, cancelled=False) is Outcome.UNREACHABLE
    assert fake.posts == 5
    fake.ready = 200  # the console is well: its 500 is this exchange's
    assert console._post(entry, cancelled=False) is Outcome.FAILED


def test_a_5xx_with_no_readiness_answer_is_the_consoles(fake: FakeConsole, tmp_path: Any) -> None:
    host, port = fake.server_address[:2]
    console = Console(f"http://{host}:{port}", "t", Options(spool_dir=tmp_path))
    entry = Entry(key="k", conversation="c", body=b"{}")
    fake.shutdown()  # /readyz does not answer (nor does anything): not counted
    fake.server_close()
    assert console._post(entry, cancelled=False) is Outcome.UNREACHABLE


def test_a_console_without_readyz_counts_as_before(fake: FakeConsole, tmp_path: Any) -> None:
    host, port = fake.server_address[:2]
    fake.ready = 404  # an older console: it cannot say, so the 500 counts against the exchange
    console = Console(f"http://{host}:{port}", "t", Options(spool_dir=tmp_path))
    assert console._post(Entry(key="k", conversation="c", body=b"{}"), cancelled=False) is (
        Outcome.FAILED
    )
