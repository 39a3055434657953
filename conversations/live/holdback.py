"""The hold-back: streamed visible text, redacted, published only where no finding can straddle.

A card number, an IBAN, an e-mail address or a key may arrive cut across deltas
(``"4242 42"``, ``"42 4242 4242"``). Redacting each delta alone would publish the first half in
the clear, so the text of one block waits in ``pending`` until a cut point is safe: a whitespace
boundary at least ``HOLD`` characters before the end of what arrived, outside every finding of
the one redaction pipeline (``projection/redaction``) over what is pending. Every detector's
longest match that can hold whitespace (an IBAN in groups of four: 42 characters) is shorter than
``HOLD``; matches without whitespace (e-mail, keys) are never cut, as cuts fall on whitespace.
When the block ends, the rest is flushed (redacted as one piece).

The pieces published are ``redact(piece)``: a conversation's stored text is ``redact(text)`` of
the whole block, and ``tests/live/test_filters.py`` holds the two equal on every recorded stream.

Pure: no Django, no Redis (the filter's state, held text included, is kept by ``live/state.py``).
"""

from __future__ import annotations

import re

from ..formats.base import join_pieces
from ..projection.project import clean_text
from ..projection.redaction import find, redact

# Characters kept back behind the newest text (the added delay of a live viewer, in text).
HOLD = 48
_SPACE = re.compile(r"\s")


def _cut(pending: str) -> int:
    """The last safe cut in ``pending`` (0: nothing can be published yet)."""
    limit = len(pending) - HOLD
    if limit <= 0:
        return 0
    # The cuts: just after a whitespace, at or before the limit; the last one outside findings.
    cuts = [m.end() for m in _SPACE.finditer(pending, 0, limit)]
    if not cuts:
        return 0
    findings = find(pending)
    if not findings:
        return cuts[-1]
    for p in reversed(cuts):
        if not any(f.start < p < f.end for f in findings):
            return p
    return 0


def hold(pending: str, piece: str) -> tuple[str, str]:
    """``(published, pending)`` after ``piece`` arrived: the redacted text that may leave now,
    and the raw text still held."""
    text = join_pieces((pending, piece)) if pending else piece
    p = _cut(text)
    if p == 0:
        return "", text
    return redact(clean_text(text[:p])), text[p:]


def flush(pending: str) -> str:
    """The held text of a block that ended, redacted."""
    return redact(clean_text(pending)) if pending else ""
