"""One provider call as captured: the request bytes as sent, the response bytes as received.

The transport (``_transport.py``) fills a ``Capture`` on the chat path, doing no more than
appending each chunk to a list; everything else (content decoding, the console's JSON body) is
done later on the delivery thread, by ``Capture.body()``.

Which calls are exchanges, and in which format, is ``_capture_table.py``: generated from the
console's format registry (``manage.py write_format_tables``; the console's tests compare it byte
for byte), so a new provider format needs no edit here.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import ModuleType
from typing import Any

from ._capture_table import BINARY, ENDPOINT, PATHS
from ._context import Conversation


def format_for(method: str, path: str) -> str | None:
    """The console's format of a provider call, by the end of the URL path (``PATHS``). Only
    creating calls (POST) are exchanges: `/v1/messages/count_tokens`, `/v1/messages/batches` or
    a `/responses/{id}` retrieval are not, and pass untouched."""
    if method != "POST":
        return None
    path = path.rstrip("/")
    for suffix, name in PATHS:
        if path.endswith(suffix):
            return name
    return None


class Unsendable(Exception):
    """A capture that cannot become an exchange body (not UTF-8, an unknown content coding)."""


@dataclass
class Capture:
    """A provider call of a conversation; ``chunks`` grow as the response body is read."""

    format: str
    conversation: Conversation
    request: bytes
    lib: ModuleType | None  # the SDK's HTTP library, for its content decoders (None: botocore)
    endpoint: str = ""  # the path and query the call was sent to (no host)
    # The exchange's identity: the Idempotency-Key of every attempt to post it (and, once live
    # forwarding exists, the `exchange` of its live chunks and the body's `live_exchange`).
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    started_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    started: float = field(default_factory=time.perf_counter)
    status: int = 0
    streamed: bool = False
    binary: bool = False  # a binary stream (BINARY formats): posted as stream_base64
    content_encoding: str = ""
    chunks: list[bytes] = field(default_factory=list)
    ended: bool = False  # the body was read to its end
    finished: bool = False  # closed: nothing more will arrive
    live: bool = False  # its chunks are forwarded as they arrive (_forward.py)
    live_seq: int = 0  # chunks forwarded so far: the next one's seq
    live_mark: int = 0  # the forwarder's number of its last chunk (the exchange waits for it)
    latency_ms: int = 0

    def arrived(self, response: Any) -> None:
        self.status = response.status_code
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        self.streamed = content_type == "text/event-stream"
        if self.format in BINARY and content_type not in ("", "application/json"):
            self.streamed = self.binary = True
        self.content_encoding = response.headers.get("content-encoding", "")

    @property
    def cancelled(self) -> bool:
        """Closed (or broken) before the response ended: only what arrived is kept."""
        return self.finished and not self.ended

    def finish(self) -> bool:
        """Once, when the response is closed; False when it was finished already."""
        if self.finished:
            return False
        self.finished = True
        self.latency_ms = max(0, round((time.perf_counter() - self.started) * 1000))
        return True

    def received(self) -> bytes:
        """The response body as the SDK read it: content-decoded with the SDK's own library."""
        raw = b"".join(self.chunks)
        encoding = self.content_encoding.strip().lower()
        if not encoding or encoding == "identity":
            return raw
        if self.lib is None:
            raise Unsendable(f"content-encoding {self.content_encoding!r} of a botocore call")
        try:
            decoded = self.lib.Response(
                200, headers=[("content-encoding", self.content_encoding)], content=raw
            ).content
        except Exception as exc:  # a cut gzip stream of a cancelled call, an unknown coding
            raise Unsendable(f"content-encoding {self.content_encoding!r}: {exc}") from None
        return bytes(decoded)

    def body(self) -> bytes:
        """The ``POST /api/v1/exchanges`` body, UTF-8 JSON. A stream cancelled before its end
        is sent as far as it arrived, with ``cancelled``; a response body cut off is no message
        (Unsendable)."""
        cancelled = self.cancelled
        if cancelled and not self.streamed:
            raise Unsendable("the response body was cut off before its end (not a stream)")
        try:
            request = self.request.decode("utf-8")
            if self.binary:
                output, response = "stream_base64", base64.b64encode(self.received()).decode()
            else:
                output = "stream" if self.streamed else "response"
                response = _utf8(self.received(), cut=cancelled)
        except UnicodeDecodeError as exc:
            raise Unsendable(f"not UTF-8: {exc}") from None
        body: dict[str, Any] = {
            "conversation": self.conversation.id,
            "customer": self.conversation.customer,
            "format": self.format,
            "request": request,
            output: response,
            "started_at": self.started_at.isoformat(timespec="milliseconds"),
            "latency_ms": self.latency_ms,
        }
        if self.format in ENDPOINT and self.endpoint:
            body["endpoint"] = self.endpoint
        if cancelled:
            body["cancelled"] = True
        if self.live_seq:
            body["live_exchange"] = self.key  # the console closes the live stream
        if self.conversation.labels:
            body["labels"] = dict(self.conversation.labels)
        return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _utf8(data: bytes, *, cut: bool) -> str:
    """``data`` as text. A stream cut off (``cut``) may end inside a character: those last
    bytes never made a character the chat could show, and are left out."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.reason == "unexpected end of data" and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8")
        raise
