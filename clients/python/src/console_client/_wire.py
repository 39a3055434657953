"""Requests to the console: the standard library's ``http.client``, one kept-alive connection.

Not the SDK's httpx2/httpx: the delivery thread shares the interpreter lock with the chat, and
``http.client`` spends about a third of the CPU per post that httpx2 does (measured by
``bench/client.py``'s in-process run: a post's CPU bursts are what a chat thread waits behind).
It also leaves the package with no dependency at all. The console is reached directly (no proxy
from the environment): it is the chat backend's own service.
"""

from __future__ import annotations

import http.client
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class Wire:
    """``request()`` raises ``OSError`` (refused, timed out, reset) or
    ``http.client.HTTPException`` (a malformed answer); any answer is returned."""

    def __init__(self, url: str, *, timeout: float, connect_timeout: float) -> None:
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._https:
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                self._host,
                self._port,
                timeout=self._connect_timeout,
                context=ssl.create_default_context(),
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self._connect_timeout)
        conn.connect()
        assert conn.sock is not None
        conn.sock.settimeout(self._timeout)  # each read and write, once connected
        return conn

    def request(
        self, method: str, path: str, *, body: bytes | None, headers: dict[str, str]
    ) -> Answer:
        reused = self._conn is not None
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = self._connect()
            try:
                self._conn.request(method, self._prefix + path, body=body, headers=headers)
                response = self._conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                # A kept-alive connection the console had closed: once more on a new one (a
                # repeated post is harmless, it carries the same Idempotency-Key).
                if reused and attempt == 1:
                    continue
                raise
            except BaseException:
                self.close()
                raise
            answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
            if response.will_close:
                self.close()
            return answer
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
