"""Where a conversation stands, folded from what the customer did next (the events API).

``open`` until an event says otherwise; ``escalated`` (handed to a person, awaiting one),
``resolved`` and ``abandoned`` as the events say. A customer who replies after a resolution or
an abandonment reopens the conversation; a reply while escalated leaves it escalated (still
awaiting a person). Ratings change nothing. Events are folded in the order they happened (``at``,
then arrival), so a late event with an earlier time lands where it belongs.

To add a status: add it to ``models.STATUS_CHOICES`` and say here which event leads to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

OPEN = "open"
ESCALATED = "escalated"
RESOLVED = "resolved"
ABANDONED = "abandoned"
STATUSES = (OPEN, ESCALATED, RESOLVED, ABANDONED)

# The events that set a status outright.
_SETS = {"escalated": ESCALATED, "resolved": RESOLVED, "abandoned": ABANDONED}


def conversation_status(events: Iterable[tuple[str, datetime]]) -> tuple[str, datetime | None]:
    """(status, when it was set) after ``events`` (type, at), given in the order they happened.
    ``None`` for the time: open since the conversation began."""
    status, at = OPEN, None
    for kind, when in events:
        if kind in _SETS:
            status, at = _SETS[kind], when
        elif kind == "user_replied" and status in (RESOLVED, ABANDONED):
            status, at = OPEN, when
    return status, at
