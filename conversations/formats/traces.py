"""What a format's reasoning reader yields (``Format.reasoning``), for the review page only.

A ``Trace`` is one piece of the provider's reasoning as it returned it, unredacted: produced by a
format's reader and read by the review (``conversations/reviews/reasoning.py``), never stored,
logged or queued. Pure Python, like every module of ``formats/``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class TraceKind(enum.StrEnum):
    THINKING = "thinking"  # Anthropic thinking text
    SUMMARY = "summary"  # OpenAI reasoning summary, OpenRouter reasoning.summary
    REASONING_TEXT = "reasoning_text"  # OpenAI reasoning content (open-weight models)
    REASONING_CONTENT = "reasoning_content"  # Chat Completions reasoning_content / reasoning
    REASONING_PART = "reasoning_part"  # AI SDK reasoning part


class Withheld(enum.StrEnum):
    NO = ""
    REDACTED = "redacted"  # the provider withheld it: redacted_thinking, encrypted only
    OMITTED = "omitted"  # empty thinking with a signature: display omitted
    MISSING = "missing"  # an OpenAI reasoning item with no summary: may be fetched


@dataclass(frozen=True, slots=True)
class Trace:
    """One piece of reasoning as the provider returned it (unredacted: the caller redacts).

    Produced by a format's ``reasoning`` reader and by nothing else, and read by the review page
    only (``conversations/reviews/reasoning.py``): no Block, row, log or task ever holds one."""

    kind: TraceKind
    text: str = ""
    withheld: Withheld = Withheld.NO
    item_id: str = ""  # an OpenAI reasoning item's id, to match a fetched summary to it
