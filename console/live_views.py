"""Live conversations: the SSE stream of a conversation's in-flight exchange, and "Live now".

``conversation_live`` is a Django async view: it checks access and writes its audit row through
one read service (``conversation_live_read``, in a thread), then relays the conversation's live
events as ``text/event-stream`` (``conversations/live/hub.py``: the Redis side, shared by the
streams of one process). The events are the live filter's (``conversations/live/``): visible text
already redacted, thinking as a duration and a count, never its text.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import django.db
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render

from conversations.live import hub
from conversations.reads import conversation_live_read, live_now_read

from .ops.metrics import LIVE_VIEWERS


def _last_event_id(request: HttpRequest) -> int:
    raw = request.headers.get("Last-Event-ID") or request.GET.get("after") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        return 0


async def _relay(pk: int, after: int) -> AsyncIterator[bytes]:
    """The hub's relay, counted in the viewers' gauge while it streams."""
    LIVE_VIEWERS.inc()
    try:
        async with contextlib.aclosing(hub.relay(pk, after)) as frames:
            async for frame in frames:
                yield frame
    finally:
        LIVE_VIEWERS.dec()


def _subscribe(user: Any, pk: int) -> int:
    """The read service, then this thread's database connections back (to the pool, or
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
    await sync_to_async(_subscribe)(user, pk)
    response = StreamingHttpResponse(_relay(pk, _last_event_id(request)))
    response["Content-Type"] = "text/event-stream; charset=utf-8"
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"
    return response


@login_required
def live_now(request: HttpRequest) -> HttpResponse:
    view = live_now_read(user=request.user)
    context = {"conversations": view.conversations, "idle_seconds": settings.LIVE_IDLE_SECONDS}
    return render(request, "console/live_now.html", context)
