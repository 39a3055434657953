"""The verifier: walk the log in id order, recompute every hash, check every link.

Constant memory: one server-side cursor, read in chunks. A row whose stored hash differs from the
hash of its own values was altered ("hash mismatch"); a row whose ``prev_hash`` is not the hash of
the row before it follows a removed, inserted or re-hashed row ("broken link"). The first broken
row is reported and the walk stops there.

What it cannot see: a rewrite of the whole tail with recomputed hashes. Keep the head hash it
prints somewhere the database's superusers cannot write, and compare.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import router, transaction

from .hashing import GENESIS, row_hash
from .models import AuditEvent

__all__ = ["ChainReport", "verify_chain"]

FIELDS = (
    "id",
    "at",
    "code",
    "actor_id",
    "actor_label",
    "conversation_id",
    "subject_hash",
    "details",
    "prev_hash",
    "hash",
)


@dataclass(frozen=True)
class ChainReport:
    verified: int
    head_id: int | None = None
    head_hash: str = GENESIS
    broken_id: int | None = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_id is None


def verify_chain(
    *, chunk_size: int = 2000, progress: Callable[[int], object] | None = None
) -> ChainReport:
    """Check the whole chain. ``progress(n)`` is called with the rows read since the last call."""
    # In a transaction, the server-side cursor streams from one snapshot; outside one (autocommit)
    # Django declares it WITH HOLD, which makes the server materialise the whole result first.
    with transaction.atomic(using=router.db_for_read(AuditEvent) or "default"):
        return _walk(chunk_size, progress)


def _walk(chunk_size: int, progress: Callable[[int], object] | None) -> ChainReport:
    expected_prev = GENESIS
    previous_id: int | None = None
    verified = 0
    rows = AuditEvent.objects.order_by("id").values_list(*FIELDS).iterator(chunk_size=chunk_size)
    for n, row in enumerate(rows, start=1):
        (id_, at, code, actor_id, actor_label, conversation_id, subject, details, prev, stored) = (
            row
        )
        if prev != expected_prev:
            after = f"row {previous_id}" if previous_id is not None else "the start of the chain"
            return ChainReport(
                verified,
                previous_id,
                expected_prev,
                id_,
                f"broken link: prev_hash {prev} is not the hash of {after} ({expected_prev}); "
                "a row before it was removed, inserted or altered",
            )
        computed = row_hash(
            id=id_,
            at=at,
            code=code,
            actor_id=actor_id,
            actor_label=actor_label,
            conversation_id=conversation_id,
            subject_hash=subject,
            details=details,
            prev_hash=prev,
        )
        if computed != stored:
            return ChainReport(
                verified,
                previous_id,
                expected_prev,
                id_,
                f"hash mismatch: stored {stored}, its values hash to {computed}; "
                "the row was altered",
            )
        verified += 1
        expected_prev = stored
        previous_id = id_
        if progress is not None and n % chunk_size == 0:
            progress(chunk_size)
    if progress is not None and verified % chunk_size:
        progress(verified % chunk_size)
    return ChainReport(verified, previous_id, expected_prev)
