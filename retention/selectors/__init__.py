"""Selectors of deletion requests, receipts and legal holds, for the compliance pages and the API
(the pages' audited selectors, which call these, are ``audited.py``).

The SLA of a request is measured against its legal deadline (``services.legal_deadline``: one
month from receipt), not against its due date (when the clock may execute it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Min, Q, QuerySet
from django.utils import timezone

from audit import subject_hash

from ..models import DeletionRequest, LegalHold
from ..services import legal_deadline

__all__ = [
    "DUE_SOON",
    "Sla",
    "active_holds_covering",
    "deletion_queue",
    "deletion_request_sla",
    "deletion_requests",
    "legal_holds",
    "open_requests_for",
]

# An open request closer than this to its deadline is shown as due soon.
DUE_SOON = timedelta(days=7)


@dataclass(frozen=True)
class Sla:
    deadline: datetime
    # open: "on track" | "due soon" | "overdue"; closed: "met" | "missed"
    state: str
    # open: time left (negative when overdue); closed: how long it took
    delta: timedelta

    @property
    def days(self) -> int:
        return abs(self.delta).days

    @property
    def label(self) -> str:
        if self.state in ("met", "missed"):
            took = _span(self.delta)
            return f"{self.state}: completed in {took}"
        if self.state == "overdue":
            return f"overdue by {_span(-self.delta)}"
        return f"{_span(self.delta)} left"


def _span(delta: timedelta) -> str:
    if delta >= timedelta(days=1):
        return f"{delta.days} day{'s' if delta.days != 1 else ''}"
    hours = int(delta.total_seconds() // 3600)
    if hours >= 1:
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{max(0, int(delta.total_seconds() // 60))} min"


def deletion_request_sla(request: DeletionRequest, *, now: datetime | None = None) -> Sla:
    deadline = legal_deadline(request.requested_at)
    if request.status == DeletionRequest.Status.COMPLETED and request.completed_at:
        met = request.completed_at <= deadline
        took = request.completed_at - request.requested_at
        return Sla(deadline, "met" if met else "missed", took)
    left = deadline - (now or timezone.now())
    state = "overdue" if left < timedelta(0) else "due soon" if left < DUE_SOON else "on track"
    return Sla(deadline, state, left)


def deletion_requests(
    *, status: str | None = None, before: int | None = None
) -> QuerySet[DeletionRequest]:
    """Newest first (by id), with their receipt and blocking hold; ``before``: ids below it."""
    qs = DeletionRequest.objects.select_related("receipt", "blocked_by").order_by("-pk")
    if status:
        qs = qs.filter(status=status)
    if before is not None:
        qs = qs.filter(pk__lt=before)
    return qs


OPEN = (
    DeletionRequest.Status.PENDING,
    DeletionRequest.Status.RUNNING,
    DeletionRequest.Status.BLOCKED,
    DeletionRequest.Status.FAILED,
)


def open_requests_for(*, customer: str, conversation_ids: list[int]) -> list[DeletionRequest]:
    """Requests not yet carried out that name this customer (by the keyed hash) or one of
    these conversations: the conversation page's customer panel. One query."""
    return list(
        DeletionRequest.objects.filter(status__in=OPEN)
        .filter(
            Q(subject_hash=subject_hash(customer)) | Q(conversation_ids__overlap=conversation_ids)
        )
        .only("pk", "scope", "status", "due", "reference", "requested_at")
        .order_by("due", "pk")
    )


@dataclass(frozen=True)
class QueueState:
    status: str
    requests: int
    oldest_requested_at: datetime | None


def deletion_queue() -> list[QueueState]:
    """Deletion requests per status, each with its oldest's submission time (every status, also
    those with none): one grouped query over the status index, for the operators' metrics."""
    found = {
        row["status"]: row
        for row in DeletionRequest.objects.order_by()
        .values("status")
        .annotate(n=Count("pk"), oldest=Min("requested_at"))
    }
    return [
        QueueState(
            status,
            found[status]["n"] if status in found else 0,
            found[status]["oldest"] if status in found else None,
        )
        for status in DeletionRequest.Status.values
    ]


def legal_holds(*, active: bool | None = None) -> QuerySet[LegalHold]:
    """Active ones first, then newest first."""
    qs = LegalHold.objects.order_by("-released_at", "-pk")
    if active is True:
        qs = qs.filter(released_at__isnull=True)
    elif active is False:
        qs = qs.filter(released_at__isnull=False)
    return qs


def active_holds_covering(
    *, subject_hashes: set[str], conversation_ids: set[int], queues: set[str]
) -> list[LegalHold]:
    """The active legal holds that would block erasing these customers, conversations or queues:
    what the deletion preview warns about before anything is confirmed. One query."""
    covers = Q(pk__in=[])
    if subject_hashes:
        covers |= Q(scope=LegalHold.Scope.SUBJECT, subject_hash__in=sorted(subject_hashes))
    if conversation_ids:
        covers |= Q(
            scope=LegalHold.Scope.CONVERSATION, conversation_id__in=sorted(conversation_ids)
        )
    if queues:
        covers |= Q(scope=LegalHold.Scope.QUEUE, queue__in=sorted(queues))
    return list(LegalHold.objects.filter(covers, released_at__isnull=True).order_by("pk"))
