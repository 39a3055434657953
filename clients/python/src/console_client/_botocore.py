"""botocore clients (boto3's ``bedrock-runtime``): their calls captured through botocore's own
event hooks, since botocore sends over urllib3, not httpx.

``before-call`` (the serialised request: its body, exactly the bytes botocore sends, and its
``url_path``, the path with the model id percent-encoded as sent) makes a ``Capture`` when the
path is a format's (the generated ``_capture_table``) and a conversation is open; ``after-call``
gives it the response: a JSON body whole, or for an event stream (``application/vnd.amazon.
eventstream``) a tee on the raw stream botocore's ``EventStream`` reads, so every byte the
caller's iteration reads is captured as received and the exchange is posted when the stream
ends or is closed (as ``stream_base64``, with its ``endpoint``).

Nothing here may raise into the caller's path: every step is guarded, as in ``_transport.py``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import _context
from ._capture import Capture, format_for
from ._transport import _finish

if TYPE_CHECKING:
    from ._delivery import Console

log = logging.getLogger("console_client")
_KEY = "console_client.capture"


def is_botocore_client(client: Any) -> bool:
    """A botocore client (what ``boto3.client(...)`` returns): it has ``meta.events``, the
    hooks of its calls."""
    meta = getattr(client, "meta", None)
    return hasattr(meta, "events") and hasattr(meta, "service_model")


def install(client: Any, console: Console) -> None:
    """Hook the client's calls (again for another console: the hooks are replaced)."""
    events = client.meta.events
    service = client.meta.service_model.service_id.hyphenize()
    events.register(
        f"before-call.{service}",
        functools.partial(_before, console),
        unique_id="console_client.before",
        unique_id_uses_count=False,
    )
    events.register(
        f"after-call.{service}",
        functools.partial(_after, console),
        unique_id="console_client.after",
        unique_id_uses_count=False,
    )


def _before(console: Console, model: Any, params: Any, context: Any, **_: Any) -> None:
    try:
        url_path = str(params.get("url_path", ""))
        fmt = format_for(model.http.get("method", "POST"), url_path.partition("?")[0])
        if fmt is None:
            return
        conversation = _context.current()
        if conversation is None:
            console.uncaptured()
            return
        body = params.get("body", b"")
        body = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        context[_KEY] = Capture(
            format=fmt, conversation=conversation, request=body, lib=None, endpoint=url_path
        )
    except Exception:
        log.exception("console_client: could not capture a request; passing it on")


def _after(console: Console, http_response: Any, parsed: Any, context: Any, **_: Any) -> None:
    capture: Capture | None = context.pop(_KEY, None) if isinstance(context, dict) else None
    if capture is None:
        return
    try:
        capture.arrived(http_response)
        if not 200 <= capture.status < 300:
            console.skipped(f"the provider answered {capture.status}")
            return
        stream = _event_stream(parsed) if capture.binary else None
        if stream is None:
            capture.chunks.append(bytes(http_response.content))
            capture.ended = True
            _finish(capture, console)
            return
        stream._raw_stream = _Tee(stream._raw_stream, capture, console)
    except Exception:
        log.exception("console_client: could not capture a response; passing it on")


def _event_stream(parsed: Any) -> Any:
    """The ``EventStream`` of a parsed response (its one streaming member), or None."""
    for value in parsed.values() if isinstance(parsed, dict) else ():
        if hasattr(value, "_raw_stream"):
            return value
    return None


class _Tee:
    """The raw stream botocore's ``EventStream`` reads, each chunk kept as it passes."""

    def __init__(self, inner: Any, capture: Capture, console: Console) -> None:
        self._inner, self._capture, self._console = inner, capture, console

    def stream(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner.stream():
                self._capture.chunks.append(chunk)
                yield chunk
            self._capture.ended = True
        finally:
            _finish(self._capture, self._console)

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            _finish(self._capture, self._console)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
