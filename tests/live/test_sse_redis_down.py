"""The live stream while Redis is down (a server of the test's own, stopped; never the shared
one): the stream answers, says why it has nothing, asks the browser to come back later and ends
cleanly, never an exception out of the response ("Exception in ASGI application"); and once
Redis is back, the same process streams again (the hub that failed is not kept)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.test import AsyncClient

from conversations.live import state
from tests.live.test_filters import cuts
from tests.live.test_sse import STREAM, feed
from tests.resilience.redis_server import RedisServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture
def own_redis(tmp_path: Path, settings: Any) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    shared, settings.REDIS_URL = settings.REDIS_URL, server.url()
    try:
        yield server
    finally:
        settings.REDIS_URL = shared
        server.stop()


async def _whole(client: AsyncClient, pk: int, most: int = 50) -> tuple[int, bytes]:
    """The stream read to its end (at most ``most`` chunks: a live stream that would go on)."""
    response = await client.get(f"/conversations/{pk}/live")
    if response.status_code != 200:
        return response.status_code, b""
    raw = b""
    stream = response.streaming_content.__aiter__()
    try:
        for _ in range(most):
            raw += await stream.__anext__()
    except StopAsyncIteration:
        pass
    finally:
        await stream.aclose()
    return 200, raw


def test_the_stream_ends_cleanly_while_redis_is_down_and_streams_once_it_is_back(
    world: Any, own_redis: RedisServer
) -> None:
    conversation = world.billing
    agent = world.users["agent"]

    async def go() -> None:
        client = AsyncClient()
        await client.aforce_login(agent)
        await sync_to_async(own_redis.stop)()
        status, raw = await _whole(client, conversation.pk)
        assert status == 200
        assert b"retry: 5000" in raw and b"live streams unavailable" in raw
        assert b"data:" not in raw
        # Redis back, in the same process and event loop: a new stream works.
        await sync_to_async(own_redis.start)()
        await sync_to_async(feed)(conversation, cuts(STREAM.stream, random.Random(3)))
        published = await sync_to_async(state.events_after)(conversation.pk, 0)
        assert published
        response = await client.get(f"/conversations/{conversation.pk}/live")
        assert response.status_code == 200
        stream = response.streaming_content.__aiter__()
        events: list[dict[str, Any]] = []
        try:
            while len(events) < len(published):
                chunk = await stream.__anext__()
                events += [
                    json.loads(line[6:])
                    for line in chunk.decode().split("\n")
                    if line.startswith("data: ")
                ]
        finally:
            await stream.aclose()
        assert events == published

    async_to_sync(go)()
