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

__all__ = ["Trace", "TraceKind", "Withheld", "fetched_reasoning", "reasoning_of"]


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


def fetched_reasoning(fmt: str, body: Any) -> list[Trace]:
    """The reasoning of a response fetched from the provider at read time (the format's
    ``summary`` fetch, OpenAI ``GET /v1/responses/{id}``): its messages, as the profile's
    ``summary.items`` finds them, read as stored messages are."""
    try:
        reader = get(fmt)
    except FormatError:
        return []
    summary = reader.profile.summary
    if summary is None:
        return []
    return [trace for item in summary.items(body) for trace in reader.reasoning(item)]
