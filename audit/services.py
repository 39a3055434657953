"""The one writer of the audit log: ``record()`` (exported as ``audit.record``).

An audit row is written in the transaction of the action it records: if the action rolls back,
so does its row; if the row cannot be written, the action fails with it (no audit row, no read).
``record()`` therefore refuses to run outside ``transaction.atomic``.

Appends are serialised by a transaction-level advisory lock, so the chain stays a line under
concurrency: under the lock the next id, the time and the last row's hash are read, and the row
is inserted. The lock is held until the caller's transaction ends, so every audited action
commits its row in chain order; the cost is that audited transactions queue behind each other
from their ``record()`` call to their commit. Call ``record()`` as the last write of an action
(after its own row locks are taken), which keeps that window short and avoids lock-order
deadlocks between the audit lock and the action's rows.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import connections, router, transaction

from .hashing import GENESIS, clean_details, row_hash, subject_hash
from .models import TABLE, AuditEvent
from .registry import check_details, event_type

# pg_advisory_xact_lock key for appends: fixed, arbitrary, b"audit_ch" as a bigint. Any other
# code taking this key would queue behind the audit log, so it is used here only.
APPEND_LOCK_KEY = 0x61756469745F6368

# The next id, the time (the database's clock: one clock for every web and worker process, so
# ``at`` follows id order), the chain's head, and the isolation level (checked below).
_NEXT_SQL = (
    "SELECT nextval(pg_get_serial_sequence(%s, 'id')), clock_timestamp(), "  # noqa: S608
    f"(SELECT hash FROM {TABLE} ORDER BY id DESC LIMIT 1), "
    "current_setting('transaction_isolation')"
)

ACTOR_LABEL_MAX = AuditEvent._meta.get_field("actor_label").max_length or 200


def actor_of(actor: Any) -> tuple[int | None, str]:
    """(actor_id, actor_label) for a Django user, None (the system) or a named service token."""
    if actor is None:
        return None, "system"
    if isinstance(actor, AnonymousUser):
        return None, "anonymous"
    if isinstance(actor, AbstractBaseUser):
        return actor.pk, actor.get_username()[:ACTOR_LABEL_MAX]
    name = getattr(actor, "name", None)
    if isinstance(name, str) and name:
        return None, f"service-token:{name}"[:ACTOR_LABEL_MAX]
    raise TypeError(
        f"audit actor must be a user, None (the system) or a named token, not {type(actor)!r}"
    )


def record(
    code: str,
    *,
    actor: Any = None,
    conversation_id: int | None = None,
    subject: str | None = None,
    **details: Any,
) -> AuditEvent:
    t = event_type(code)
    check_details(t, details)
    clean = clean_details(details)
    if conversation_id is not None and (
        isinstance(conversation_id, bool) or not isinstance(conversation_id, int)
    ):
        # An int, never the chat backend's conversation id (a string): invariant 6.
        raise TypeError(f"conversation_id is the internal id (an int), not {conversation_id!r}")
    actor_id, actor_label = actor_of(actor)
    hashed_subject = subject_hash(subject) if subject is not None else None

    alias = router.db_for_write(AuditEvent) or "default"
    connection = connections[alias]
    if not connection.in_atomic_block:
        raise transaction.TransactionManagementError(
            f"audit.record({code!r}) must run inside the transaction of the action it records "
            "(transaction.atomic)"
        )
    with connection.cursor() as cursor:
        # Two statements, not one: under READ COMMITTED each statement reads a fresh snapshot,
        # and the second must be taken after the lock is ours to see the last committed row.
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [APPEND_LOCK_KEY])
        cursor.execute(_NEXT_SQL, [TABLE])
        row = cursor.fetchone()
    assert row is not None
    next_id, at, last_hash, isolation = row
    if isolation != "read committed":
        # A snapshot older than the lock would miss the last row and fork the chain.
        raise transaction.TransactionManagementError(
            f"audit.record needs READ COMMITTED isolation, not {isolation}"
        )
    prev_hash = last_hash or GENESIS
    event = AuditEvent(
        id=next_id,
        at=at,
        code=code,
        actor_id=actor_id,
        actor_label=actor_label,
        conversation_id=conversation_id,
        subject_hash=hashed_subject,
        details=clean,
        prev_hash=prev_hash,
    )
    event.hash = row_hash(
        id=next_id,
        at=at,
        code=code,
        actor_id=actor_id,
        actor_label=actor_label,
        conversation_id=conversation_id,
        subject_hash=hashed_subject,
        details=clean,
        prev_hash=prev_hash,
    )
    event.save(force_insert=True, using=alias)
    return event
