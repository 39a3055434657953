"""Ingest guards: checks that may refuse an exchange before anything of it is stored.

A guard is a function taking a batch of ``(conversation_external_id, customer_external_id)``
pairs and returning the ``Refused`` of those it turns away, by position: one lookup per batch,
whatever its size. A guard has no side effect; what a refusal leaves behind (a counter, an audit
row) is its ``Refused.record``, which the pipeline runs in a transaction of its own once the
refused exchange's transaction has rolled back. Guards are registered by other apps at start-up
(the retention app registers its tombstone check in ``RetentionConfig.ready``), so this app never
imports them. To add one: ``guard_register(fn)`` in an app's ``ready()``.

The pipeline (``pipeline.ingest_batch``) runs the guards *after* it has locked the batch's
conversations, in the same transaction: an erasure commits its tombstone before it locks the
conversation, so either the guard sees the tombstone, or the exchange commits first and the
erasure, waiting on the lock, deletes it with the rest.

A conversation that does not exist yet has no row for an erasure to wait on: an exchange creating
one for a customer being erased could pass the guard before the customer's tombstone commits and
commit after the erasure read its targets. So every ingest transaction holds the *ingest lock*
shared (``ingest_lock_shared``, taken before its guards run), and an erasure, once its tombstones
are committed, passes the *ingest barrier* (``ingest_barrier``: the same lock, exclusive, then
released): every ingest that might have missed the tombstones has committed by then, and every
later one sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from django.db import connection, transaction

from .errors import IngestConflict

# pg_advisory_xact_lock(namespace, key) of the ingest lock: b"ingt" and 1.
_INGEST_LOCK = (0x696E6774, 1)


def ingest_lock_shared() -> None:
    """Hold the ingest lock shared until the current transaction ends (the pipeline's)."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock_shared(%s, %s)", list(_INGEST_LOCK))


def ingest_barrier() -> None:
    """Wait until every ingest transaction in flight has ended (see the module docstring). New
    ingests wait for the moment the lock is held exclusively: one brief pause."""
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(_INGEST_LOCK))


Guard = Callable[[Sequence[tuple[str, str]]], "dict[int, Refused]"]

_GUARDS: list[Guard] = []


class Refused(IngestConflict):
    """The exchange is refused outright (410 for a deleted conversation or customer)."""

    def __init__(
        self,
        detail: str,
        *,
        field: str,
        code: str,
        status: int = 410,
        record: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(detail, field=field, code=code)
        self.status = status
        self.record = record


class Refusals(Exception):
    """Raised by the pipeline, out of its transaction, when a guard refused exchanges of the
    batch (by position): nothing of the batch was stored. ``record()`` then keeps what the
    refusals leave behind, each in its own transaction."""

    def __init__(self, refused: Mapping[int, Refused]) -> None:
        super().__init__(f"{len(refused)} exchange(s) refused by an ingest guard")
        self.refused = dict(refused)

    def record(self) -> None:
        refusals_record(self.refused)


def guard_register(guard: Guard) -> None:
    if guard not in _GUARDS:
        _GUARDS.append(guard)


def ingest_check_many(pairs: Sequence[tuple[str, str]]) -> dict[int, Refused]:
    """Run every guard over the batch; the first refusal of each refused position. Records
    nothing (see ``refusals_record``)."""
    refused: dict[int, Refused] = {}
    for guard in _GUARDS:
        for position, refusal in guard(pairs).items():
            refused.setdefault(position, refusal)
    return refused


def refusals_record(refused: Mapping[int, Refused]) -> None:
    """Keep what each refusal leaves behind (a counter, an audit row), one transaction each."""
    for refusal in refused.values():
        if refusal.record is not None:
            with transaction.atomic():
                refusal.record()
