"""Stage 3 of ingest: the batch projected and redacted (pure, no database).

The blocks of every new message go through the one projection (``projection.project_blocks``),
message by message in sequence order, each conversation with its ``ToolNames`` (its calls stored
before the batch, looked up once by ``store.stored_tool_names``, then the batch's own). The
Exchange row's columns come from the parsed parameters, cleaned for PostgreSQL; types nobody has
classified are counted for the admins' list.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..blocks import BlockClass, ParsedExchange
from ..formats import profile
from ..formats.profile import estimate_reasoning
from ..projection.project import Policies, ToolNames, clean_text, project_blocks, unresolved_calls
from .body import ExchangeInput
from .history import Planned

# Per planned exchange, per new message: its projected blocks (column values).
Projected = list[list[list[dict[str, Any]]]]


def calls_to_look_up(planned: Sequence[Planned]) -> set[tuple[int, str]]:
    """(conversation, call id) of the tool results whose call is not in the batch before them."""
    by_conversation: dict[int, list[Sequence[Any]]] = {}
    for p in planned:
        blocks = by_conversation.setdefault(p.conversation.pk, [])
        blocks.extend(pm.message.blocks for pm in p.plan.new_messages)
    return {
        (pk, call_id)
        for pk, messages in by_conversation.items()
        for call_id in unresolved_calls(messages)
    }


def project_batch(
    planned: Sequence[Planned], policies: Policies, stored_names: Mapping[tuple[int, str], str]
) -> Projected:
    """The projected blocks of every new message of the batch."""
    names: dict[int, ToolNames] = {}
    for (pk, call_id), tool in stored_names.items():
        names.setdefault(pk, ToolNames()).learn_stored(call_id, tool)
    out: Projected = []
    for p in planned:
        conversation_names = names.setdefault(p.conversation.pk, ToolNames())
        out.append(
            [
                project_blocks(pm.message.blocks, policies, conversation_names)
                for pm in p.plan.new_messages
            ]
        )
    return out


def exchange_fields(data: ExchangeInput, parsed: ParsedExchange) -> dict[str, Any]:
    """The Exchange row's columns from the parsed parameters."""
    p = parsed.params

    def s(value: str | None, n: int) -> str:
        return clean_text(value or "")[:n]

    def n(value: int | None) -> int | None:
        return value if value is not None and 0 <= value < 2**31 else None

    reasoning, estimated = reasoning_tokens(data.format, parsed)
    return {
        "format": data.format,
        "streamed": data.stream is not None or data.stream_base64 is not None,
        "started_at": data.started_at,
        "latency_ms": data.latency_ms,
        "requested_model": s(p.requested_model, 200),
        "response_model": s(p.response_model, 200),
        "response_id": s(p.response_id, 200),
        "thinking": s(p.thinking, 40),
        "effort": s(p.effort, 40),
        "budget_tokens": n(p.budget_tokens),
        "max_tokens": n(p.max_tokens),
        "input_tokens": n(p.usage.input_tokens),
        "cache_read_tokens": n(p.usage.cache_read_tokens),
        "cache_write_tokens": n(p.usage.cache_write_tokens),
        "output_tokens": n(p.usage.output_tokens),
        "reasoning_tokens": n(reasoning),
        "reasoning_estimated": estimated and n(reasoning) is not None,
        "stop_reason": s(p.stop_reason, 60),
        "server_tool_counts": {
            clean_text(k)[:100]: v for k, v in p.server_tool_counts.items() if isinstance(v, int)
        },
        "truncated": p.truncated,
        "refusal": p.refusal,
        "stream_error": s(p.stream_error, 100),
        "cancelled": p.cancelled,
        "unknown_chunks": [s(kind, 100) for kind in p.unknown_chunks[:20]],
        "input_transformations": [
            {clean_text(k): clean_text(v)[:100] for k, v in entry.items()}
            for entry in p.input_transformations[:100]
        ],
    }


def reasoning_tokens(fmt: str, parsed: ParsedExchange) -> tuple[int | None, bool]:
    """The exchange's reasoning tokens, and whether they were estimated: as the provider
    reported them, else (its profile's ``usage.split``: Anthropic counts thinking inside
    ``output_tokens``) shared out of the output tokens by the characters of each."""
    usage = parsed.params.usage
    found = profile(fmt)
    split = found.usage.split if found is not None else None
    if usage.reasoning_tokens is not None or split is None or not usage.output_tokens:
        return usage.reasoning_tokens, False
    reasoning = other = 0
    for message in parsed.output:
        try:
            r, o = split(json.loads(message.raw))
        except ValueError:
            continue
        reasoning, other = reasoning + r, other + o
    estimate = estimate_reasoning(usage.output_tokens, reasoning, other)
    return estimate, estimate is not None


def message_role(role: str) -> str:
    """The role column of a message."""
    return clean_text(role)[:20]


def unknown_types(planned: Sequence[Planned]) -> Counter[tuple[str, str]]:
    """(format, provider type) of the blocks nobody classified, counted."""
    return Counter(
        (p.data.format, clean_text(b.type)[:100])
        for p in planned
        for pm in p.plan.new_messages
        for b in pm.message.blocks
        if b.cls is BlockClass.UNKNOWN
    )
