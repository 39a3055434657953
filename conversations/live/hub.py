"""The live streams' pub/sub hub: the Redis side of ``GET /conversations/<pk>/live``.

``relay(pk, after)`` yields a conversation's live events as SSE frames: the kept events after
``after`` (the viewer's ``Last-Event-ID``) first, then the conversation's channel, without
duplicates (subscribed before the backlog is read, ids skipped up to the last sent). One event is
the relay's own: ``idle`` (no id), when the exchange last streamed has had its state expire
without being closed by its POST (``_still_live``, asked at a keepalive).

The streams of one event loop (one uvicorn process) share one Redis connection (``Hub``): one
subscription per watched conversation, each message parsed and framed once and handed to its
viewers; a viewer sends what waits for it in one write. A viewer more than
``MAX_PENDING_FRAMES`` behind, or every viewer when the subscription's connection fails, has its
stream ended: the browser's EventSource reconnects with ``Last-Event-ID``.

The view (``console/live_views.py``) checks access and audits; this module reads Redis only
(``state.py``'s keys and channel).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections import deque
from collections.abc import AsyncGenerator
from typing import Any

import redis.asyncio as aioredis
from django.conf import settings
from redis.exceptions import RedisError

from . import state

logger = logging.getLogger(__name__)

# A comment line after at most twice this long without an event keeps proxies from closing an
# idle stream.
KEEPALIVE_SECONDS = 15.0
# Frames one stream may have waiting; a reader further behind is cut off (it resumes from the
# event log with Last-Event-ID, as after any reconnect).
MAX_PENDING_FRAMES = 2000


def _frame(event: dict[str, Any]) -> bytes:
    """An event as SSE; with its id when it has one (the log's events: ``Last-Event-ID``)."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    head = f"id: {event['id']}\n" if "id" in event else ""
    return f"{head}event: live\ndata: {data}\n\n".encode()


# A frame as the hub hands it to viewers: the event's id, the frame, the exchange's label and
# whether the event closes that exchange (the relay's idle notice follows the last two).
_Item = tuple[int, bytes, str, bool]


def _item(event: dict[str, Any]) -> _Item:
    return (
        int(event["id"]),
        _frame(event),
        str(event.get("exchange", "")),
        event["type"] == "closed",
    )


async def _still_live(r: Any, pk: int, label: str) -> bool:
    """Whether an exchange of the conversation whose label is ``label`` still has its state in
    Redis (it expires ``LIVE_IDLE_SECONDS`` after the exchange's last chunk: the idle close)."""
    opened: Any = await r.smembers(state.key("open", pk))
    names = [m.decode() if isinstance(m, bytes) else m for m in opened]
    alive = [h for h in names if h.startswith(label)]
    return bool(alive) and bool(await r.exists(*(state.key("x", h) for h in alive)))


def _idle_frame(label: str) -> bytes:
    """The stream's notice that an exchange went quiet and was closed without its POST (the chat
    backend stopped sending): no id, it is not in the log; the page stops its "Thinking…"."""
    return _frame({"type": "idle", "exchange": label, "seconds": settings.LIVE_IDLE_SECONDS})


class Viewer:
    """One stream's frames not yet sent, ``(id, frame)`` in the channel's order."""

    __slots__ = ("ended", "frames", "keepalive", "quiet", "wake")

    def __init__(self) -> None:
        self.frames: list[_Item] = []
        self.wake = asyncio.Event()
        self.ended = False
        self.quiet = False  # nothing sent to the viewer since the hub's last tick
        self.keepalive = False

    def push(self, item: _Item) -> None:
        if len(self.frames) >= MAX_PENDING_FRAMES:
            # Too slow a reader: its stream ends, its EventSource resumes from the log.
            self.end()
            return
        self.frames.append(item)
        self.wake.set()

    def sent(self) -> None:
        """The relay wrote frames to the viewer: no keepalive is due this period (frames pushed
        but dropped, e.g. ids at or below its ``Last-Event-ID``, do not count)."""
        self.quiet = False

    def tick(self) -> None:
        if self.quiet:
            self.keepalive = True
            self.wake.set()
        self.quiet = True

    def end(self) -> None:
        self.ended = True
        self.frames = []
        self.wake.set()

    async def take(self) -> list[_Item] | None:
        """The frames waiting (all of them); [] for a keepalive; None once ended."""
        if not self.frames and not self.ended and not self.keepalive:
            await self.wake.wait()
        self.wake.clear()
        self.keepalive = False
        if self.ended:
            return None
        frames, self.frames = self.frames, []
        return frames


class Hub:
    """The Redis subscription of every live stream an event loop serves (under uvicorn: one per
    web process), one channel per watched conversation: each message is parsed and framed once,
    then handed to the viewers of its channel. Lives while it has viewers."""

    def __init__(self, url: str) -> None:
        self.redis = aioredis.from_url(url)
        self.pubsub = self.redis.pubsub()
        self.channels: dict[bytes, set[Viewer]] = {}
        # Per channel, the SUBSCRIBE / UNSUBSCRIBE replies awaited, in the order sent (Redis
        # answers in order): a viewer reads the backlog once its channel's SUBSCRIBE is answered.
        self.replies: dict[bytes, deque[asyncio.Future[None]]] = {}
        self.viewers = 0
        self.started: asyncio.Future[None] | None = None
        self.reader: asyncio.Task[None] | None = None
        self.ticker: asyncio.Task[None] | None = None
        self.failed: BaseException | None = None

    async def _start(self) -> None:
        try:
            await self.pubsub.connect()
        except BaseException as exc:
            # Redis down when the first stream came: this hub is dropped, so the next stream
            # (Redis back) makes a new one instead of finding this one's failure for ever.
            self._fail(exc)
            raise
        self.reader = asyncio.create_task(self._read())
        self.ticker = asyncio.create_task(self._tick())

    async def _tick(self) -> None:
        """A keepalive for each stream that had nothing to send for a whole period (one timer
        for every viewer, not one per wait)."""
        while True:
            await asyncio.sleep(KEEPALIVE_SECONDS)
            for viewers in self.channels.values():
                for v in viewers:
                    v.tick()

    async def join(self, name: str, viewer: Viewer) -> None:
        """``viewer`` gets every message published on ``name`` from the time this returns."""
        self.viewers += 1
        if self.started is None:
            self.started = asyncio.ensure_future(self._start())
        await asyncio.shield(self.started)
        if self.failed is not None:
            raise self.failed
        channel = name.encode()
        viewers = self.channels.get(channel)
        if viewers is not None:
            viewers.add(viewer)
            pending = self.replies.get(channel)
            if pending:  # subscribed, not yet answered
                await self._answer(pending[-1])
            return
        self.channels[channel] = {viewer}
        answered = asyncio.get_running_loop().create_future()
        self.replies.setdefault(channel, deque()).append(answered)
        await self.pubsub.execute_command("SUBSCRIBE", channel)
        await self._answer(answered)

    async def _answer(self, answered: asyncio.Future[None]) -> None:
        """Until Redis answered, or the reader ended (failed, or its loop is closing)."""
        assert self.reader is not None
        await asyncio.wait({answered, self.reader}, return_when=asyncio.FIRST_COMPLETED)
        if answered.done():
            answered.result()
        elif self.failed is not None:
            raise self.failed
        else:
            raise ConnectionError("the live streams' Redis reader stopped")

    async def leave(self, name: str, viewer: Viewer) -> None:
        """``viewer`` gets nothing more; the channel's last viewer unsubscribes it (answered
        before this returns), the hub's last closes the hub."""
        self.viewers -= 1
        channel = name.encode()
        viewers = self.channels.get(channel)
        if viewers is not None:
            viewers.discard(viewer)
            if not viewers:
                del self.channels[channel]
                if self.failed is None:
                    answered = asyncio.get_running_loop().create_future()
                    self.replies.setdefault(channel, deque()).append(answered)
                    with contextlib.suppress(Exception):  # the hub failed meanwhile
                        await self.pubsub.execute_command("UNSUBSCRIBE", channel)
                        await self._answer(answered)
        if self.viewers <= 0:
            await self.close()

    async def _read(self) -> None:
        try:
            while True:
                response: Any = await self.pubsub.parse_response(block=True)
                if not isinstance(response, list) or len(response) < 3:
                    continue
                kind, channel, data = response[0], response[1], response[2]
                if kind == b"message":
                    viewers = self.channels.get(channel)
                    if not viewers:
                        continue
                    try:
                        event = json.loads(data)
                        item = _item(event)
                    except (ValueError, TypeError, KeyError):
                        continue  # not one of state.commit's events
                    for v in tuple(viewers):
                        v.push(item)
                elif kind in (b"subscribe", b"unsubscribe"):
                    waiting = self.replies.get(channel)
                    if waiting:
                        answered = waiting.popleft()
                        if not answered.done():
                            answered.set_result(None)
                        if not waiting:
                            del self.replies[channel]
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # Redis gone: every stream ends, each viewer reconnects
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        self.failed = exc
        if self.ticker is not None:
            self.ticker.cancel()
        if _hubs.get(asyncio.get_running_loop()) is self:
            del _hubs[asyncio.get_running_loop()]
        for viewers in self.channels.values():
            for v in viewers:
                v.end()
        for waiting in self.replies.values():
            for answered in waiting:
                if not answered.done():
                    answered.set_exception(exc)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        if _hubs.get(loop) is self:
            del _hubs[loop]
        for task in (self.reader, self.ticker):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        await self.pubsub.aclose()
        await self.redis.aclose()


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()


def _hub() -> Hub:
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = Hub(settings.REDIS_URL)
    return hub


# What a stream says when Redis cannot be reached (at its start, or while it streams): a comment
# and a longer reconnection delay, then its end. The browser's EventSource reconnects after it;
# an exception out of the stream would be a broken response ("Exception in ASGI application").
UNAVAILABLE = b"retry: 5000\n\n: live streams unavailable for now (Redis cannot be reached)\n\n"


async def relay(pk: int, after: int) -> AsyncGenerator[bytes, None]:
    hub = _hub()
    viewer = Viewer()
    name = state.channel(pk)
    try:
        async with contextlib.aclosing(_frames(hub, viewer, name, pk, after)) as frames:
            async for frame in frames:
                yield frame
    except (RedisError, OSError) as exc:
        logger.warning("live stream of conversation %s ended: Redis (%s)", pk, type(exc).__name__)
        yield UNAVAILABLE
    finally:
        await asyncio.shield(hub.leave(name, viewer))


async def _frames(
    hub: Hub, viewer: Viewer, name: str, pk: int, after: int
) -> AsyncGenerator[bytes, None]:
    """The stream itself: the backlog after ``after``, then the channel's events."""
    await hub.join(name, viewer)
    last = after
    yield b"retry: 2000\n\n"
    kept: Any = await hub.redis.lrange(state.key("log", pk), 0, -1)
    backlog = [json.loads(raw) for raw in kept]
    if after == 0:
        # A new viewer: the exchanges already closed are on the page as stored turns.
        closed = {e["exchange"] for e in backlog if e["type"] == "closed"}
        backlog = [e for e in backlog if e["exchange"] not in closed]
    # The exchange whose events were sent last, unless they closed it: when its state in
    # Redis expires (no chunk for LIVE_IDLE_SECONDS, no POST), the viewer is told so.
    open_label = ""
    frames = []
    for event in backlog:
        if event["id"] > last:
            last = event["id"]
            frames.append(_frame(event))
            open_label = "" if event["type"] == "closed" else str(event.get("exchange", ""))
    if frames:
        viewer.sent()
        yield b"".join(frames)
    while True:
        waiting = await viewer.take()
        if waiting is None:
            return
        if not waiting:
            if open_label and not await _still_live(hub.redis, pk, open_label):
                yield _idle_frame(open_label)
                open_label = ""
                continue
            yield b": keepalive\n\n"
            continue
        fresh = []
        for event_id, frame, label, closes in waiting:
            if event_id > last:
                last = event_id
                fresh.append(frame)
                open_label = "" if closes else label
        if fresh:
            viewer.sent()
            yield b"".join(fresh)


# "Live now"'s stream: an event with no data (which conversations, the page reads through its
# audited selector: access and audit stay there).
NOW_FRAME = b"event: now\ndata: {}\n\n"


async def _live_set(r: Any) -> set[bytes]:
    since = time.time() - settings.LIVE_IDLE_SECONDS
    members: Any = await r.zrangebyscore(state.key("now"), since, "+inf")
    return set(members)


async def watch_now() -> AsyncGenerator[bytes, None]:
    """The Live now page's stream: a ``now`` event each time the set of conversations streaming
    an answer changes. The channel says when one joins or closes; one that goes quiet (its state
    expires, no message) is noticed at the next keepalive tick. One subscription per web
    process, like a conversation's."""
    hub = _hub()
    viewer = Viewer()
    name = state.channel("now")
    try:
        await hub.join(name, viewer)
        last = await _live_set(hub.redis)  # before the first frame: a change after it counts
        yield b"retry: 2000\n\n"
        while True:
            waiting = await viewer.take()
            if waiting is None:
                return
            current = await _live_set(hub.redis)
            if current != last:
                last = current
                viewer.sent()
                yield NOW_FRAME
            elif not waiting:
                yield b": keepalive\n\n"
    except (RedisError, OSError) as exc:
        logger.warning("the live-now stream ended: Redis (%s)", type(exc).__name__)
        yield UNAVAILABLE
    finally:
        await asyncio.shield(hub.leave(name, viewer))
