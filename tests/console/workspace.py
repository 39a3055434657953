"""Data for the agent's workspace tests: a conversation as a support ticket names it.

``conv-zd-1042`` (Anthropic, queue billing, ticket ZD-1042) asks about order ORD-5550123. The
model calls two tools that both fail (one reports a JSON error, one a plain-text one), then
answers in Markdown with a ``<script>`` in it; the customer is escalated. ``conv-zd-1043``
(OpenAI Responses) looks the same order up under the key ``order``, which only an identifier
policy keeps. Policies: ``input $.order`` identifier, ``output $.error.message`` display, and the
whole result of ``refund_payment`` display (its errors are plain text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from conversations.ingest.body import exchange_input
from conversations.models import Conversation, FieldPolicy
from conversations.projection.policies import policies_changed
from conversations.services import conversation_ingest_exchange, conversation_record_event

BACKEND_ID = "conv-zd-1042"
OTHER_ID = "conv-zd-1043"
CUSTOMER = "cus-ana-moreau"
TICKET = "ZD-1042"
ORDER = "ORD-5550123"
SHIPMENT_ERROR = "Carrier API timed out after 30 s"
REFUND_ERROR = "Refund refused: the payment was already refunded on 2 November"
SCRIPT = "<script>window.__pwned = 1</script>"
STARTED = datetime(2026, 11, 3, 14, 5, tzinfo=UTC)
ANSWER = f"""I'm sorry, **two things went wrong** while I checked order `{ORDER}`:

1. the carrier's tracking system did not answer;
2. the refund could not be issued.

A colleague will take over. Meanwhile, see [our delivery page](https://shop.example.com/delivery).

{SCRIPT}

```
ticket {TICKET}
```
"""


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _anthropic_bodies() -> list[dict[str, Any]]:
    user = {"role": "user", "content": f"Hi, my order {ORDER} never arrived. Can you check?"}
    calls = [
        {"type": "text", "text": "Let me check that order."},
        {"type": "tool_use", "id": "toolu_ship", "name": "get_shipment", "input": {"order": ORDER}},
        {
            "type": "tool_use",
            "id": "toolu_refund",
            "name": "refund_payment",
            "input": {"order": ORDER, "amount_eur": 20},
        },
    ]
    request1 = {"model": "claude-sonnet-4-5", "max_tokens": 2048, "messages": [user]}
    usage1 = {"input_tokens": 310, "output_tokens": 96}
    response1 = {
        "id": "msg_zd1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": calls,
        "stop_reason": "tool_use",
        "usage": usage1,
    }
    results = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_ship",
                "is_error": True,
                "content": _compact({"error": {"message": SHIPMENT_ERROR, "code": 504}}),
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_refund",
                "is_error": True,
                "content": REFUND_ERROR,
            },
        ],
    }
    request2 = {
        **request1,
        "messages": [user, {"role": "assistant", "content": calls}, results],
    }
    response2 = {
        "id": "msg_zd2",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": ANSWER}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 520, "output_tokens": 140},
    }
    base = {
        "conversation": BACKEND_ID,
        "customer": CUSTOMER,
        "format": "anthropic.messages",
        "labels": {"queue": "billing", "ticket": TICKET},
    }
    return [
        {
            **base,
            "request": _compact(request1),
            "response": _compact(response1),
            "started_at": STARTED.isoformat(),
            "latency_ms": 2300,
        },
        {
            **base,
            "request": _compact(request2),
            "response": _compact(response2),
            "started_at": (STARTED + timedelta(seconds=9)).isoformat(),
            "latency_ms": 4100,
        },
    ]


def _openai_body() -> dict[str, Any]:
    call = {
        "type": "function_call",
        "id": "fc_1043",
        "call_id": "call_1043",
        "name": "track_parcel",
        "arguments": _compact({"order": ORDER}),
        "status": "completed",
    }
    response = {
        "id": "resp_1043",
        "object": "response",
        "status": "completed",
        "model": "gpt-5-mini-2025-08-07",
        "output": [call],
        "usage": {"input_tokens": 90, "output_tokens": 30},
    }
    request = {
        "model": "gpt-5-mini",
        "input": [{"role": "user", "content": f"Any news on {ORDER}? It is late again."}],
    }
    return {
        "conversation": OTHER_ID,
        "customer": "cus-ben-okafor",
        "format": "openai.responses",
        "request": _compact(request),
        "response": _compact(response),
        "started_at": (STARTED + timedelta(hours=2)).isoformat(),
        "latency_ms": 1200,
        "labels": {"queue": "billing"},
    }


POLICIES = [
    ("*", "input", "$.order", "identifier", "order ids under 'order' link to the order system"),
    ("*", "output", "$.error.message", "display", "what failed, for agents"),
    ("refund_payment", "output", "$", "display", "its errors are plain text"),
]


@dataclass(frozen=True)
class Workspace:
    conversation: Conversation
    other: Conversation


def build() -> Workspace:
    """Policies first (ingest projects with them), then both conversations and an event."""
    for tool, side, path, cls, note in POLICIES:
        FieldPolicy.objects.create(
            tool_name=tool, side=side, path=path, storage_class=cls, note=note
        )
    policies_changed()
    for body in [*_anthropic_bodies(), _openai_body()]:
        conversation_ingest_exchange(data=exchange_input(body))
    conversation = Conversation.objects.get(external_id=BACKEND_ID)
    conversation_record_event(
        conversation=conversation,
        type="escalated",
        at=STARTED + timedelta(minutes=1),
        value={"reason": "tool failed", "queue": "tier 2"},
    )
    conversation.refresh_from_db()
    return Workspace(conversation, Conversation.objects.get(external_id=OTHER_ID))
