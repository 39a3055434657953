"""The client's world: a real console (gunicorn serving the project against the test databases)
on a free loopback port, a fake provider on another, service tokens, and the recorded
fixtures as the provider's replies.

The console can be started late (down, then up, on the port the client was given), frozen
(SIGSTOP: its socket still accepts connections but nothing answers, a hanging console) and
thawed, or started against a database that does not exist (every request a real 500).

Tests that start the console need committed rows it can see: they use ``transactional_db``.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connections

from conversations import formats
from conversations.replay import envelope
from conversations.services import service_token_create
from tests.conftest import database_url
from tests.providers import Recorded, endpoint_of, fixture_files, load

from .provider import JSON, SSE, FakeProvider, Reply, fake_provider

try:  # the package under test: installed by `make venv` (pip install -e ./clients/python)
    import console_client
except ImportError:  # a venv made before the client existed: test the working tree's copy
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"))

import console_client

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).parent / "gunicorn"
HOST = "127.0.0.1"
START_SECONDS = 60


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def console_env(*, broken_database: bool = False) -> dict[str, str]:
    for alias in ("default", "keys"):
        connections[alias].ensure_connection()
    default = database_url("default")
    if broken_database:  # a database that does not exist: every request that needs it is a 500
        default = default.rsplit("/", 1)[0] + "/console_client_no_such_database"
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "DATABASE_URL": default,
        "KEYS_DATABASE_URL": database_url("keys"),
        "REDIS_URL": settings.REDIS_URL,
        "FIELD_ENCRYPTION_KEYS": ",".join(settings.FIELD_ENCRYPTION_KEYS),
        "SECRET_KEY": settings.SECRET_KEY,
        "DEBUG": "false",
        "PYTHONUNBUFFERED": "1",
    }


@dataclass
class ConsoleServer:
    """gunicorn (one sync worker) on ``port``; ``start()`` may come after clients use it."""

    port: int
    log: Path
    broken_database: bool = False
    process: subprocess.Popen[bytes] | None = None
    logs: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> ConsoleServer:
        command = [
            str(GUNICORN),
            "console.wsgi:application",
            "--chdir",
            str(ROOT),
            "--bind",
            f"{HOST}:{self.port}",
            "--workers",
            "1",
            "--worker-class",
            "sync",
            "--timeout",
            "120",
            "--graceful-timeout",
            "5",
            "--error-logfile",
            "-",
        ]
        out = self.log.open("ab")
        self.process = subprocess.Popen(
            command,
            env=console_env(broken_database=self.broken_database),
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,  # its own process group: frozen and stopped as one
        )
        out.close()
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"gunicorn exited:\n{self.log.read_text()}")
            conn = http.client.HTTPConnection(HOST, self.port, timeout=5)
            try:
                conn.request("GET", "/api/v1/exchanges")  # 401 or 405: it answers
                conn.getresponse().read()
                return
            except OSError:
                time.sleep(0.1)
            finally:
                conn.close()
        raise AssertionError(
            f"gunicorn did not answer in {START_SECONDS}s:\n{self.log.read_text()}"
        )

    def freeze(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.thaw()
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None


@pytest.fixture(autouse=True)
def _fresh_consoles() -> Iterator[None]:
    """Each test gets its own delivery threads: stopped (and their registry cleared) after it."""
    console_client.shutdown(timeout=0)
    yield
    console_client.shutdown(timeout=0)


@pytest.fixture
def token(transactional_db: Any) -> str:
    _, value = service_token_create(name="chat-backend")
    return value


@pytest.fixture
def console_factory(tmp_path: Path) -> Iterator[Any]:
    servers: list[ConsoleServer] = []

    def make(*, port: int | None = None, broken_database: bool = False) -> ConsoleServer:
        server = ConsoleServer(
            port or free_port(),
            tmp_path / f"gunicorn-{len(servers)}.log",
            broken_database=broken_database,
        )
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()
    for server in servers:
        if server.log.exists():
            print(f"===== {server.log.name} =====\n{server.log.read_text(errors='replace')}")


@pytest.fixture(scope="session")
def shared_console(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ConsoleServer]:
    """One console for the tests that need it only up: starting gunicorn takes seconds."""
    server = ConsoleServer(free_port(), tmp_path_factory.mktemp("console") / "gunicorn.log")
    with django_db_blocker.unblock():
        server.start()
    yield server
    server.stop()


@pytest.fixture
def live_console(shared_console: ConsoleServer, token: str) -> ConsoleServer:
    return shared_console


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with fake_provider() as fake:
        yield fake


# --- Fixtures as the provider's replies -------------------------------------------------------


def anthropic_sse(text: str) -> str:
    """Anthropic's SDK reads only named events; recordings kept as one JSON per line (vercel's
    ``.chunks.txt``) lost the ``event:`` lines the API sends: put them back from each event's
    ``type``, leaving the data bytes as they are."""
    if "\nevent:" in "\n" + text:
        return text
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        data = "\n".join(
            line[5:].lstrip(" ") if line.startswith("data:") else line for line in block.split("\n")
        )
        events.append(f"event: {json.loads(data)['type']}\n{block}\n\n")
    return "".join(events)


@dataclass(frozen=True)
class Served:
    """A recording as the fake serves it, under a model name of its own."""

    model: str
    format: str
    body: bytes
    streamed: bool
    source: str = ""  # the recording's file name, "#N" for its N-th exchange

    def reply(self, **options: Any) -> Reply:
        return Reply(self.body, content_type=SSE if self.streamed else JSON, **options)


def served(recorded: Recorded, model: str) -> Served:
    if recorded.stream is not None:
        text = recorded.stream
        if recorded.format == "anthropic.messages":
            text = anthropic_sse(text)
        return Served(model, recorded.format, text.encode("utf-8"), True, recorded.name)
    assert recorded.response is not None
    return Served(model, recorded.format, recorded.response.encode("utf-8"), False, recorded.name)


def all_served() -> list[Served]:
    out = []
    for name in fixture_files():
        for i, recorded in enumerate(load(name)):
            out.append(served(recorded, f"fx{len(out)}-{name.split('__', 1)[1][:40]}-{i}"))
    return out


def expected_replay(fmt: str, request: bytes, served: Served) -> bytes:
    """The replay the console must return for one exchange, computed from the bytes the SDK
    sent to the fake and the bytes the fake sent back (the console's own parser, in process)."""
    text = served.body.decode("utf-8")
    parsed = formats.get(fmt).parse(
        request=request.decode("utf-8"),
        response=None if served.streamed else text,
        stream=text if served.streamed else None,
        endpoint=endpoint_of(fmt),
    )
    return envelope([m.raw for m in parsed.history] + [m.raw for m in parsed.output])
