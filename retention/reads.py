"""Read services of the compliance pages: deletion requests, their preview, legal holds and the
audit log. Shaped like ``conversations.reads``: access first (compliance staff and console
admins; anyone else gets ``Http404``, like a page that does not exist), then the tuned
selectors, then the audit row as the last statement of the transaction; a plain dataclass back,
rendered by the view after the commit.

The audit log's page lives here, not in ``audit/``, because who may read it is the compliance
role (``conversations.permissions.is_compliance``), and the audit app imports no other app.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.http import Http404

import audit
from audit.models import AuditEvent
from audit.selectors import AuditFilters, audit_events
from conversations.permissions import require_compliance

from .models import DeletionRequest, LegalHold, Receipt
from .selectors import Sla, deletion_request_sla, deletion_requests, legal_holds
from .services import deletion_preview, receipt_verify

__all__ = [
    "AuditLog",
    "DeletionDetail",
    "DeletionList",
    "DeletionPreview",
    "HoldList",
    "audit_log_read",
    "deletion_preview_read",
    "deletion_request_read",
    "deletion_requests_read",
    "legal_holds_read",
]

DELETIONS_PAGE = 50
AUDIT_PAGE = 100
HOLDS_SHOWN = 500


@dataclass(frozen=True)
class DeletionList:
    rows: list[tuple[DeletionRequest, Sla]]
    older_than: int | None  # the ``before`` cursor of the next page, if there is one


@transaction.atomic
def deletion_requests_read(
    *, user: Any, status: str | None = None, before: int | None = None
) -> DeletionList:
    require_compliance(user)
    rows = list(deletion_requests(status=status, before=before)[: DELETIONS_PAGE + 1])
    older = None
    if len(rows) > DELETIONS_PAGE:
        rows = rows[:DELETIONS_PAGE]
        older = rows[-1].pk
    audit.record(
        "deletion.viewed",
        actor=user,
        page="list",
        results=len(rows),
        filters=["status"] if status else [],
    )
    return DeletionList([(r, deletion_request_sla(r)) for r in rows], older)


@dataclass(frozen=True)
class DeletionDetail:
    request: DeletionRequest
    sla: Sla
    receipt: Receipt | None
    receipt_valid: bool | None
    planned: int


@transaction.atomic
def deletion_request_read(*, user: Any, id: int) -> DeletionDetail:
    require_compliance(user)
    row = deletion_requests().filter(pk=id).first()
    if row is None:
        raise Http404("no such deletion request")
    receipt = (
        getattr(row, "receipt", None) if row.status == DeletionRequest.Status.COMPLETED else None
    )
    audit.record("deletion.viewed", actor=user, page="detail", request=row.pk)
    return DeletionDetail(
        request=row,
        sla=deletion_request_sla(row),
        receipt=receipt,
        receipt_valid=receipt_verify(receipt) if receipt else None,
        planned=len(row.conversation_ids),
    )


@dataclass(frozen=True)
class DeletionPreview:
    conversations: int
    counts: dict[str, int]
    missing: int  # named conversations that do not exist (or no longer)


@transaction.atomic
def deletion_preview_read(
    *, user: Any, customer: str = "", conversations: list[str] | None = None
) -> DeletionPreview:
    """What a request would erase now, counted; nothing is written but the audit row."""
    require_compliance(user)
    named = conversations or []
    ids, counts = deletion_preview(customer=customer, conversations=named)
    audit.record(
        "deletion.previewed",
        actor=user,
        subject=customer or None,
        scope="customer" if customer else "conversations",
        conversations=len(ids),
        rows=sum(counts.values()),
    )
    return DeletionPreview(len(ids), counts, len(named) - len(ids) if named else 0)


@dataclass(frozen=True)
class HoldList:
    rows: list[tuple[LegalHold, int]]  # each hold, and the requests it blocks now


@transaction.atomic
def legal_holds_read(*, user: Any) -> HoldList:
    require_compliance(user)
    rows = list(legal_holds()[:HOLDS_SHOWN])
    active = [h.pk for h in rows if h.released_at is None]
    blocked = {
        row["blocked_by_id"]: row["n"]
        for row in DeletionRequest.objects.filter(
            blocked_by_id__in=active, status=DeletionRequest.Status.BLOCKED
        )
        .values("blocked_by_id")
        .annotate(n=Count("pk"))
    }
    audit.record("deletion.viewed", actor=user, page="holds", results=len(rows))
    return HoldList([(h, blocked.get(h.pk, 0)) for h in rows])


@dataclass(frozen=True)
class AuditLog:
    rows: list[AuditEvent]
    older_than: int | None


@transaction.atomic
def audit_log_read(
    *,
    user: Any,
    code: str | None = None,
    actor_username: str | None = None,
    conversation_id: int | None = None,
    subject: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    before: int | None = None,
    used: list[str] | None = None,
) -> AuditLog:
    """The audit log, newest first, filtered, ``AUDIT_PAGE`` rows a page. ``used``: the names of
    the filters set, for the audit row (never their values)."""
    require_compliance(user)
    actor_id = None
    if actor_username:
        from django.contrib.auth import get_user_model

        found = get_user_model().objects.filter(username=actor_username)
        actor_id = found.values_list("pk", flat=True).first() or -1  # unknown: no rows
    qs = audit_events(
        AuditFilters(
            code=code,
            actor_id=actor_id,
            conversation_id=conversation_id,
            subject=subject,
            since=since,
            until=until,
        )
    )
    if before is not None:
        qs = qs.filter(pk__lt=before)
    rows = list(qs[: AUDIT_PAGE + 1])
    older = None
    if len(rows) > AUDIT_PAGE:
        rows = rows[:AUDIT_PAGE]
        older = rows[-1].pk
    audit.record(
        "audit.viewed", actor=user, page="list", filters=sorted(used or []), results=len(rows)
    )
    return AuditLog(rows, older)
