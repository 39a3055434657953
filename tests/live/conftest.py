"""Live tests: each with its own Redis key prefix (workers share one Redis database), and a
recorder of every key written and every message published under it."""

from __future__ import annotations

import base64
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
    fmt = s.format if s else kw.pop("format", "anthropic.messages")
    from conversations.formats import get

    # A binary stream's chunks are base64: a recorded stream's piece (its bytes as Latin-1
    # text) is encoded here; the kit's live samples already are.
    field = "chunk_base64" if get(fmt).live.binary else "chunk"
    if s is not None and get(fmt).live.binary:
        chunk = base64.b64encode(chunk.encode("latin-1")).decode()
    return {
        "conversation": conversation,
        "customer": kw.pop("customer", "cus_1"),
        "format": fmt,
        "exchange": exchange,
        "seq": seq,
        field: chunk,
        **kw,
    }


from tests.console.conftest import world  # noqa: E402, F401  (the console's roles and conversations)
