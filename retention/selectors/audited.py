"""The audited selectors of the compliance pages: deletion requests, their preview, legal holds and
the audit log. Shaped like ``conversations.selectors.audited``: access first (compliance staff and
console admins; anyone else gets ``Http404``, like a page that does not exist), then the tuned
selectors, then the audit row as the last statement of the transaction; a plain dataclass back,
rendered by the view after the commit.

The audit log's page lives here, not in ``audit/``, because who may read it is the compliance
role (``conversations.permissions.is_compliance``), and the audit app imports no other app.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.http import Http404

import audit
from audit.models import AuditEvent
from audit.selectors import AuditFilters, audit_events
from conversations.models import Conversation
from conversations.permissions import require_compliance, require_reader

from ..models import DeletionRequest, LegalHold, Receipt, Tombstone
from ..selectors import (
    Sla,
    active_holds_covering,
    deletion_request_sla,
    deletion_requests,
    legal_holds,
    open_requests_for,
)
from ..services import deletion_preview, receipt_verify
from ..stores import StoreRow, store_rows

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
    "receipt_export_read",
]

DELETIONS_PAGE = 50
AUDIT_PAGE = 100
AUDIT_EXPORT_MAX = 10_000  # rows per download; the export says where to continue
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
    counted: list[StoreRow] = field(default_factory=list)  # at submission, in words and order
    erased: list[StoreRow] = field(default_factory=list)  # the receipt's, likewise
    # The conversations it names, as people know them: (internal id, backend id, queue); an
    # erased one keeps only its internal id ("" for the others).
    conversations: list[tuple[int, str, str]] = field(default_factory=list)


@transaction.atomic
def deletion_request_read(*, user: Any, id: int) -> DeletionDetail:
    require_compliance(user)
    row = deletion_requests().filter(pk=id).first()
    if row is None:
        raise Http404("no such deletion request")
    receipt = (
        getattr(row, "receipt", None) if row.status == DeletionRequest.Status.COMPLETED else None
    )
    known = {
        pk: (external_id, queue)
        for pk, external_id, queue in Conversation.objects.filter(
            pk__in=row.conversation_ids
        ).values_list("pk", "external_id", "queue")
    }
    named = [(pk, *known.get(pk, ("", ""))) for pk in row.conversation_ids]
    audit.record("deletion.viewed", actor=user, page="detail", request=row.pk)
    return DeletionDetail(
        request=row,
        sla=deletion_request_sla(row),
        receipt=receipt,
        receipt_valid=receipt_verify(receipt) if receipt else None,
        planned=len(row.conversation_ids),
        counted=store_rows(row.preview or {}),
        erased=store_rows(receipt.counts) if receipt else [],
        conversations=named,
    )


@dataclass(frozen=True)
class ReceiptExport:
    request: DeletionRequest
    receipt: Receipt
    valid: bool
    erased: list[StoreRow]


@transaction.atomic
def receipt_export_read(*, user: Any, id: int, format: str) -> ReceiptExport:
    """A completed request's receipt, for download (``format``: csv or json). 404 for a request
    with no receipt yet, like a missing one. Audited (``deletion.viewed``, page "receipt")."""
    require_compliance(user)
    row = deletion_requests().filter(pk=id, status=DeletionRequest.Status.COMPLETED).first()
    receipt = getattr(row, "receipt", None) if row is not None else None
    if row is None or receipt is None:
        raise Http404("no such receipt")
    audit.record("deletion.viewed", actor=user, page="receipt", request=row.pk, format=format)
    return ReceiptExport(row, receipt, receipt_verify(receipt), store_rows(receipt.counts))


@dataclass(frozen=True)
class DeletionPreview:
    conversations: int
    counts: dict[str, int]
    missing: int  # named conversations that do not exist (or no longer)
    stores: list[StoreRow] = field(default_factory=list)  # the counts in words and order
    # Warnings shown before anything is confirmed: active legal holds that would block the
    # request, a customer id that matches no stored conversation (mistyped, or erased already).
    holds: list[LegalHold] = field(default_factory=list)
    unknown_customer: bool = False
    erased_customer: bool = False  # the customer id was erased before (a tombstone names it)


@transaction.atomic
def deletion_preview_read(
    *, user: Any, customer: str = "", conversations: list[str] | None = None
) -> DeletionPreview:
    """What a request would erase now, counted, and what would stop or surprise it; nothing is
    written but the audit row."""
    require_compliance(user)
    named = conversations or []
    ids, counts = deletion_preview(customer=customer, conversations=named)
    hashes = {audit.subject_hash(customer)} if customer else set()
    queues: set[str] = set()
    for queue, owner in (
        Conversation.objects.filter(pk__in=ids)
        .values_list("queue", "customer_external_id")
        .distinct()
    ):
        queues.add(queue)
        hashes.add(audit.subject_hash(owner))
    holds = active_holds_covering(
        subject_hashes=hashes, conversation_ids=set(ids), queues=queues - {""}
    )
    erased = bool(customer) and (
        Tombstone.objects.filter(
            kind=Tombstone.Kind.CUSTOMER, key_hash=audit.subject_hash(customer)
        ).exists()
    )
    unknown = bool(customer) and not ids
    audit.record(
        "deletion.previewed",
        actor=user,
        subject=customer or None,
        scope="customer" if customer else "conversations",
        conversations=len(ids),
        rows=sum(counts.values()),
        holds=[h.pk for h in holds],
        unknown=unknown or bool(named and len(ids) < len(named)),
    )
    return DeletionPreview(
        len(ids),
        counts,
        len(named) - len(ids) if named else 0,
        stores=store_rows(counts),
        holds=holds,
        unknown_customer=unknown,
        erased_customer=erased,
    )


@dataclass(frozen=True)
class HoldList:
    rows: list[tuple[LegalHold, int]]  # each hold, and the requests it blocks now
    # The backend ids of the conversations that conversation holds name, while they exist.
    conversations: dict[int, str] = field(default_factory=dict)


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
    named = {h.conversation_id for h in rows if h.conversation_id is not None}
    conversations = (
        dict(Conversation.objects.filter(pk__in=named).values_list("pk", "external_id"))
        if named
        else {}
    )
    audit.record("deletion.viewed", actor=user, page="holds", results=len(rows))
    return HoldList([(h, blocked.get(h.pk, 0)) for h in rows], conversations)


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
    export: str | None = None,
) -> AuditLog:
    """The audit log, newest first, filtered, ``AUDIT_PAGE`` rows a page. ``used``: the names of
    the filters set, for the audit row (never their values). ``export`` ("csv" or "json"): the
    rows for download instead, up to ``AUDIT_EXPORT_MAX`` from ``before`` down."""
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
    size = AUDIT_EXPORT_MAX if export else AUDIT_PAGE
    rows = list(qs[: size + 1])
    older = None
    if len(rows) > size:
        rows = rows[:size]
        older = rows[-1].pk
    details: dict[str, Any] = {"format": export} if export else {}
    audit.record(
        "audit.viewed",
        actor=user,
        page="export" if export else "list",
        filters=sorted(used or []),
        results=len(rows),
        **details,
    )
    return AuditLog(rows, older)


def open_requests_read(*, user: Any, customer: str, conversation_ids: list[int]) -> list[Any]:
    """The conversation page's customer panel: deletion requests not yet carried out that name
    this customer or these conversations (which ``user`` was just shown: the page's own read
    service checked access and wrote the audit row). Ids, statuses and due dates only."""
    require_reader(user)
    return open_requests_for(customer=customer, conversation_ids=conversation_ids)
