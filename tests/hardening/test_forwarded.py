"""``X-Forwarded-For`` counts only from ``FORWARDED_ALLOW_IPS``, the same under uvicorn and
gunicorn (issue case 5: uvicorn trusted it from 127.0.0.1 by default, and 20 wrong passwords with
a new XFF each never locked the account).

Both servers are started for real, through ``python -m console.ops.serve`` as ``make run``,
docker-compose and the Dockerfile start them, with the setting empty (the default) and naming
127.0.0.1 (a proxy on this host). Empty: a client's own XFF is ignored, the account locks, the
share pages' limit holds. Naming the proxy: the address is the right-most hop the proxy appended,
so the lock and the limit still hold against a client rotating what it writes to the left, and a
different client behind the same proxy is counted apart.
"""

from __future__ import annotations

import http.client
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connections

from console.hardening import client_address
from console.ops.serve import command
from tests.conftest import database_url
from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 60
SHARE_LIMIT = 60  # console/sharing_views.py: per address and per link, per minute


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, kind: str, forwarded: str, log: Path) -> None:
        for alias in ("default", "keys"):
            connections[alias].ensure_connection()
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        app = "console.asgi:application" if kind == "uvicorn" else "console.wsgi:application"
        bind = (
            ["--host", "127.0.0.1", "--port", str(self.port)]
            if kind == "uvicorn"
            else ["--bind", f"127.0.0.1:{self.port}", "--workers", "1"]
        )
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "DATABASE_URL": database_url("default"),
            "KEYS_DATABASE_URL": database_url("keys"),
            "REDIS_URL": settings.REDIS_URL,
            "FIELD_ENCRYPTION_KEYS": ",".join(settings.FIELD_ENCRYPTION_KEYS),
            "SECRET_KEY": settings.SECRET_KEY,
            "DEBUG": "false",
            "FORWARDED_ALLOW_IPS": forwarded,
            "PYTHONUNBUFFERED": "1",
        }
        self.log = log
        out = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "console.ops.serve", kind, app, *bind],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert self.process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
            try:
                conn.request("GET", "/healthz")
                conn.getresponse().read()
                break
            except OSError:
                time.sleep(0.1)
            finally:
                conn.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[Server]]:
    made: list[Server] = []
    yield made
    for s in made:
        s.stop()
    for s in made:
        print(f"===== {s.log.name} =====\n{s.log.read_text(errors='replace')}")


def _address() -> str:
    return f"198.18.{random.randrange(256)}.{random.randrange(1, 255)}"


def _login(url: str, username: str, password: str, xff: str) -> int:
    with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as client:
        page = client.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None, page.text[:500]
        answer = client.post(
            "/login/",
            data={
                "username": username,
                "password": password,
                "csrfmiddlewaretoken": token.group(1),
            },
            headers={"X-Forwarded-For": xff, "Referer": f"{url}/login/"},
        )
        return answer.status_code


def _share_until_limited(url: str, xff: Any) -> int:
    """Share pages of tokens nobody issued, each with a new XFF; how many until a 429 (the
    fixed window may turn once in between: at most two windows' worth)."""
    with httpx.Client(base_url=url, timeout=30) as client:
        for n in range(1, 2 * SHARE_LIMIT + 2):
            status = client.get(
                f"/s/{uuid4().hex}/", headers={"X-Forwarded-For": xff()}
            ).status_code
            assert status in (404, 429), status
            if status == 429:
                return n
    return 0


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["uvicorn", "gunicorn"])
@pytest.mark.parametrize("forwarded", ["", "127.0.0.1"])
def test_rotating_forwarded_for_neither_unlocks_sign_in_nor_the_share_limit(
    servers: list[Server], tmp_path: Path, kind: str, forwarded: str
) -> None:
    server = Server(kind, forwarded, tmp_path / f"{kind}.log")
    servers.append(server)
    username = f"xff-{kind}-{uuid4().hex[:8]}"
    # The servers hash with PBKDF2 (this process's tests use MD5: tests/conftest.py).
    hashed = PBKDF2PasswordHasher().encode("right-password-1", "xffsalt", iterations=1000)
    UserFactory(username=username, password=hashed)
    proxied = forwarded != ""  # a proxy appends the address it saw after the client's own
    seen = _address()

    def xff() -> str:
        forged = _address()
        return f"{forged}, {seen}" if proxied else forged

    answers = [_login(server.url, username, "wrong", xff()) for _ in range(20)]
    limit = settings.AXES_FAILURE_LIMIT
    assert answers[: limit - 1] == [200] * (limit - 1), answers
    assert set(answers[limit - 1 :]) == {429}, answers
    assert _login(server.url, username, "right-password-1", xff()) == 429
    if proxied:  # another client behind the same proxy is another address: it signs in
        assert (
            _login(server.url, username, "right-password-1", f"{_address()}, {_address()}") == 302
        )
    assert _share_until_limited(server.url, xff) > 0
    if proxied:
        other = _address()
        with httpx.Client(base_url=server.url, timeout=30) as client:
            page = client.get(f"/s/{uuid4().hex}/", headers={"X-Forwarded-For": other})
        assert page.status_code == 404
    # The pages still answer.
    assert httpx.get(f"{server.url}/healthz", timeout=30).status_code == 200
    assert httpx.get(f"{server.url}/login/", timeout=30).status_code == 200


def test_the_servers_get_the_same_setting() -> None:
    assert command("uvicorn", ["console.asgi:application"], "") == [
        "uvicorn",
        "console.asgi:application",
        "--no-proxy-headers",
    ]
    assert command("uvicorn", ["a:b"], "10.0.0.2, 10.0.0.3")[-2:] == [
        "--forwarded-allow-ips",
        "10.0.0.2,10.0.0.3",
    ]
    assert command("gunicorn", ["a:b"], "")[:3] == [
        "gunicorn",
        "--config",
        "python:console.ops.gunicorn_conf",
    ]
    for path in ("Procfile.dev", "docker-compose.yml", "Dockerfile"):
        assert "console.ops.serve" in (ROOT / path).read_text(), path


@pytest.mark.parametrize(
    ("trusted", "peer", "xff", "expected"),
    [
        ([], "127.0.0.1", "203.0.113.9", "127.0.0.1"),
        (["10.0.0.2"], "127.0.0.1", "203.0.113.9", "127.0.0.1"),
        (["127.0.0.1"], "127.0.0.1", "6.6.6.6, 203.0.113.9", "203.0.113.9"),
        (["127.0.0.1", "10.0.0.2"], "127.0.0.1", "6.6.6.6, 203.0.113.9, 10.0.0.2", "203.0.113.9"),
        (["127.0.0.1"], "127.0.0.1", "not-an-address", "127.0.0.1"),
        (["127.0.0.1"], "127.0.0.1", "", "127.0.0.1"),
        (["127.0.0.1"], "203.0.113.9", "6.6.6.6", "203.0.113.9"),  # uvicorn already replaced it
    ],
)
def test_the_client_address(
    trusted: list[str], peer: str, xff: str, expected: str, settings: Any, rf: Any
) -> None:
    settings.FORWARDED_ALLOW_IPS = trusted
    request = rf.get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=xff)
    assert client_address(request) == expected
