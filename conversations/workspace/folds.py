"""Long turns folded: a turn with many tool calls shows its first and last calls and how many
lie between; the rest are loaded on demand (``selectors.folded.turn_parts_read``, a fragment of
``PART_CHUNK`` parts at a time), so a turn of 10,000 calls makes a page of kilobytes, not of
megabytes (``bench/console.py`` pins the page's query count; ``tests/workspace/`` its size).

The timeline is still built whole (every call joined to its result: the header's counts, the
failed calls, the customer panel's identifiers and the timing panel read it); only what is
rendered is folded. A call inside a fold is reached through the fold's anchor (``anchor``), so
every link to a call (a failed call in the header, a bar of the timing panel) lands on the page.

To change how much a fold keeps: ``FOLD_OVER``, ``KEEP_FIRST``, ``KEEP_LAST``. Pure: no query.
"""

from __future__ import annotations

from dataclasses import dataclass

from .timeline import Part, Timeline, Turn

FOLD_OVER = 12  # a turn with more tool calls than this is folded
KEEP_FIRST = 3  # tool calls shown before the fold
KEEP_LAST = 3  # and after it
PART_CHUNK = 200  # parts a request for the fold's content returns at most


@dataclass(frozen=True)
class Fold:
    """The parts ``start`` to ``end`` (exclusive) of turn ``turn``, not rendered with the page:
    ``calls`` tool calls among them."""

    turn: str
    start: int
    end: int
    calls: int

    @property
    def anchor(self) -> str:
        return f"fold-{self.turn}"


def _tool_positions(turn: Turn) -> list[int]:
    return [i for i, part in enumerate(turn.parts) if part.kind == "tool"]


def fold_of(turn: Turn) -> Fold | None:
    """The fold of a turn with more than ``FOLD_OVER`` tool calls (None for a shorter one): from
    the part after its ``KEEP_FIRST``-th call to the part before its ``KEEP_LAST``-th from last."""
    tools = _tool_positions(turn)
    if len(tools) <= FOLD_OVER:
        return None
    start = tools[KEEP_FIRST - 1] + 1
    end = tools[-KEEP_LAST]
    return Fold(turn.key, start, end, len(tools) - KEEP_FIRST - KEEP_LAST)


def fold_timeline(timeline: Timeline) -> dict[str, str]:
    """Fold every long turn of ``timeline`` (each such turn's ``fold`` set) and return, for each
    folded call's key, the anchor of its fold."""
    anchors: dict[str, str] = {}
    for turn in timeline.turns:
        fold = fold_of(turn)
        turn.fold = fold
        if fold is None:
            continue
        for part in turn.parts[fold.start : fold.end]:
            if part.tool is not None:
                anchors[part.tool.key] = fold.anchor
    return anchors


def shown_parts(turn: Turn) -> tuple[list[Part], list[Part]]:
    """The parts rendered before the fold and after it (all of them, after none, unfolded)."""
    fold = turn.fold
    if fold is None:
        return turn.parts, []
    return turn.parts[: fold.start], turn.parts[fold.end :]


def fold_chunk(turn: Turn, start: int) -> tuple[list[Part], int | None]:
    """Up to ``PART_CHUNK`` of the fold's parts from part ``start`` (an index into the turn's
    parts, inside the fold), and where the next chunk starts (None: the fold ends here)."""
    fold = turn.fold
    if fold is None or not fold.start <= start < fold.end:
        return [], None
    end = min(start + PART_CHUNK, fold.end)
    return turn.parts[start:end], (end if end < fold.end else None)
