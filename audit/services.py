"""The one writer of the audit log: ``record()`` (exported as ``audit.record``).

An audit row is written in the transaction of the action it records: if the action rolls back,
so does its row; if the row cannot be written, the action fails with it (no audit row, no read).
``record()`` therefore refuses to run outside ``transaction.atomic``.

``record()`` is one INSERT and takes no lock that other writers share: a hundred pages reading at
once append their rows side by side, and a transaction held open after its ``record()`` holds up
nobody. The row is not chained when it is written. The sealer (``sealer.py``, on its own beat
entry) chains committed rows later, in an order it records, and signs each batch; until then a
row is protected by the append-only trigger alone, and ``verify_audit`` reports rows left unsealed
for longer than a few sealer intervals.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import connections, router, transaction

from .hashing import clean_details, subject_hash
from .models import AuditEvent
from .registry import check_details, event_type

ACTOR_LABEL_MAX = AuditEvent._meta.get_field("actor_label").max_length or 200


def actor_of(actor: Any) -> tuple[int | None, str]:
    """(actor_id, actor_label) for a Django user, None (the system), a named service token or an
    object naming itself by ``audit_actor`` (a share link)."""
    if actor is None:
        return None, "system"
    if isinstance(actor, AnonymousUser):
        return None, "anonymous"
    if isinstance(actor, AbstractBaseUser):
        return actor.pk, actor.get_username()[:ACTOR_LABEL_MAX]
    label = getattr(actor, "audit_actor", None)
    if isinstance(label, str) and label:  # an actor that is not a person (a share link)
        return None, label[:ACTOR_LABEL_MAX]
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
    if not connections[alias].in_atomic_block:
        raise transaction.TransactionManagementError(
            f"audit.record({code!r}) must run inside the transaction of the action it records "
            "(transaction.atomic)"
        )
    # ``at`` (clock_timestamp()) and ``xid`` (pg_current_xact_id()) are filled by the database
    # and come back with the INSERT's RETURNING.
    return AuditEvent.objects.using(alias).create(
        code=code,
        actor_id=actor_id,
        actor_label=actor_label,
        conversation_id=conversation_id,
        subject_hash=hashed_subject,
        details=clean,
    )
