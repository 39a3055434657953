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
from ..formats import profile
from ..formats.profile import FINISH_COLUMNS, FINISH_ORDER, Finish

# Finish reasons in five kinds (``formats.profile.Finish``), the rollup's columns, in this order.
FINISHES = FINISH_COLUMNS


def finish_kind(fmt: str, stop_reason: str, *, truncated: bool, refusal: bool) -> int:
    """The index in ``FINISHES`` of an exchange's finish: its format's finish table (the one
    the page's words and the parser's flags read), the flags first (a stream broken off is
    truncated whatever its last reason said)."""
    if truncated:
        kind = Finish.TRUNCATED
    elif refusal:
        kind = Finish.REFUSED
    else:
        found = profile(fmt)
        kind = found.finish(stop_reason) if found is not None else Finish.OTHER
    return FINISH_ORDER.index(kind)


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
