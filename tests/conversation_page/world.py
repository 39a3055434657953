"""A three-turn conversation with tool calls, for the timing-and-cost panel and the exports.

``conv-ws2-3turns`` (Anthropic, queue billing, customer ``cus-ws2``): the customer asks about two
orders and thanks the assistant. Turns 1 and 2 each call ``get_order`` (its ``order_id`` kept as
an identifier, its ``status`` as a status) and answer in Markdown; the first model call reasons
without reporting its reasoning tokens (the panel estimates them). Five exchanges, each with its
own time, latency and usage; a price for the snapshot. Its messages are dated 2025, long before
it was stored. ``conv-ws2-other``: the same customer's other conversation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from conversations.ingest.body import exchange_input
from conversations.models import Conversation, FieldPolicy, ModelPrice
from conversations.projection.policies import policies_changed
from conversations.services import conversation_ingest_exchange

BACKEND_ID = "conv-ws2-3turns"
OTHER_ID = "conv-ws2-other"
CUSTOMER = "cus-ws2"
MODEL = "claude-sonnet-4-5-20250929"
STARTED = datetime(2025, 3, 4, 9, 15, 2, tzinfo=UTC)
THOUGHT = "PLANTED-WS2-THOUGHT do not show"
PRICE = {"input": "3", "cache_read": "0.30", "cache_write": "3.75", "output": "15"}
ANSWER_1 = "Order `ORD-1001` has **shipped** with DHL."
ANSWER_2 = "Order `ORD-1002` is *delayed*:\n\n- carrier: UPS\n- new date: Friday"
ANSWER_3 = "You're welcome!"

# (seconds after STARTED, latency ms, usage) per exchange, in order.
TIMES = [
    (0, 1500, {"input_tokens": 400, "output_tokens": 90}),
    (4, 2000, {"input_tokens": 60, "cache_read_input_tokens": 400, "output_tokens": 40}),
    (30, 1200, {"input_tokens": 80, "cache_read_input_tokens": 500, "output_tokens": 35}),
    (33, 1800, {"input_tokens": 70, "cache_read_input_tokens": 580, "output_tokens": 50}),
    (
        50,
        900,
        {
            "input_tokens": 20,
            "cache_read_input_tokens": 700,
            "cache_creation_input_tokens": 100,
            "output_tokens": 8,
        },
    ),
]


def _c(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _call(n: int, order: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_{n}",
        "name": "get_order",
        "input": {"order_id": order},
    }


def _result(n: int, status: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": _c({"status": status})}
        ],
    }


def _bodies() -> list[dict[str, Any]]:
    u1 = {"role": "user", "content": "Where is ORD-1001?"}
    a1 = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": THOUGHT, "signature": "sig-ws2"},
            _call(1, "ORD-1001"),
        ],
    }
    r1 = _result(1, "shipped")
    a2 = {"role": "assistant", "content": [{"type": "text", "text": ANSWER_1}]}
    u2 = {"role": "user", "content": "And ORD-1002?"}
    a3 = {"role": "assistant", "content": [_call(2, "ORD-1002")]}
    r2 = _result(2, "delayed")
    a4 = {"role": "assistant", "content": [{"type": "text", "text": ANSWER_2}]}
    u3 = {"role": "user", "content": "Thanks!"}
    a5 = {"role": "assistant", "content": [{"type": "text", "text": ANSWER_3}]}
    steps = [
        ([u1], a1, "tool_use"),
        ([u1, a1, r1], a2, "end_turn"),
        ([u1, a1, r1, a2, u2], a3, "tool_use"),
        ([u1, a1, r1, a2, u2, a3, r2], a4, "end_turn"),
        ([u1, a1, r1, a2, u2, a3, r2, a4, u3], a5, "end_turn"),
    ]
    bodies = []
    for n, ((history, answer, stop), (after, latency, usage)) in enumerate(
        zip(steps, TIMES, strict=True)
    ):
        request = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "thinking": {"type": "enabled", "budget_tokens": 2048},
            "messages": history,
        }
        response = {
            "id": f"msg_ws2_{n}",
            "type": "message",
            "model": MODEL,
            "stop_reason": stop,
            "usage": usage,
            **answer,
        }
        bodies.append(
            {
                "conversation": BACKEND_ID,
                "customer": CUSTOMER,
                "format": "anthropic.messages",
                "labels": {"queue": "billing"},
                "request": _c(request),
                "response": _c(response),
                "started_at": (STARTED + timedelta(seconds=after)).isoformat(),
                "latency_ms": latency,
            }
        )
    other = {
        **bodies[0],
        "conversation": OTHER_ID,
        "started_at": (STARTED - timedelta(days=3)).isoformat(),
    }
    return [*bodies, other]


@dataclass(frozen=True)
class ThreeTurns:
    conversation: Conversation
    other: Conversation
    price: ModelPrice


def build() -> ThreeTurns:
    FieldPolicy.objects.create(
        tool_name="get_order", side="input", path="$.order_id", storage_class="identifier"
    )
    FieldPolicy.objects.create(
        tool_name="get_order", side="output", path="$.status", storage_class="status"
    )
    policies_changed()
    for body in _bodies():
        conversation_ingest_exchange(data=exchange_input(body))
    price = ModelPrice.objects.create(model=MODEL, **{k: Decimal(v) for k, v in PRICE.items()})
    return ThreeTurns(
        Conversation.objects.get(external_id=BACKEND_ID),
        Conversation.objects.get(external_id=OTHER_ID),
        price,
    )


def expected_price(e: Any, price: ModelPrice) -> Decimal:
    """An exchange's price computed here from its stored row (Anthropic: input excludes the
    cache), to hold the page's figures against."""
    return (
        Decimal(e.input_tokens or 0) * price.input
        + Decimal(e.cache_read_tokens or 0) * price.cache_read
        + Decimal(e.cache_write_tokens or 0) * price.cache_write
        + Decimal(e.output_tokens or 0) * price.output
    ) / Decimal(1_000_000)
