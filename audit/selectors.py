"""Reads of the audit log, for compliance pages and the admin.

``audit_events(AuditFilters(...))`` returns the rows newest first, filtered. Each filter is served
by an index paired with ``-id`` (models.py), so a filtered page is an index range scan, whatever
the size of the log. The rows have no relations: nothing to prefetch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from .hashing import subject_hash
from .models import AuditEvent
from .registry import EVENT_TYPES

__all__ = ["AuditFilters", "audit_events"]


@dataclass(frozen=True)
class AuditFilters:
    """Every field optional. ``code`` ending in "." is a prefix ("deletion." is every deletion
    event). ``subject`` is the raw customer id: it is hashed here and never kept. ``since`` is
    inclusive, ``until`` exclusive."""

    code: str | None = None
    actor_id: int | None = None
    actor_label: str | None = None
    conversation_id: int | None = None
    subject: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def audit_events(filters: AuditFilters | None = None) -> QuerySet[AuditEvent]:
    f = filters or AuditFilters()
    qs = AuditEvent.objects.all()
    if f.code:
        if f.code.endswith("."):
            # Expanded through the registry: an IN list uses the code index, LIKE would not.
            qs = qs.filter(code__in=[c for c in EVENT_TYPES if c.startswith(f.code)])
        else:
            qs = qs.filter(code=f.code)
    if f.actor_id is not None:
        qs = qs.filter(actor_id=f.actor_id)
    if f.actor_label:
        qs = qs.filter(actor_label=f.actor_label)
    if f.conversation_id is not None:
        qs = qs.filter(conversation_id=f.conversation_id)
    if f.subject:
        qs = qs.filter(subject_hash=subject_hash(f.subject))
    if f.since is not None:
        qs = qs.filter(at__gte=f.since)
    if f.until is not None:
        qs = qs.filter(at__lt=f.until)
    # Newest first by id: ids are handed out as rows are inserted; the chain's order (the seals')
    # follows commits, so it can differ from id order by a few rows that committed late.
    return qs.order_by("-id")
