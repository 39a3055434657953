"""GET /conversations/<pk>/live: an SSE stream of the visible events, for users who may see the
conversation (404 otherwise), audited once per subscription, resumed with Last-Event-ID."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.test import AsyncClient

from audit.models import AuditEvent
from conversations.live.body import ChunkInput
from conversations.live.services import live_chunk_ingest, live_exchange_close
from tests.live.streams import STREAMS_BY_NAME
from tests.live.test_filters import assert_nothing_of, cuts, never_strings, published_blocks

pytestmark = pytest.mark.django_db
STREAM = STREAMS_BY_NAME["vercel-ai__anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt#0"]


def feed(conversation: Any, pieces: list[str], start: int = 0, exchange: str = "call-1") -> None:
    for seq, piece in enumerate(pieces, start):
        data = ChunkInput(
            conversation=conversation.external_id,
            customer=conversation.customer_external_id,
            format=STREAM.format,
            exchange=exchange,
            seq=seq,
            chunk=piece,
        )
        live_chunk_ingest(conversation_id=conversation.pk, data=data)


def read_sse(
    user: Any,
    pk: int,
    *,
    until: Callable[[list[dict[str, Any]]], bool],
    during: Any = None,
    **headers: Any,
) -> tuple[int, str, list[dict[str, Any]], bytes]:
    async def go() -> tuple[int, str, list[dict[str, Any]], bytes]:
        client = AsyncClient()
        await client.aforce_login(user)
        response = await client.get(f"/conversations/{pk}/live", headers=headers)
        if response.status_code != 200:
            return response.status_code, response.get("Content-Type", ""), [], b""
        raw = b""
        events: list[dict[str, Any]] = []
        stream = response.streaming_content.__aiter__()
        first = True
        while not until(events):
            chunk = await stream.__anext__()
            raw += chunk
            for line in chunk.decode().split("\n"):
                if line.startswith("data: "):
                    events.append(json.loads(line[6:]))
            if first and during is not None:
                first = False
                await sync_to_async(during)()
        await stream.aclose()
        return 200, response["Content-Type"], events, raw

    return async_to_sync(go)()


def ended(events: list[dict[str, Any]]) -> bool:
    return any(e["type"] in ("finished", "error") for e in events)


def test_a_viewer_sees_the_visible_events_and_no_thought(world: Any) -> None:
    conversation = world.billing
    pieces = cuts(STREAM.stream, random.Random(2))
    half = len(pieces) // 2
    feed(conversation, pieces[:half])  # before the viewer came: the backlog
    status, ctype, events, raw = read_sse(
        world.users["agent"],
        conversation.pk,
        until=ended,
        during=lambda: feed(conversation, pieces[half:], half),  # while it watches
    )
    assert (status, ctype) == (200, "text/event-stream; charset=utf-8")
    assert published_blocks(events) == list(STREAM.visible)
    assert [e["id"] for e in events] == sorted({e["id"] for e in events})
    assert_nothing_of(list(never_strings(STREAM)), raw.decode(), STREAM.visible)
    assert AuditEvent.objects.filter(code="conversation.viewed", details__page="live").count() == 1

    # a reconnect from the middle gets what came after, once
    middle = events[len(events) // 2]["id"]
    _, _, again, _ = read_sse(
        world.users["agent"], conversation.pk, until=ended, **{"Last-Event-ID": str(middle)}
    )
    assert [e["id"] for e in again] == [e["id"] for e in events if e["id"] > middle]
    assert AuditEvent.objects.filter(code="conversation.viewed", details__page="live").count() == 2


def test_a_new_viewer_skips_closed_exchanges(world: Any) -> None:
    conversation = world.billing
    feed(conversation, [STREAM.stream], exchange="old")
    live_exchange_close(conversation_id=conversation.pk, exchange="old")
    feed(conversation, [STREAM.stream], exchange="new")
    _, _, events, _ = read_sse(world.users["agent"], conversation.pk, until=ended)
    assert {e["exchange"] for e in events} == {events[0]["exchange"]}
    assert published_blocks(events) == list(STREAM.visible)


@pytest.mark.parametrize("role", ["other_agent", "inactive"])
def test_who_may_not_see_the_conversation_gets_404(world: Any, role: str) -> None:
    status, _, _, _ = read_sse(world.users[role], world.billing.pk, until=ended)
    assert status in (404, 302) if role == "inactive" else status == 404
    assert not AuditEvent.objects.filter(code="conversation.viewed", details__page="live").exists()


def test_missing_is_404_and_anonymous_goes_to_login(world: Any, client: Any) -> None:
    status, _, _, _ = read_sse(world.users["agent"], 10**9, until=ended)
    assert status == 404
    response = client.get(f"/conversations/{world.billing.pk}/live")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_live_now_lists_what_the_user_may_see(world: Any, client: Any) -> None:
    from tests.console.conftest import client_for

    feed(world.billing, [STREAM.stream[:200]])
    agent = client_for(client, world, "agent")
    page = agent.get("/live/").content.decode()
    assert world.billing.external_id in page
    other = client_for(client, world, "other_agent")
    assert world.billing.external_id not in other.get("/live/").content.decode()
    assert (
        AuditEvent.objects.filter(code="conversation.listed", details__page="live-now").count() == 2
    )


def test_the_page_shows_what_was_seen_live(world: Any, client: Any) -> None:
    from conversations.models import Exchange
    from tests.console.conftest import client_for

    Exchange.objects.filter(conversation=world.billing).update(
        live_first_text_ms=1400, live_thinking_ms=14000
    )
    page = client_for(client, world, "agent").get(f"/conversations/{world.billing.pk}/")
    text = page.content.decode()
    assert "Seen live" in text and 'data-live-url="/conversations/' in text


def test_under_wsgi_the_stream_is_a_204_and_the_page_works(world: Any, client: Any) -> None:
    from tests.console.conftest import client_for

    agent = client_for(client, world, "agent")
    assert agent.get(f"/conversations/{world.billing.pk}/live").status_code == 204
    assert agent.get(f"/conversations/{world.billing.pk}/").status_code == 200


def _numsub(channel: str) -> int:
    from conversations.live import state

    return int(dict(state.client().pubsub_numsub(channel))[channel.encode()])


def test_the_streams_of_one_process_share_one_subscription(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two viewers of one conversation and one of another, in one event loop: one Redis
    subscription per conversation, each viewer gets its conversation's events; when one viewer
    of a conversation leaves the other still gets them; when the last leaves, none is left."""
    from console import live_views
    from conversations.live import state

    # The view's own generators: closing the test client's wrappers around them would leave
    # them to the garbage collector, where a server cancels them when the client goes.
    relays: list[Any] = []
    relay = live_views._relay
    monkeypatch.setattr(live_views, "_relay", lambda *a: relays.append(relay(*a)) or relays[-1])

    billing, shipping = world.billing, world.shipping
    pieces = cuts(STREAM.stream, random.Random(7))
    half = len(pieces) // 2

    async def frames_until(stream: Any, done: Callable[[list[dict[str, Any]]], bool]) -> list:
        events: list[dict[str, Any]] = []
        while not done(events):
            chunk = await stream.__anext__()
            events += [
                json.loads(line[6:]) for line in chunk.decode().split("\n") if line[:6] == "data: "
            ]
        return events

    async def go() -> None:
        client = AsyncClient()
        await client.aforce_login(world.users["admin"])
        streams = []
        for pk in (billing.pk, billing.pk, shipping.pk):
            response = await client.get(f"/conversations/{pk}/live")
            assert response.status_code == 200
            stream = relays[-1]
            assert await stream.__anext__() == b"retry: 2000\n\n"  # subscribed
            streams.append(stream)
        assert _numsub(state.channel(billing.pk)) == 1
        assert _numsub(state.channel(shipping.pk)) == 1
        await sync_to_async(feed)(billing, pieces[:half])
        await sync_to_async(feed)(shipping, [STREAM.stream])
        published = await sync_to_async(state.events_after)(billing.pk, 0)
        assert published
        first = await frames_until(streams[0], lambda es: len(es) >= len(published))
        second = await frames_until(streams[1], lambda es: len(es) >= len(published))
        assert first == second == published
        other = await frames_until(streams[2], ended)
        assert {e["exchange"] for e in other} == {state.exchange_hash(shipping.pk, "call-1")[:12]}
        assert published_blocks(other) == list(STREAM.visible)
        await streams[0].aclose()
        await sync_to_async(feed)(billing, pieces[half:], half)
        rest = await frames_until(streams[1], ended)
        assert published_blocks(second + rest) == list(STREAM.visible)
        assert _numsub(state.channel(billing.pk)) == 1
        await streams[1].aclose()
        await streams[2].aclose()
        assert _numsub(state.channel(billing.pk)) == 0
        assert _numsub(state.channel(shipping.pk)) == 0

    async_to_sync(go)()
    assert AuditEvent.objects.filter(code="conversation.viewed", details__page="live").count() == 3


def test_an_idle_stream_gets_keepalives(world: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from conversations.live import hub

    monkeypatch.setattr(hub, "KEEPALIVE_SECONDS", 0.02)

    async def go() -> list[bytes]:
        client = AsyncClient()
        await client.aforce_login(world.users["agent"])
        response = await client.get(f"/conversations/{world.billing.pk}/live")
        stream = response.streaming_content.__aiter__()
        chunks = [await stream.__anext__() for _ in range(3)]
        await stream.aclose()
        return chunks

    assert async_to_sync(go)() == [b"retry: 2000\n\n", b": keepalive\n\n", b": keepalive\n\n"]


def test_an_exchange_gone_quiet_is_told_once_its_state_expires(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chat backend that stops sending (no more chunks, no exchange POST): once the exchange's
    state expires in Redis (the idle close), its viewers get an ``idle`` event, once, and the page
    stops its "Thinking…"; while the state lives, only keepalives."""
    from conversations.live import hub, state

    monkeypatch.setattr(hub, "KEEPALIVE_SECONDS", 0.02)
    conversation = world.billing
    pieces = cuts(STREAM.stream, random.Random(5))
    feed(conversation, pieces[: len(pieces) // 3])  # thinking has started, the rest never comes

    async def go() -> list[bytes]:
        client = AsyncClient()
        await client.aforce_login(world.users["agent"])
        response = await client.get(f"/conversations/{conversation.pk}/live")
        stream = response.streaming_content.__aiter__()
        chunks = [await stream.__anext__() for _ in range(4)]  # retry, backlog, 2 keepalives
        opened = state.client().smembers(state.key("open", conversation.pk))
        for h in opened:  # the idle expiry, now
            state.client().delete(state.key("x", h.decode()))
        chunks += [await stream.__anext__() for _ in range(2)]
        await stream.aclose()
        return chunks

    chunks = async_to_sync(go)()
    assert chunks[2:4] == [b": keepalive\n\n", b": keepalive\n\n"]
    idle = json.loads(chunks[4].decode().split("data: ", 1)[1])
    assert idle["type"] == "idle" and idle["seconds"] > 0
    assert idle["exchange"] in chunks[1].decode()
    assert chunks[5] == b": keepalive\n\n"  # told once


def test_a_viewer_too_far_behind_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from conversations.live import hub

    monkeypatch.setattr(hub, "MAX_PENDING_FRAMES", 3)

    async def go() -> tuple[Any, Any, Any]:
        viewer = hub.Viewer()
        for i in range(3):
            viewer.push((i, b"f", "x", False))
        kept = await viewer.take()
        for i in range(4):
            viewer.push((i, b"f", "x", False))
        return kept, await viewer.take(), await viewer.take()

    kept, cut, after = async_to_sync(go)()
    assert kept == [(0, b"f", "x", False), (1, b"f", "x", False), (2, b"f", "x", False)]
    assert cut is None and after is None
