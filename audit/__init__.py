"""The audit log: append-only, sealed into a hash chain off the request path, one entry point.

Everyone writes to the log and the log knows no one: this package imports none of the project's
other apps. An action records itself with

    audit.record("conversation.viewed", actor=request.user, conversation_id=c.pk, page="detail")

inside its own transaction (``record`` raises outside ``transaction.atomic``). The event types
and the detail keys each may carry are declared in ``registry.py`` (read its docstring to add one);
customers are named by ``subject=<customer id>``, which is stored only as a keyed hash
(``subject_hash``). ``record`` is one INSERT and takes no lock other writers share; the sealer
(``sealer.py``, its own beat entry, ``manage.py seal_audit``) chains committed rows later and
signs each batch with a digest. Reads: ``selectors.audit_events``; the read-only admin; rows,
seals and digests are checked by ``manage.py verify_audit`` (``verify.py``). The database refuses
UPDATE, DELETE and TRUNCATE on the log's tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .hashing import query_hash, subject_hash
from .registry import EVENT_TYPES, AuditError, DetailsRefused, EventType, UnknownEventType

if TYPE_CHECKING:
    from .models import AuditEvent

__all__ = [
    "EVENT_TYPES",
    "AuditError",
    "DetailsRefused",
    "EventType",
    "UnknownEventType",
    "actor_label",
    "query_hash",
    "record",
    "subject_hash",
]


def record(
    code: str,
    *,
    actor: Any = None,
    conversation_id: int | None = None,
    subject: str | None = None,
    **details: Any,
) -> AuditEvent:
    """Append one row to the audit log, in the caller's transaction, and return it.

    ``actor``: a Django user, None for the system (the clock, the chat backend's ingest), or an
    object with a ``name`` (a service token: labelled ``service-token:<name>``).
    ``conversation_id``: the internal id. ``subject``: the raw customer id; only its keyed hash is
    stored. ``details``: the keys the event type declares (registry.py), JSON values only.
    Raises UnknownEventType, DetailsRefused, TypeError, or TransactionManagementError outside a
    transaction.
    """
    # Imported here: this package is imported while Django loads its apps, before models may be.
    from .services import record as _record

    return _record(code, actor=actor, conversation_id=conversation_id, subject=subject, **details)


def actor_label(actor: Any) -> str:
    """How the log names ``actor`` (a username, ``service-token:<name>``, ``system``): for
    records that keep who did something beside the audit row."""
    from .services import actor_of

    return actor_of(actor)[1]
