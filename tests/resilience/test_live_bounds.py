"""Case 7: live chunks bounded like ingest bodies (characters per chunk, state per exchange,
open exchanges per conversation), each refused in the error shape with nothing kept; and the
exchange's state kept so that a chunk costs what it adds (the small state stays small, the
unread stream is appended to, not rewritten)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.live import state
from tests.conftest import post_json
from tests.live.conftest import chunk_body, stored_conversation

pytestmark = pytest.mark.django_db
URL = "/api/v1/live/chunks"
OPEN = 'event: message_start\ndata: {"type": "message_start", "message": {"id": "m"}}\n\n'


def _snapshot(h: str) -> tuple[Any, ...]:
    r = state.client()
    return (
        r.get(state.key("x", h)),
        r.lrange(state.key("t", h), 0, -1),
        r.hgetall(state.key("e", h)),
    )


def _pages_work(client: Any, world: Any, pk: int) -> None:
    client.force_login(world.users["admin"])
    assert client.get("/").status_code == 200
    assert client.get(f"/conversations/{pk}/").status_code == 200
    assert client.get("/live/").status_code == 200


def test_a_chunk_over_its_bound_is_refused(api: APIClient, settings: Any) -> None:
    settings.LIVE_MAX_CHUNK_CHARS = 100
    pk = stored_conversation(api, "bound-chunk")
    r = post_json(api, URL, chunk_body(None, "bound-chunk", 0, "x" * 101))
    assert r.status_code == 400
    assert r.json()["error"] == "max_length" and r.json()["at"] == "$.chunk"
    assert not state.client().exists(state.key("x", state.exchange_hash(pk, "call-1")))


def test_an_exchange_state_over_its_bound_is_refused(
    api: APIClient, settings: Any, client: Any, world: Any
) -> None:
    settings.LIVE_MAX_STATE_CHARS = 10_000
    pk = stored_conversation(api, "bound-state")
    h = state.exchange_hash(pk, "call-1")
    piece = "data: " + "y" * 2994  # 3,000 characters, no blank line: an event never ended
    for seq in range(3):
        r = post_json(api, URL, chunk_body(None, "bound-state", seq, piece))
        assert r.status_code == 202 and r.json()["status"] == "published", r.json()
    before = _snapshot(h)
    for seq, status in ((3, "published"), (7, "held")):  # in order, and early
        r = post_json(api, URL, chunk_body(None, "bound-state", seq, piece))
        assert r.status_code == 413, (status, r.json())
        assert r.json()["error"] == "state_too_large"
        assert r.json()["field"] == "chunk" and r.json()["at"] == "$.chunk"
        assert _snapshot(h) == before  # nothing kept
    # a chunk that ends the event frees the state: the stream goes on
    r = post_json(api, URL, chunk_body(None, "bound-state", 3, "\n\n" + OPEN))
    assert r.status_code == 202 and r.json()["next_seq"] == 4
    assert state.client().llen(state.key("t", h)) == 0  # nothing after the event's end
    _pages_work(client, world, pk)


def test_open_exchanges_per_conversation_are_bounded(
    api: APIClient, settings: Any, client: Any, world: Any
) -> None:
    settings.LIVE_MAX_OPEN_EXCHANGES = 2
    pk = stored_conversation(api, "bound-open")
    for name in ("a", "b"):
        r = post_json(api, URL, chunk_body(None, "bound-open", 0, OPEN, exchange=name))
        assert r.status_code == 202, r.json()
    r = post_json(api, URL, chunk_body(None, "bound-open", 0, OPEN, exchange="c"))
    assert r.status_code == 429
    assert r.json() == {
        "error": "too_many_exchanges",
        "detail": r.json()["detail"],
        "field": "exchange",
        "at": "$.exchange",
    }
    h = state.exchange_hash(pk, "c")
    assert _snapshot(h) == (None, [], {})
    assert not state.client().exists(state.key("lock", h))
    # the open ones go on; once one closes, another may open
    r = post_json(api, URL, chunk_body(None, "bound-open", 1, "\n", exchange="a"))
    assert r.status_code == 202
    state.mark_closed(pk, state.exchange_hash(pk, "a"))
    r = post_json(api, URL, chunk_body(None, "bound-open", 0, OPEN, exchange="c"))
    assert r.status_code == 202 and r.json()["status"] == "published"
    _pages_work(client, world, pk)


def test_a_chunk_adds_to_the_state_and_does_not_rewrite_it(api: APIClient) -> None:
    """40 chunks of one unfinished event: the small state stays the same size, the unread text
    is 40 segments appended one by one (none rewritten), and all of it is read when the event
    ends."""
    pk = stored_conversation(api, "bound-append")
    h = state.exchange_hash(pk, "call-1")
    post_json(api, URL, chunk_body(None, "bound-append", 0, OPEN))
    text = '{"type": "ping", "pad": "' + "z" * 40_000 + '"}'
    pieces = ["event: ping\ndata: " + text[:1000]] + [
        text[i : i + 1000] for i in range(1000, len(text), 1000)
    ]
    sizes, segments = [], []
    for seq, piece in enumerate(pieces, 1):
        assert post_json(api, URL, chunk_body(None, "bound-append", seq, piece)).status_code == 202
        sizes.append(len(state.client().get(state.key("x", h))))
        segments.append(state.client().lrange(state.key("t", h), 0, -1))
    assert max(sizes) - min(sizes) < 50  # the small state does not grow with the stream
    for i in range(1, len(segments)):
        assert segments[i][:-1] == segments[i - 1]  # appended, the earlier segments untouched
    r = post_json(api, URL, chunk_body(None, "bound-append", len(pieces) + 1, "\n\n"))
    assert r.status_code == 202 and r.json()["next_seq"] == len(pieces) + 2
    assert state.client().llen(state.key("t", h)) == 0
