"""Erasure takes a conversation's live streams out of Redis with its rows: the open exchange's
state, the event log (redacted visible text), the counter, its place in "Live now". Another
conversation's live state stays."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from conversations.live import state
from retention.services import conversation_erase
from tests.live.conftest import chunk_body, stored_conversation
from tests.live.test_api_chunks import send

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
