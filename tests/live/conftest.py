"""Live tests: each with its own Redis key prefix (workers share one Redis database), and a
recorder of every key written and every message published under it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from conversations.live import state
from tests.conftest import post_json
from tests.conversations.requests import body_for
from tests.live.streams import Stream
from tests.providers import Recorded


@pytest.fixture(autouse=True)
def live_prefix(settings: Any) -> Iterator[str]:
    settings.LIVE_KEY_PREFIX = prefix = f"test-live-{uuid.uuid4().hex[:12]}"
    yield prefix
    r = state.client()
    keys = list(r.scan_iter(f"{prefix}:*"))
    if keys:
        r.delete(*keys)


def stored_conversation(api: Any, name: str, fmt: str = "anthropic.messages") -> int:
    """A conversation with one stored exchange (so it has a data key and a page)."""
    from conversations.models import Conversation

    first = Recorded(
        "first", fmt, None, response=json.dumps(_FIRST[fmt])
    )  # the answer before the live one
    r = post_json(api, "/api/v1/exchanges", body_for(first, conversation=name))
    assert r.status_code == 201, r.json()
    return Conversation.objects.get(external_id=name).pk


_FIRST = {
    "anthropic.messages": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Let me look."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
    "openai.responses": {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-5-mini",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}],
            }
        ],
    },
    "openai.chat": {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Let me look."},
                "finish_reason": "stop",
            }
        ],
    },
    "ai-sdk.ui": {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "Hi."}]},
}


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
