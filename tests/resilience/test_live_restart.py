"""Case 11: live event ids survive a Redis restart without persistence (a new counter starts at
the time, above every id given before): a viewer resuming with its ``Last-Event-ID`` after the
restart receives every event published since. And keepalives follow what the viewer was sent,
not what was pushed to it and dropped."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from conversations.live import hub, state
from tests.live.test_filters import cuts, published_blocks
from tests.live.test_sse import STREAM, feed, read_sse
from tests.resilience.redis_server import RedisServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def own_redis(tmp_path: Path, settings: Any) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    shared, settings.REDIS_URL = settings.REDIS_URL, server.url()
    try:
        yield server
    finally:
        settings.REDIS_URL = shared  # (the live prefix's clean-up runs after this)
        server.stop()


@pytest.mark.slow
def test_a_viewer_resuming_after_a_redis_restart_gets_every_event(
    world: Any, own_redis: RedisServer, client: Any
) -> None:
    conversation = world.billing
    feed(conversation, cuts(STREAM.stream, random.Random(1)), exchange="before")
    before = state.events_after(conversation.pk, 0)
    assert before
    last = before[-1]["id"]
    own_redis.restart()  # the counter, the log, the states: gone
    assert state.events_after(conversation.pk, 0) == []
    feed(conversation, cuts(STREAM.stream, random.Random(2)), exchange="after")
    published = state.events_after(conversation.pk, 0)
    assert published and all(e["id"] > last for e in published)
    status, _, events, _ = read_sse(
        world.users["agent"],
        conversation.pk,
        until=lambda es: len(es) >= len(published),
        **{"Last-Event-ID": str(last)},
    )
    assert status == 200
    assert events == published
    assert published_blocks(events) == list(STREAM.visible)
    client.force_login(world.users["agent"])
    assert client.get(f"/conversations/{conversation.pk}/").status_code == 200


def test_ids_keep_rising_when_the_counter_is_lost(world: Any) -> None:
    """The same without a restart: the counter's key deleted (as a restart or its expiry
    would), the next id is still above the last."""
    conversation = world.billing
    pieces = cuts(STREAM.stream, random.Random(3))
    half = len(pieces) // 2
    feed(conversation, pieces[:half])
    last = state.events_after(conversation.pk, 0)[-1]["id"]
    state.client().delete(state.key("n", conversation.pk), state.key("log", conversation.pk))
    feed(conversation, pieces[half:], half)
    after = state.events_after(conversation.pk, 0)
    assert after and min(e["id"] for e in after) > last


def test_frames_dropped_by_the_relay_do_not_hold_back_keepalives() -> None:
    """A viewer whose frames were all at or below its Last-Event-ID was sent nothing: the next
    tick gives it a keepalive (it used to count what was pushed to it)."""

    async def go() -> list[Any]:
        viewer = hub.Viewer()
        viewer.tick()  # a period begins
        viewer.push((1, b"f", "x", False))  # pushed, then dropped by the relay
        first = await viewer.take()  # the relay drops it: nothing is sent
        viewer.tick()  # nothing sent in that period
        assert viewer.keepalive  # (it used to be pushed-to, so "busy": no keepalive)
        second = await viewer.take()
        viewer.sent()  # now it was sent something
        viewer.tick()
        viewer.push((2, b"g", "x", False))
        return [first, second, await viewer.take()]

    first, second, third = async_to_sync(go)()
    assert first == [(1, b"f", "x", False)]
    assert second == []  # the keepalive
    assert third == [(2, b"g", "x", False)]
