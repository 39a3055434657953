"""The transport that wraps an SDK client's own: it passes every request through untouched and
tees the response body of each provider call into a ``Capture``, chunk by chunk, as the SDK
reads it (no buffering, no added wait: a chunk is appended to a list and handed on).

The classes are built per HTTP library (``classes(lib)``): httpx2 and httpx have the same API
but distinct base classes, and an SDK accepts only its own library's.

Nothing here may raise into the chat path. Every step of ours is guarded; the inner transport's
own exceptions (the provider unreachable, a read error) pass through unchanged, as without us.

Live forwarding (``live=True``, ``_forward.py``) hooks in at ``_tee`` / ``_atee``: each chunk of
a stream is handed to the console's forwarder as it arrives, under the capture's ``key``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import _context
from ._capture import Capture, format_for

if TYPE_CHECKING:
    from ._delivery import Console

log = logging.getLogger("console_client")


def _plan(request: Any, console: Console, lib: ModuleType) -> Capture | None:
    """A capture for a provider call made inside ``conversation()``; None for anything else."""
    fmt = format_for(request.method, request.url.path)
    if fmt is None:
        return None
    conversation = _context.current()
    if conversation is None:
        console.uncaptured()
        return None
    try:
        content = request.content
    except lib.RequestNotRead:  # a streamed upload: not a JSON provider call
        console.skipped("the request body is a stream")
        return None
    # The path and query as sent (raw_path: percent-encoding kept), for formats that read the
    # model from it.
    endpoint = request.url.raw_path.decode("ascii", "replace")
    return Capture(
        format=fmt, conversation=conversation, request=bytes(content), lib=lib, endpoint=endpoint
    )


def _finish(capture: Capture, console: Console) -> None:
    try:
        if capture.finish():
            if capture.live:
                console.live_done(capture)
            console.submit(capture)
    except Exception:
        log.exception("console_client: could not queue an exchange")


def _tee(inner: Any, capture: Capture, console: Console) -> Iterator[bytes]:
    try:
        for chunk in inner:
            capture.chunks.append(chunk)
            if capture.live:
                console.live_chunk(capture, chunk)
            yield chunk
        capture.ended = True
    finally:
        # Read to the end, broken, or abandoned (closed mid-way): what arrived is posted.
        _finish(capture, console)


async def _atee(inner: Any, capture: Capture, console: Console) -> AsyncIterator[bytes]:
    try:
        async for chunk in inner:
            capture.chunks.append(chunk)
            if capture.live:
                console.live_chunk(capture, chunk)
            yield chunk
        capture.ended = True
    finally:
        _finish(capture, console)


@functools.cache
def classes(lib: ModuleType) -> tuple[type, type]:
    """(CaptureTransport, AsyncCaptureTransport) for ``lib`` (httpx2 or httpx)."""

    class TeeStream(lib.SyncByteStream):  # type: ignore[name-defined]
        def __init__(self, inner: Any, capture: Capture, console: Console) -> None:
            self._inner = inner
            self._capture = capture
            self._console = console

        def __iter__(self) -> Iterator[bytes]:
            return _tee(self._inner, self._capture, self._console)

        def close(self) -> None:
            try:
                self._inner.close()
            finally:
                _finish(self._capture, self._console)

    class AsyncTeeStream(lib.AsyncByteStream):  # type: ignore[name-defined]
        def __init__(self, inner: Any, capture: Capture, console: Console) -> None:
            self._inner = inner
            self._capture = capture
            self._console = console

        def __aiter__(self) -> AsyncIterator[bytes]:
            return _atee(self._inner, self._capture, self._console)

        async def aclose(self) -> None:
            try:
                await self._inner.aclose()
            finally:
                _finish(self._capture, self._console)

    def _wrap(response: Any, capture: Capture | None, console: Console, stream: type) -> Any:
        if capture is None:
            return response
        try:
            capture.arrived(response)
            if not 200 <= capture.status < 300:
                # A provider error is the SDK's to raise; the console takes only exchanges.
                console.skipped(f"the provider answered {capture.status}")
                return response
            encoding = capture.content_encoding.strip().lower()
            # Only SSE text as it is on the wire can be forwarded (not gzip'd bytes).
            capture.live = (
                console.options.live
                and capture.streamed
                and not capture.binary  # the live API carries text chunks
                and encoding in ("", "identity")
            )
            response.stream = stream(response.stream, capture, console)
        except Exception:
            log.exception("console_client: could not capture a response; passing it on")
        return response

    class CaptureTransport(lib.BaseTransport):  # type: ignore[name-defined]
        def __init__(self, inner: Any, console: Console) -> None:
            self.inner = inner
            self.console = console

        def handle_request(self, request: Any) -> Any:
            try:
                capture = _plan(request, self.console, lib)
            except Exception:
                log.exception("console_client: could not capture a request; passing it on")
                capture = None
            response = self.inner.handle_request(request)
            return _wrap(response, capture, self.console, TeeStream)

        def close(self) -> None:
            self.inner.close()

        def __enter__(self) -> Any:
            self.inner.__enter__()
            return self

        def __exit__(self, *args: Any) -> None:
            self.inner.__exit__(*args)

    class AsyncCaptureTransport(lib.AsyncBaseTransport):  # type: ignore[name-defined]
        def __init__(self, inner: Any, console: Console) -> None:
            self.inner = inner
            self.console = console

        async def handle_async_request(self, request: Any) -> Any:
            try:
                capture = _plan(request, self.console, lib)
            except Exception:
                log.exception("console_client: could not capture a request; passing it on")
                capture = None
            response = await self.inner.handle_async_request(request)
            return _wrap(response, capture, self.console, AsyncTeeStream)

        async def aclose(self) -> None:
            await self.inner.aclose()

        async def __aenter__(self) -> Any:
            await self.inner.__aenter__()
            return self

        async def __aexit__(self, *args: Any) -> None:
            await self.inner.__aexit__(*args)

    return CaptureTransport, AsyncCaptureTransport


def install(http_client: Any, lib: ModuleType, console: Console) -> int:
    """Wrap the transports of an httpx2/httpx client (the default one and any mounted, e.g. for
    proxies) in place; returns how many were wrapped. Already wrapped ones get ``console``.

    httpx has no public way to change a client's transport after it is built, so this sets its
    ``_transport`` and ``_mounts``; tests run it against both libraries.
    """
    sync, async_ = classes(lib)
    wrapper = async_ if isinstance(http_client, lib.AsyncClient) else sync
    count = 0

    def wrapped(transport: Any) -> Any:
        nonlocal count
        count += 1
        if isinstance(transport, (sync, async_)):
            already: Any = transport
            already.console = console
            return already
        return wrapper(transport, console)

    http_client._transport = wrapped(http_client._transport)
    mounts = getattr(http_client, "_mounts", {})
    for pattern, transport in list(mounts.items()):
        if transport is not None:  # None: "no proxy for these URLs", the default transport
            mounts[pattern] = wrapped(transport)
    return count
