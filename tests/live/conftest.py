"""Live tests: each with its own Redis key prefix (workers share one Redis database), and a
recorder of every key written and every message published under it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from conversations.live import state
from tests.conftest import post_json
from tests.live.streams import Stream


@pytest.fixture(autouse=True)
def live_prefix(settings: Any) -> Iterator[str]:
    settings.LIVE_KEY_PREFIX = prefix = f"test-live-{uuid.uuid4().hex[:12]}"
    yield prefix
    r = state.client()
    keys = list(r.scan_iter(f"{prefix}:*"))
    if keys:
        r.delete(*keys)


def stored_conversation(api: Any, name: str, fmt: str = "anthropic.messages") -> int:
    """A conversation with one stored exchange (so it has a data key and a page): the answer
    before the live one, the exchange of the format's kit example."""
    from conversations.formats import get
    from conversations.models import Conversation

    example = get(fmt).kit.example
    outputs = ("request", "response", "stream", "stream_base64", "endpoint")
    body = {
        "conversation": name,
        "customer": "cus_1",
        "format": fmt,
        **{k: v for k, v in example.items() if k in outputs},
        "labels": {"queue": "billing"},
    }
    r = post_json(api, "/api/v1/exchanges", body)
    assert r.status_code == 201, r.json()
    return Conversation.objects.get(external_id=name).pk


def chunk_body(
    s: Stream | None,
    conversation: str,
    seq: int,
    chunk: str,
    *,
    exchange: str = "call-1",
    **kw: Any,
) -> dict[str, Any]:
    return {
        "conversation": conversation,
        "customer": kw.pop("customer", "cus_1"),
        "format": s.format if s else kw.pop("format", "anthropic.messages"),
        "exchange": exchange,
        "seq": seq,
        "chunk": chunk,
        **kw,
    }


from tests.console.conftest import world  # noqa: E402, F401  (the console's roles and conversations)
