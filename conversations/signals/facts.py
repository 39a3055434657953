"""What one exchange contributes to the signals, from its parsed blocks (pure, no database).

Ingest's history stage counts these per exchange (``history.exchange_plan``) and stores them in
the exchange's row, so a rollup can always be recomputed from stored rows (erasure subtracts an
erased exchange's share exactly: ``rollups.py``). No count keeps text or tool input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..blocks import Block, BlockClass, Message

# Finish reasons in five kinds, the rollup's columns, in this order.
FINISHES = ("stop", "length", "tool_use", "refusal", "other")
_STOP = {"end_turn", "stop", "stop_sequence", "completed", "pause_turn"}
_TOOL = {"tool_use", "tool_calls", "function_call", "tool-calls"}


def finish_kind(stop_reason: str, *, truncated: bool, refusal: bool) -> int:
    """The index in ``FINISHES`` of an exchange's finish reason."""
    if truncated:
        return 1
    if refusal:
        return 3
    reason = stop_reason.lower()
    if reason in _STOP:
        return 0
    if reason in _TOOL:
        return 2
    if reason in {"max_tokens", "length", "max_output_tokens", "incomplete"}:
        return 1
    if reason in {"refusal", "content_filter"}:
        return 3
    return 4


@dataclass(frozen=True, slots=True)
class ToolFacts:
    repeated_calls: int  # calls of this answer whose tool and arguments were seen before
    results: int  # tool results sent with this request (the new ones) or served by the provider
    errors: int  # of which reported an error


def _call_key(b: Block) -> str:
    try:
        arguments = json.dumps(b.input, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        arguments = repr(b.input)
    return f"{b.tool_name}\x00{arguments}"


def _is_call(b: Block) -> bool:
    return b.cls is BlockClass.AUDIT and b.tool_name is not None and b.output is None


def _is_result(b: Block) -> bool:
    return b.cls is BlockClass.AUDIT and (b.is_error is not None or b.output is not None)


def tool_facts(
    history: Sequence[Message], new_history: int, output: Sequence[Message]
) -> ToolFacts:
    """Counts over the history sent (its last ``new_history`` messages are new) and the answer."""
    seen: set[str] = set()
    for m in history:
        for b in m.blocks:
            if _is_call(b):
                seen.add(_call_key(b))
    repeated = 0
    for m in output:
        for b in m.blocks:
            if _is_call(b):
                key = _call_key(b)
                if key in seen:
                    repeated += 1
                seen.add(key)
    results = errors = 0
    fresh = list(history[len(history) - new_history :]) if new_history else []
    for m in (*fresh, *output):
        for b in m.blocks:
            if _is_result(b):
                results += 1
                errors += bool(b.is_error)
    return ToolFacts(repeated, results, errors)
