"""Case 1: a live chunk nested deeper than the JSON decoder reads is a 400 ``too_deep`` in the
error shape, in every format; nothing of it is kept, and the same ``seq`` sent again with a
readable chunk is read (the exchange is not stuck)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.formats import formats, get
from conversations.live import state
from tests.conftest import post_json
from tests.live.conftest import chunk_body, stored_conversation

pytestmark = pytest.mark.django_db
URL = "/api/v1/live/chunks"
DEEP = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000
# A chunk each format's live filter reads and that shows nothing (its kit's ``live.idle``).
READABLE = {f.name: f.kit.live.idle for f in formats()}


def _halves(fmt: str, chunk: str) -> tuple[str, str]:
    """A chunk cut in two (a binary stream's bytes cut, each half base64 again)."""
    if not get(fmt).live.binary:
        return chunk[: len(chunk) // 2], chunk[len(chunk) // 2 :]
    data = base64.b64decode(chunk)
    half = len(data) // 2
    return base64.b64encode(data[:half]).decode(), base64.b64encode(data[half:]).decode()


@pytest.mark.parametrize("fmt", sorted(READABLE))
@pytest.mark.parametrize("deep", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_a_nested_chunk_is_too_deep_and_the_seq_is_not_stuck(
    api: APIClient, client: Any, world: Any, fmt: str, deep: str
) -> None:
    name = f"deep-{fmt}"
    pk = stored_conversation(api, name, fmt)
    h = state.exchange_hash(pk, "call-1")
    deep = get(fmt).kit.live.frame(deep)
    for _ in range(2):  # again: the same answer, not a 500
        r = post_json(api, URL, chunk_body(None, name, 0, deep, format=fmt))
        assert r.status_code == 400, r.content[:300]
        assert r.json() == {
            "error": "too_deep",
            "detail": "JSON nested too deep",
            "field": "chunk",
            "at": "$.chunk",
        }
        assert not state.client().exists(state.key("x", h))  # nothing kept
        assert not state.client().exists(state.key("lock", h))  # nor left locked
    r = post_json(api, URL, chunk_body(None, name, 0, READABLE[fmt], format=fmt))
    assert r.status_code == 202, r.json()
    assert r.json() == {"status": "published", "next_seq": 1}
    # a deep chunk inside the stream, cut across two chunks: refused when its end arrives
    first, second = _halves(fmt, deep)
    r = post_json(api, URL, chunk_body(None, name, 1, first, format=fmt))
    assert r.status_code == 202, r.json()
    r = post_json(api, URL, chunk_body(None, name, 2, second, format=fmt))
    assert r.status_code == 400 and r.json()["error"] == "too_deep"
    filler = READABLE[fmt] if get(fmt).live.binary else "\n"
    r = post_json(api, URL, chunk_body(None, name, 2, filler, format=fmt))
    assert r.status_code == 202 and r.json()["next_seq"] == 3
    client.force_login(world.users["admin"])
    assert client.get(f"/conversations/{pk}/").status_code == 200
    assert client.get("/live/").status_code == 200


def test_a_deep_early_chunk_ends_the_stream_with_an_error(api: APIClient) -> None:
    """A held chunk, accepted before its gap filled, that turns out unreadable: the stream ends
    with an ``error`` event; the chunk that filled the gap is not refused for it."""
    fmt = "anthropic.messages"
    pk = stored_conversation(api, "deep-held", fmt)
    deep = get(fmt).kit.live.frame(DEEP)
    assert post_json(api, URL, chunk_body(None, "deep-held", 1, deep)).json()["status"] == "held"
    r = post_json(api, URL, chunk_body(None, "deep-held", 0, READABLE[fmt]))
    assert r.status_code == 202 and r.json() == {"status": "published", "next_seq": 2}
    events = state.events_after(pk, 0)
    assert events[-1]["type"] == "error" and events[-1]["code"] == "too_deep"
