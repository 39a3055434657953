"""Erasure takes a conversation's live streams out of Redis with its rows: the open exchange's
state, the event log (redacted visible text), the counter, its place in "Live now". Another
conversation's live state stays."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.keystore.keys import KeyDestroyed
from conversations.live import state
from conversations.live.body import ChunkInput
from conversations.live.services import live_chunk_ingest
from retention.services import conversation_erase
from retention.services.clock import retention_tick
from tests.live.conftest import chunk_body, stored_conversation
from tests.live.test_api_chunks import send
from tests.resilience.redis_server import free_port

pytestmark = pytest.mark.django_db

OPEN = [
    {"type": "message_start", "message": {"id": "m", "content": []}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Your "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "order "}},
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {
            "type": "text_delta",
            "text": "left the warehouse this morning and should reach you by Friday, as promised. ",
        },
    },
]


def _keys(live_prefix: str) -> set[str]:
    return {k.decode() for k in state.client().scan_iter(f"{live_prefix}:*")}


def test_erasure_forgets_the_live_streams_of_the_conversation(
    api: APIClient, live_prefix: str
) -> None:
    gone = stored_conversation(api, "live-gone")
    kept = stored_conversation(api, "live-kept")
    for name in ("live-gone", "live-kept"):
        for seq, event in enumerate(OPEN):
            response = send(api, chunk_body(None, name, seq, f"data: {json.dumps(event)}\n\n"))
            assert response.status_code == 202, response.json()
    mine = {k for k in _keys(live_prefix) if k.endswith(f":{gone}")}
    assert {f"{live_prefix}:log:{gone}", f"{live_prefix}:n:{gone}"} <= mine
    assert state.events_after(gone, 0) and gone in state.live_now()
    h_gone = state.exchange_hash(gone, "call-1")
    assert state.client().exists(state.key("x", h_gone))

    conversation_erase(gone)

    left = _keys(live_prefix)
    assert not {k for k in left if k.endswith(f":{gone}") or k.endswith(f":{h_gone}")}
    assert not state.events_after(gone, 0) and gone not in state.live_now()
    # The other conversation is untouched.
    assert state.events_after(kept, 0) and kept in state.live_now()
    assert state.client().exists(state.key("x", state.exchange_hash(kept, "call-1")))
    assert conversation_erase(gone)[1] is None  # idempotent, with nothing left to forget


def _chunk(name: str, seq: int, event: dict[str, object]) -> ChunkInput:
    return ChunkInput(
        conversation=name,
        customer="cus_1",
        format="anthropic.messages",
        exchange="call-1",
        seq=seq,
        chunk=f"data: {json.dumps(event)}\n\n",
    )


def test_a_chunk_after_erasure_is_refused_though_a_process_kept_the_key(
    api: APIClient, live_prefix: str
) -> None:
    """A web process keeps a conversation's data key while its exchange's state is in Redis;
    erasure forgets that state, so the next chunk reads the key again and finds it destroyed,
    in a process that still kept it too (forget drops it only in the erasing process)."""
    pk = stored_conversation(api, "live-kept-key")
    for seq, event in enumerate(OPEN[:3]):
        assert send(api, chunk_body(None, "live-kept-key", seq, f"data: {json.dumps(event)}\n\n"))
    kept = state.key_kept(pk)
    assert kept is not None
    conversation_erase(pk)
    assert state.key_kept(pk) is None
    state.key_keep(pk, kept)  # another web process, which kept it
    with pytest.raises(KeyDestroyed):
        live_chunk_ingest(conversation_id=pk, data=_chunk("live-kept-key", 3, OPEN[3]))
    assert not {k for k in _keys(live_prefix) if k.endswith(f":{pk}")}
    assert not state.events_after(pk, 0)


def test_a_chunk_read_before_an_erasure_does_not_bring_its_state_back(
    api: APIClient, live_prefix: str
) -> None:
    pk = stored_conversation(api, "live-race")
    for seq, event in enumerate(OPEN[:3]):
        assert send(api, chunk_body(None, "live-race", seq, f"data: {json.dumps(event)}\n\n"))
    h = state.exchange_hash(pk, "call-1")
    begun = state.begin(h)  # a chunk in flight: it read the state
    data_key = state.key_kept(pk)
    assert begun.raw is not None and data_key is not None
    st = state.unseal(h, data_key, begun.raw)
    conversation_erase(pk)  # meanwhile
    text = {"type": "text", "block": 0, "text": "late"}
    assert state.commit(pk, begun, h, data_key, st, [text]) is None
    assert not {k for k in _keys(live_prefix) if k.endswith(f":{pk}") or k.endswith(f":{h}")}


def test_the_clock_forgets_what_a_failed_forget_left(
    api: APIClient, live_prefix: str, settings: Any
) -> None:
    """An erasure whose forget found Redis down leaves the live state (unreadable: its key is
    gone); the retention clock's next tick forgets every conversation that no longer exists, and
    keeps the others'."""
    gone = stored_conversation(api, "live-left")
    kept = stored_conversation(api, "live-stays")
    for name in ("live-left", "live-stays"):
        for seq, event in enumerate(OPEN):
            assert send(api, chunk_body(None, name, seq, f"data: {json.dumps(event)}\n\n"))
    live_redis = settings.REDIS_URL
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # unreachable from the eraser
    counts, external_id = conversation_erase(gone)
    settings.REDIS_URL = live_redis
    assert external_id == "live-left" and counts["main"]
    assert {k for k in _keys(live_prefix) if k.endswith(f":{gone}")}  # left behind

    done = retention_tick()

    assert done["live_forgotten"] == 1
    assert not {k for k in _keys(live_prefix) if k.endswith(f":{gone}")}
    assert gone not in state.live_now()
    assert state.events_after(kept, 0) and kept in state.live_now()
