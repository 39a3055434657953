"""Live conversations: the SSE stream of a conversation's in-flight exchange, and "Live now".

``conversation_live`` is a Django async view: it checks access and writes its audit row through
one audited selector (``conversation_live_read``, in a thread), then relays the conversation's live
events as ``text/event-stream`` (``conversations/live/hub.py``: the Redis side, shared by the
streams of one process). A session holds at most ``LIVE_MAX_STREAMS_PER_SESSION`` streams open in
one web process (429 past it, in the API's error shape). The events are the live filter's
(``conversations/live/``): visible text already redacted, thinking as a duration and a count,
never its text.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
from collections.abc import AsyncIterator
from typing import Any

import django.db
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from conversations.live import hub
from conversations.permissions import require_reader
from conversations.selectors.audited import conversation_live_read, live_now_read

from .ops.metrics import LIVE_VIEWERS


def _last_event_id(request: HttpRequest) -> int:
    raw = request.headers.get("Last-Event-ID") or request.GET.get("after") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        return 0


# The live streams each session holds open in this process (``LIVE_MAX_STREAMS_PER_SESSION``):
# counted from the view's check to the stream's end, in the event loop's one thread.
_streams: collections.Counter[str] = collections.Counter()


def _give_back(session: str) -> None:
    """One of the session's streams ended (or never started): a session holding none leaves
    the counter, so it does not grow with every session ever seen."""
    _streams[session] -= 1
    if _streams[session] <= 0:
        del _streams[session]


async def _relay(pk: int, after: int, session: str = "") -> AsyncIterator[bytes]:
    """The hub's relay, counted in the viewers' gauge and in its session's streams while it
    streams."""
    LIVE_VIEWERS.inc()
    try:
        async with contextlib.aclosing(hub.relay(pk, after)) as frames:
            async for frame in frames:
                yield frame
    finally:
        LIVE_VIEWERS.dec()
        _give_back(session)


def _too_many_streams() -> JsonResponse:
    """429 in the API's error shape: a session that holds ``LIVE_MAX_STREAMS_PER_SESSION``
    live streams open (each one an audit row) gets no more until one ends."""
    limit = settings.LIVE_MAX_STREAMS_PER_SESSION
    body = {
        "error": "too_many_streams",
        "detail": f"this session has {limit} live streams open; close one (another tab) first",
        "field": None,
        "at": None,
    }
    response = JsonResponse(body, status=429)
    response["Retry-After"] = "5"
    response["Cache-Control"] = "no-store"
    return response


def _subscribe(user: Any, pk: int) -> int:
    """The audited selector, then this thread's database connections back (to the pool, or
    closed): a stream lasts as long as the viewer watches, and must hold no connection."""
    try:
        return conversation_live_read(user=user, id=pk)
    finally:
        for conn in django.db.connections.all(initialized_only=True):
            if not conn.in_atomic_block:  # a test's transaction stays
                conn.close_if_unusable_or_obsolete()


async def conversation_live(request: HttpRequest, pk: int) -> HttpResponseBase:
    user = await request.auser()
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not isinstance(request, ASGIRequest):
        # Under a WSGI server a stream would hold a worker for as long as it is watched: the
        # page works without it (204 tells EventSource not to reconnect).
        return HttpResponse(status=204)
    session = hashlib.sha256((request.session.session_key or "").encode()).hexdigest()[:16]
    if _streams[session] >= settings.LIVE_MAX_STREAMS_PER_SESSION:
        return _too_many_streams()  # before the audited selector: no audit row for it
    _streams[session] += 1  # (the relay's end gives it back)
    try:
        await sync_to_async(_subscribe)(user, pk)
    except BaseException:
        _give_back(session)
        raise
    response = StreamingHttpResponse(_relay(pk, _last_event_id(request), session))
    response["Content-Type"] = "text/event-stream; charset=utf-8"
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"
    return response


@login_required
def live_now(request: HttpRequest) -> HttpResponse:
    """The conversations streaming an answer; the list alone for the page's own refresh
    (``HX-Request``: static/console/live-now.js, told by ``live_now_stream``)."""
    view = live_now_read(user=request.user)
    context = {"conversations": view.conversations, "idle_seconds": settings.LIVE_IDLE_SECONDS}
    partial = request.headers.get("HX-Request") == "true"
    template = "console/_live_now_list.html" if partial else "console/live_now.html"
    response = render(request, template, context)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _may_read(user: Any) -> None:
    require_reader(user)


async def live_now_stream(request: HttpRequest) -> HttpResponseBase:
    """``GET /live/stream``: an SSE ``now`` event whenever the set of live conversations
    changes (``hub.watch_now``), so the Live now page refreshes its list without a reload. It
    names no conversation (the list comes through ``live_now``'s audited selector, audited), so it
    writes no audit row; it counts among the session's streams like a conversation's."""
    user = await request.auser()
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    await sync_to_async(_may_read)(user)
    if not isinstance(request, ASGIRequest):
        return HttpResponse(status=204)  # under WSGI the page keeps its list as loaded
    session = hashlib.sha256((request.session.session_key or "").encode()).hexdigest()[:16]
    if _streams[session] >= settings.LIVE_MAX_STREAMS_PER_SESSION:
        return _too_many_streams()
    _streams[session] += 1
    response = StreamingHttpResponse(_counted(hub.watch_now(), session))
    response["Content-Type"] = "text/event-stream; charset=utf-8"
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"
    return response


async def _counted(frames: AsyncIterator[bytes], session: str) -> AsyncIterator[bytes]:
    try:
        async for frame in frames:
            yield frame
    finally:
        _give_back(session)
