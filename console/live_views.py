"""Live conversations: the SSE stream of a conversation's in-flight exchange, and "Live now".

``conversation_live`` is a Django async view: it checks access and writes its audit row through
one read service (``conversation_live_read``, in a thread), then relays the conversation's Redis
channel as ``text/event-stream``. The events are the live filter's (``conversations/live/``):
visible text already redacted, thinking as a duration and a count, never its text. A reconnect
sends ``Last-Event-ID`` and gets the kept events after it first, then the channel, without
duplicates (subscribed before the backlog is read, ids skipped up to the last sent).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import django.db
import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render

from conversations.live import state
from conversations.reads import conversation_live_read, live_now_read

# A comment line this often keeps proxies from closing an idle stream.
KEEPALIVE_SECONDS = 15.0


def _frame(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"id: {event['id']}\nevent: live\ndata: {data}\n\n".encode()


def _last_event_id(request: HttpRequest) -> int:
    raw = request.headers.get("Last-Event-ID") or request.GET.get("after") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        return 0


async def _relay(pk: int, after: int) -> AsyncIterator[bytes]:
    r = aioredis.from_url(settings.REDIS_URL)
    pubsub = r.pubsub()
    try:
        await pubsub.subscribe(state.channel(pk))
        last = after
        yield b"retry: 2000\n\n"
        kept: Any = await r.lrange(state.key("log", pk), 0, -1)
        backlog = [json.loads(raw) for raw in kept]
        if after == 0:
            # A new viewer: the exchanges already closed are on the page as stored turns.
            closed = {e["exchange"] for e in backlog if e["type"] == "closed"}
            backlog = [e for e in backlog if e["exchange"] not in closed]
        for event in backlog:
            if event["id"] > last:
                last = event["id"]
                yield _frame(event)
        while True:
            message = await pubsub.get_message(
                ignore_subscribe_messages=True, timeout=KEEPALIVE_SECONDS
            )
            if message is None:
                yield b": keepalive\n\n"
                continue
            event = json.loads(message["data"])
            if event["id"] > last:
                last = event["id"]
                yield _frame(event)
    finally:
        await asyncio.shield(_close(r, pubsub))


async def _close(r: Any, pubsub: Any) -> None:
    await pubsub.aclose()
    await r.aclose()


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
