"""A conversation whose second turn is one answer of ``calls`` tool calls (a parallel fan-out),
their results in the next request (call 150 and every thousandth after it failed), then a short
answer: the long turn of issue 35."""

from __future__ import annotations

import json
from typing import Any

from conversations.models import Conversation
from tests.factories import ExchangeBodyFactory, ingest


def _call(i: int) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_{i:05d}",
        "name": "get_order",
        "input": {"order_id": f"ORD-{7000000 + i}"},
    }


def _result(i: int) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": f"toolu_{i:05d}",
        "content": "not found" if i % 1000 == 150 else "shipped",
        "is_error": i % 1000 == 150,
    }


def long_turn(calls: int, *, name: str = "conv-long-turn", queue: str = "billing") -> Conversation:
    """Stored through the real ingest: the call and then the answer after the results."""
    question = {"role": "user", "content": "Where are my orders?"}
    answer = {"role": "assistant", "content": [_call(i) for i in range(calls)]}
    ingest(
        ExchangeBodyFactory(
            conversation=name,
            question=question["content"],
            content=answer["content"],
            stop_reason="tool_use",
            usage={"input_tokens": 50, "output_tokens": 20 * calls},
            queue=queue,
        )
    )
    results = {"role": "user", "content": [_result(i) for i in range(calls)]}
    body = ExchangeBodyFactory(
        conversation=name,
        history=[question, answer],
        question="",
        content=[{"type": "text", "text": f"All {calls} orders are on their way."}],
        queue=queue,
    )
    request = json.loads(body["request"])
    request["messages"][-1] = results
    body["request"] = json.dumps(request)
    return ingest(body)
