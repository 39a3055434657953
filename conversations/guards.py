"""Ingest guards: checks that may refuse an exchange before anything of it is stored.

A guard is a function ``(conversation_external_id, customer_external_id) -> None`` that raises
``Refused`` to turn the exchange away. Guards are registered by other apps at start-up (the
retention app registers its tombstone check in ``RetentionConfig.ready``), so this app never
imports them.
``conversation_ingest_exchange`` runs them first; ``writer.ingest_batch`` runs them for each item
and reports a refused item as a rejected line. To add one: ``guard_register(fn)`` in an app's
``ready()``.
"""

from __future__ import annotations

from collections.abc import Callable

from .planning import IngestConflict

Guard = Callable[[str, str], None]

_GUARDS: list[Guard] = []


class Refused(IngestConflict):
    """The exchange is refused outright (410 for a deleted conversation or customer)."""

    def __init__(self, detail: str, *, field: str, code: str, status: int = 410) -> None:
        super().__init__(detail, field=field, code=code)
        self.status = status


def guard_register(guard: Guard) -> None:
    if guard not in _GUARDS:
        _GUARDS.append(guard)


def ingest_check(conversation_external_id: str, customer_external_id: str) -> None:
    """Run every guard; raises the first ``Refused``."""
    for guard in _GUARDS:
        guard(conversation_external_id, customer_external_id)
