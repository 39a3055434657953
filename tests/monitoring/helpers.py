"""Exchanges for the signals' tests: Anthropic bodies with chosen usage, finish, tools, latency."""

from __future__ import annotations

import json
from typing import Any

from conversations.ingest.body import exchange_input
from conversations.services import conversation_ingest_exchange
from tests.factories import ExchangeBodyFactory


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def thinking(t: str = "MARKER-REASONING-SIGNALS-5c1e", sig: str = "sig-1") -> dict[str, Any]:
    return {"type": "thinking", "thinking": t, "signature": sig}


def tool_use(call: str, name: str = "lookup", args: Any = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": name, "input": args or {"order_id": "1"}}


def tool_result(call: str, *, error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call, "content": "ok", "is_error": error}


def store(
    conversation: str,
    messages: list[dict[str, Any]],
    content: list[dict[str, Any]],
    *,
    queue: str = "billing",
    model: str = "claude-sonnet-4-5",
    snapshot: str = "claude-sonnet-4-5-20250929",
    stop: str = "end_turn",
    output: int = 50,
    reasoning: int | None = None,
    latency: int | None = 800,
    indent: int | None = None,
    started_at: str | None = None,
    max_tokens: int = 1024,
) -> dict[str, Any]:
    """Store one exchange whose request sends ``messages`` and whose answer is ``content``."""
    usage: dict[str, Any] = {"input_tokens": 100, "output_tokens": output}
    if reasoning is not None:
        usage["output_tokens_details"] = {"thinking_tokens": reasoning}
    body = ExchangeBodyFactory(
        conversation=conversation,
        customer=f"cus-{conversation}",
        request=json.dumps(
            {"model": model, "max_tokens": max_tokens, "messages": messages}, indent=indent
        ),
        content=content,
        response_model=snapshot,
        stop_reason=stop,
        usage=usage,
        queue=queue,
    )
    if latency is not None:
        body["latency_ms"] = latency
    if started_at is not None:
        body["started_at"] = started_at
    stored = conversation_ingest_exchange(data=exchange_input(body))
    assert not stored.replayed
    return stored.as_json()


SNAPSHOT = "claude-sonnet-4-5-20250929"


def sonnet_price() -> None:
    """The price table's row for ``SNAPSHOT`` (dollars per million tokens of each kind)."""
    from decimal import Decimal

    from conversations.models import ModelPrice
    from conversations.monitoring.alerts import model_price_save

    model_price_save(
        price=ModelPrice(
            model=SNAPSHOT,
            input=Decimal(3),
            cache_read=Decimal("0.3"),
            cache_write=Decimal("3.75"),
            output=Decimal(15),
        )
    )
