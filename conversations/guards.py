"""Ingest guards: checks that may refuse an exchange before anything of it is stored.

A guard is a function taking a batch of ``(conversation_external_id, customer_external_id)``
pairs and returning the ``Refused`` of those it turns away, by position: one lookup per batch,
whatever its size. Guards are registered by other apps at start-up (the
retention app registers its tombstone check in ``RetentionConfig.ready``), so this app never
imports them.
``conversation_ingest_exchange`` runs them first; ``writer.ingest_batch`` runs them once for its
items (unless its caller already did) and reports a refused item as a rejected line. To add
one: ``guard_register(fn)`` in an app's ``ready()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .planning import IngestConflict

Guard = Callable[[Sequence[tuple[str, str]]], "dict[int, Refused]"]

_GUARDS: list[Guard] = []


class Refused(IngestConflict):
    """The exchange is refused outright (410 for a deleted conversation or customer)."""

    def __init__(self, detail: str, *, field: str, code: str, status: int = 410) -> None:
        super().__init__(detail, field=field, code=code)
        self.status = status


def guard_register(guard: Guard) -> None:
    if guard not in _GUARDS:
        _GUARDS.append(guard)


def ingest_check_many(pairs: Sequence[tuple[str, str]]) -> dict[int, Refused]:
    """Run every guard over the batch; the first refusal of each refused position."""
    refused: dict[int, Refused] = {}
    for guard in _GUARDS:
        for position, refusal in guard(pairs).items():
            refused.setdefault(position, refusal)
    return refused


def ingest_check(conversation_external_id: str, customer_external_id: str) -> None:
    """Run every guard for one exchange; raises its ``Refused``."""
    refused = ingest_check_many([(conversation_external_id, customer_external_id)])
    if refused:
        raise refused[0]
