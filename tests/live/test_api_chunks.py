"""POST /api/v1/live/chunks: order by seq, duplicates, gaps, the close, and the ingest API's
tokens, tombstones, limits and error shape."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.live import state
from conversations.models import Exchange
from tests.conftest import post_json
from tests.conversations.requests import body_for
from tests.live.conftest import chunk_body, stored_conversation
from tests.live.streams import STREAMS_BY_NAME, streams
from tests.live.test_filters import cuts, published_blocks
from tests.providers import Recorded

URL = "/api/v1/live/chunks"
pytestmark = pytest.mark.django_db
STREAMS = streams()


class Listener:
    def __init__(self, conversation_id: int) -> None:
        self.pubsub = state.client().pubsub()
        self.pubsub.subscribe(state.channel(conversation_id))
        self.pubsub.get_message(timeout=1)  # the subscribe confirmation

    def events(self) -> list[dict[str, Any]]:
        out = []
        while (m := self.pubsub.get_message(timeout=0.05)) is not None:
            if m["type"] == "message":
                out.append(json.loads(m["data"]))
        return out


def send(api: APIClient, body: dict[str, Any]) -> Any:
    return post_json(api, URL, body)


@pytest.mark.parametrize(
    "name",
    [
        "vercel-ai__anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt#0",
        "vercel-ai__openai-web-search-tool.1.chunks.txt#0",
        "vercel-ai__deepseek-reasoning.chunks.txt#0",
        "ai_sdk/assistant-stream.sse",
        "pydantic-pydantic-ai__test_bedrock_model_thinking_part_stream.yaml#0",
    ],
)
def test_chunks_in_any_order_publish_the_stored_text(api: APIClient, name: str) -> None:
    s = STREAMS_BY_NAME[name]
    pk = stored_conversation(api, f"live-{name}", s.format)
    listener = Listener(pk)
    pieces = cuts(s.stream, random.Random(3), most=2000)
    order = list(range(len(pieces)))
    rng = random.Random(4)
    # shuffled within windows of 5, and every tenth chunk sent twice
    for i in range(0, len(order), 5):
        window = order[i : i + 5]
        rng.shuffle(window)
        order[i : i + 5] = window
    for seq in order:
        r = send(api, chunk_body(s, f"live-{name}", seq, pieces[seq]))
        assert r.status_code == 202, r.json()
        if seq % 10 == 0:
            assert (
                send(api, chunk_body(s, f"live-{name}", seq, pieces[seq])).json()["status"]
                == "duplicate"
            )
    events = listener.events()
    assert published_blocks(events) == list(s.visible)
    ids = [e["id"] for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert events[-1]["type"] in ("finished", "error")
    # the state in Redis keeps no text in the clear
    h = state.exchange_hash(pk, "call-1")
    raw = json.loads(state.client().get(state.key("x", h)))
    assert set(raw) == {"format", "next", "held", "public", "sealed", "tail", "early"}
    # and neither do the tail's segments nor the early chunks (sealed, base64)
    for name in (state.key("t", h), state.key("e", h)):
        kind = state.client().type(name)
        values = (
            state.client().lrange(name, 0, -1)
            if kind == b"list"
            else list(state.client().hgetall(name).values())
        )
        for v in values:
            assert b"data:" not in v and b" " not in v


def test_the_exchange_post_closes_the_live_stream(api: APIClient) -> None:
    s = STREAMS_BY_NAME["vercel-ai__anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt#0"]
    pk = stored_conversation(api, "live-close")
    listener = Listener(pk)
    pieces = cuts(s.stream, random.Random(1), most=300)
    half = len(pieces) // 2
    for seq in range(half):
        send(api, chunk_body(s, "live-close", seq, pieces[seq]))
    assert pk in state.live_now()
    exchanges = Exchange.objects.filter(conversation_id=pk).count()
    body = body_for(Recorded("x", s.format, None, stream=s.stream), conversation="live-close")
    body["live_exchange"] = "call-1"
    r = post_json(api, "/api/v1/exchanges", body)
    assert r.status_code == 201, r.json()
    assert Exchange.objects.filter(conversation_id=pk).count() == exchanges + 1
    stored = Exchange.objects.get(pk=r.json()["exchange"])
    assert stored.live_first_text_ms is not None or stored.live_thinking_ms is not None
    assert Exchange.objects.filter(conversation_id=pk, live_thinking_ms__isnull=False).count() == 1
    events = listener.events()
    assert events[-1]["type"] == "closed"
    assert pk not in state.live_now()
    # chunks after the close are no-ops
    assert send(api, chunk_body(s, "live-close", half, pieces[half])).json()["status"] == "closed"
    assert listener.events() == []


def test_a_gap_is_held_until_filled(api: APIClient) -> None:
    pk = stored_conversation(api, "live-gap")
    listener = Listener(pk)
    events = [
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Hello there."},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    chunks = [f"data: {json.dumps(e)}\n\n" for e in events]
    assert send(api, chunk_body(None, "live-gap", 0, chunks[0])).json()["status"] == "published"
    assert send(api, chunk_body(None, "live-gap", 2, chunks[2])).json() == {
        "status": "held",
        "next_seq": 1,
    }
    assert [e for e in listener.events() if e["type"] == "text"] == []
    assert send(api, chunk_body(None, "live-gap", 1, chunks[1])).json() == {
        "status": "published",
        "next_seq": 3,
    }
    for seq in (3, 4):
        send(api, chunk_body(None, "live-gap", seq, chunks[seq]))
    got = listener.events()
    assert [e["text"] for e in got if e["type"] == "text"] == ["Hello there."]
    assert got[-1] == {**got[-1], "type": "finished", "reason": "stop"}


def test_unauthenticated_and_wrong_scope(api: APIClient, db: Any) -> None:
    stored_conversation(api, "live-auth")
    body = chunk_body(None, "live-auth", 0, "data: {}\n\n")
    assert post_json(APIClient(), URL, body).status_code == 401
    from conversations.models import ServiceToken
    from conversations.services import service_token_create

    _, token = service_token_create(name="tickets", scope=ServiceToken.Scope.COMPLIANCE)
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert post_json(c, URL, body).status_code == 403
    assert list(state.client().scan_iter(state.key("*"))) == []


@pytest.mark.parametrize(
    ("patch", "field", "code"),
    [
        ({"seq": -1}, "seq", "min_value"),
        ({"seq": "1"}, "seq", "invalid"),
        ({"chunk": 3}, "chunk", "invalid"),
        ({"format": "nope"}, "format", "unknown_format"),
        ({"exchange": ""}, "exchange", "blank"),
        ({"extra": 1}, "extra", "unknown_field"),
        ({"at": "yesterday"}, "at", "invalid"),
        ({"labels": []}, "labels", "not_a_dict"),
    ],
)
def test_bad_input_is_a_4xx_naming_the_field(
    api: APIClient, patch: dict[str, Any], field: str, code: str
) -> None:
    stored_conversation(api, "live-bad")
    r = send(api, {**chunk_body(None, "live-bad", 0, "data: {}\n\n"), **patch})
    assert r.status_code == 400
    assert r.json() == {
        "error": code,
        "detail": r.json()["detail"],
        "field": field,
        "at": f"$.{field}",
    }
    assert list(state.client().scan_iter(state.key("*"))) == []


def test_missing_seq_and_chunk_and_a_too_long_chunk(api: APIClient, settings: Any) -> None:
    stored_conversation(api, "live-bad2")
    body = chunk_body(None, "live-bad2", 0, "x")
    for name in ("seq", "chunk"):
        r = send(api, {k: v for k, v in body.items() if k != name})
        assert (r.status_code, r.json()["error"], r.json()["field"]) == (400, "required", name)
    settings.LIVE_MAX_CHUNK_CHARS = 10
    r = send(api, {**body, "chunk": "x" * 11})
    assert (r.status_code, r.json()["error"]) == (400, "max_length")


def test_a_conversation_of_another_customer_is_a_409(api: APIClient) -> None:
    stored_conversation(api, "live-cus")
    r = send(api, chunk_body(None, "live-cus", 0, "data: {}\n\n", customer="someone-else"))
    assert (r.status_code, r.json()["error"]) == (409, "customer_mismatch")


def test_an_unknown_conversation_is_not_shown(api: APIClient) -> None:
    r = send(api, chunk_body(None, "never-stored", 0, "data: {}\n\n"))
    assert r.status_code == 202 and r.json()["status"] == "not_stored"
    assert list(state.client().scan_iter(state.key("*"))) == []


def test_an_erased_conversation_is_410_and_its_held_text_unreadable(api: APIClient) -> None:
    from retention.services import conversation_erase

    pk = stored_conversation(api, "live-erased")
    chunk = 'data: {"type":"message_start","message":{"id":"m","content":[]}}\n\ndata: {"ty'
    assert send(api, chunk_body(None, "live-erased", 0, chunk)).status_code == 202
    h = state.exchange_hash(pk, "call-1")
    sealed = json.loads(state.client().get(state.key("x", h)))["sealed"]
    assert '"ty' not in sealed and "message_start" not in sealed
    conversation_erase(pk)
    r = send(api, chunk_body(None, "live-erased", 1, 'pe":"ping"}\n\n'))
    assert (r.status_code, r.json()["error"], r.json()["field"]) == (410, "gone", "conversation")


def test_a_chunk_that_waits_too_long_for_the_exchange_is_409_busy(
    api: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    pk = stored_conversation(api, "live-busy")
    head = 'data: {"type":"message_start","message":{"id":"m","content":[]}}\n\n'
    assert send(api, chunk_body(None, "live-busy", 0, head)).json()["status"] == "published"
    h = state.exchange_hash(pk, "call-1")
    monkeypatch.setattr(state, "LOCK_WAIT_SECONDS", 0.0)
    holder = state.begin(h)  # another chunk of the exchange, being read
    r = send(api, chunk_body(None, "live-busy", 1, "data: {}\n\n"))
    assert (r.status_code, r.json()["error"], r.json()["field"]) == (409, "busy", "exchange")
    state.release(holder, h)
    r = send(api, chunk_body(None, "live-busy", 1, "data: {}\n\n"))
    assert r.status_code == 202 and r.json() == {"status": "published", "next_seq": 2}


def test_a_close_that_waits_too_long_still_closes_and_later_chunks_are_no_ops(
    api: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exchange's POST closes its live stream even while a chunk holds the exchange: the
    close never fails the POST, and the chunk in hand writes nothing back."""
    from conversations.live.services import live_exchange_close

    pk = stored_conversation(api, "live-close-busy")
    head = 'data: {"type":"message_start","message":{"id":"m","content":[]}}\n\n'
    assert send(api, chunk_body(None, "live-close-busy", 0, head)).json()["status"] == "published"
    h = state.exchange_hash(pk, "call-1")
    monkeypatch.setattr(state, "LOCK_WAIT_SECONDS", 0.0)
    holder = state.begin(h)
    assert live_exchange_close(conversation_id=pk, exchange="call-1") is None
    assert state.commit(pk, holder, h, b"\0" * 32, {"secret": {}}, []) is None  # state gone
    r = send(api, chunk_body(None, "live-close-busy", 1, "data: {}\n\n"))
    assert r.status_code == 202 and r.json()["status"] == "closed"
