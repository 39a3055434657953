""" "Live now" follows by itself (issue 35): the live stream's ``now`` channel says when a
conversation starts or stops streaming, ``GET /live/stream`` turns that into an SSE ``now``
event, the page fetches its list again as a fragment (audited like the page), and the menu counts
the live conversations the reader may see."""

from __future__ import annotations

import re
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.test import AsyncClient, Client

from audit.models import AuditEvent
from conversations.live import state
from conversations.live.services import live_exchange_close
from tests.live.test_sse import STREAM, feed

pytestmark = pytest.mark.django_db

BADGE = re.compile(r'<span class="badge live-badge" data-live-count data-n="(\d+)"[^>]*>')


def _badge(client: Any) -> int:
    found = BADGE.search(client.get("/").content.decode())
    assert found is not None
    return int(found.group(1))


def test_the_menu_counts_the_live_conversations_the_reader_may_see(world: Any, client: Any) -> None:
    from tests.console.conftest import client_for

    agent = client_for(client, world, "agent")
    assert _badge(agent) == 0
    feed(world.billing, [STREAM.stream[:200]])
    assert _badge(agent) == 1
    other = client_for(client, world, "other_agent")  # not the billing queue
    assert _badge(other) == 0
    live_exchange_close(conversation_id=world.billing.pk, exchange="call-1")
    assert _badge(client_for(client, world, "agent")) == 0


def test_joining_and_leaving_live_now_is_published(world: Any) -> None:
    r = state.client()
    pubsub = r.pubsub()
    pubsub.subscribe(state.channel("now"))
    assert pubsub.get_message(timeout=2)["type"] == "subscribe"
    feed(world.billing, [STREAM.stream[:200]])
    joined = pubsub.get_message(timeout=2)
    assert joined is not None and joined["data"] == b'{"id": 0, "type": "now"}'
    feed(world.billing, [STREAM.stream[200:300]], start=1)  # still live: nothing new
    assert pubsub.get_message(timeout=0.5) is None
    live_exchange_close(conversation_id=world.billing.pk, exchange="call-1")
    left = pubsub.get_message(timeout=2)
    assert left is not None and left["data"] == b'{"id": 0, "type": "now"}'
    pubsub.close()


def test_the_stream_says_now_when_the_set_changes(world: Any) -> None:
    async def go() -> list[bytes]:
        client = AsyncClient()
        await client.aforce_login(world.users["agent"])
        response = await client.get("/live/stream")
        assert response.status_code == 200
        assert response["Content-Type"] == "text/event-stream; charset=utf-8"
        frames = response.streaming_content.__aiter__()
        seen = [await frames.__anext__()]  # the retry line: subscribed
        await sync_to_async(feed)(world.billing, [STREAM.stream[:200]])
        seen.append(await frames.__anext__())
        await frames.aclose()
        return seen

    before = AuditEvent.objects.count()
    seen = async_to_sync(go)()
    assert seen == [b"retry: 2000\n\n", b"event: now\ndata: {}\n\n"]
    assert world.billing.external_id.encode() not in b"".join(seen)  # names nothing
    assert AuditEvent.objects.count() == before  # the list's read is audited, not the signal


def test_the_list_alone_for_the_page_and_the_stream_for_readers(world: Any, client: Any) -> None:
    from tests.console.conftest import client_for

    feed(world.billing, [STREAM.stream[:200]])
    agent = client_for(client, world, "agent")
    fragment = agent.get("/live/", HTTP_HX_REQUEST="true")
    body = fragment.content.decode()
    assert "<html" not in body and 'id="live-now-list" data-count="1"' in body
    assert world.billing.external_id in body
    assert AuditEvent.objects.filter(details__page="live-now").count() == 1
    page = agent.get("/live/").content.decode()
    assert 'data-stream-url="/live/stream"' in page and "live-now.js" in page
    # Under WSGI (the test client), no stream: 204, EventSource stops asking.
    assert agent.get("/live/stream").status_code == 204
    assert Client().get("/live/stream").status_code == 302  # anonymous: to the login page
    compliance = Client()
    compliance.force_login(world.users["compliance"])
    assert compliance.get("/live/stream").status_code == 404
