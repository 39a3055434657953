"""The one way to the reasoning of a stored message, for the review page only.

Formats never put deliberation into a ``Block``: NEVER blocks carry their type and nothing else,
so no projection, index or export can hold it. Each format has a reader of its reasoning
(``Format.reasoning`` in ``formats/<name>/parser.py``, beside the parser that knows the shapes), and
this module is its one caller: the review (``reviews.review_read``) decrypts a message's raw
text and calls ``reasoning_of(format, raw)`` here, at read time.
``tests/test_architecture.py`` fails when anything outside ``conversations/reviews/`` calls a
reader, so "where can deliberation leave the raw bytes?" is answered by this package.

It never raises on a shape it does not expect (the message was validated at ingest): what a
reader does not recognise it skips. To add a reasoning shape: extend the format's ``reasoning``
and add a case to ``tests/review/test_reasoning.py``.
"""

from __future__ import annotations

import json
from typing import Any

from ..formats import FormatError, get
from ..formats.traces import Trace, TraceKind, Withheld

__all__ = ["Trace", "TraceKind", "Withheld", "openai_response_traces", "reasoning_of"]


def reasoning_of(fmt: str, raw: str) -> list[Trace]:
    """The reasoning in one stored message's raw text, in order; [] for none."""
    try:
        reader = get(fmt)
    except FormatError:
        return []
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return []
    return list(reader.reasoning(value))


def openai_response_traces(body: Any) -> list[Trace]:
    """The reasoning of an OpenAI Responses response object (``GET /v1/responses/{id}``): its
    output items, read as stored items are."""
    output = body.get("output") if isinstance(body, dict) else None
    if not isinstance(output, list):
        return []
    reader = get("openai.responses")
    return [trace for item in output for trace in reader.reasoning(item)]
