"""When each part will be erased: retention classes, legal holds, open deletion requests, and
what earlier erasures left (receipts, tombstones) with the backup horizon.

The dates are the clock's (``services/clock.py``): last activity plus the conversation's own
retention class, else its queue's, else ``RETENTION_DEFAULT_DAYS``, unless a legal hold covers
it; then the backups keep it until ``backups.backup_horizon`` of that date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import Q, QuerySet

import audit

from ..backups import backup_horizon
from ..models import DeletionRequest, LegalHold, RetentionClass, Tombstone
from ..services.tombstones import conversation_hash
from .covered import Covered

_OPEN = (
    DeletionRequest.Status.PENDING,
    DeletionRequest.Status.RUNNING,
    DeletionRequest.Status.BLOCKED,
    DeletionRequest.Status.FAILED,
)


@dataclass
class Planned:
    """One conversation's retention: its class, the date the clock erases it, the holds that
    keep it."""

    conversation_id: int
    days: int
    source: str  # "conversation", "queue <name>" or "default"
    erase_on: datetime
    backups_until: datetime
    held_by: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class HoldRow:
    id: int
    scope: str
    reason: str
    placed_at: datetime
    placed_by: str


@dataclass(frozen=True)
class RequestRow:
    id: int
    scope: str
    status: str
    reason: str
    requested_at: datetime
    due: datetime
    blocked_reason: str = ""


@dataclass(frozen=True)
class ReceiptRow:
    request: int
    issued_at: datetime
    conversations: int
    keys_destroyed: int
    rows: int
    backup_horizon: datetime | None


@dataclass(frozen=True)
class Erasure:
    planned: list[Planned]
    holds: list[HoldRow]
    open_requests: list[RequestRow]
    receipts: list[ReceiptRow]
    tombstones: dict[str, int]  # by kind
    # The latest date a backup may still restore any of it: live data's planned erasure (held
    # data: unknown, None) or a past erasure's receipt.
    backup_horizon: datetime | None
    past_conversation_ids: list[int]  # internal ids of conversations erased by a request


def _requests(covered: Covered, subject_hash: str) -> list[DeletionRequest]:
    # ``conversation_ids && ARRAY(subquery)``: one parameter, not an ARRAY[...] of every id.
    ids = ArraySubquery(covered.q) if isinstance(covered.q, QuerySet) else list(covered.q)
    named = Q(conversation_ids__overlap=ids) if covered else Q(pk__in=[])
    if subject_hash:
        named |= Q(subject_hash=subject_hash)
    return list(
        DeletionRequest.objects.filter(named).select_related("receipt").order_by("-requested_at")
    )


def _holds(covered: Covered, subject_hash: str, queues: set[str]) -> list[LegalHold]:
    """The active holds covering them (``selectors.active_holds_covering``, with the covered
    subquery instead of a list of ids). One query."""
    covers = Q(scope=LegalHold.Scope.CONVERSATION, conversation_id__in=covered.q)
    if subject_hash:
        covers |= Q(scope=LegalHold.Scope.SUBJECT, subject_hash=subject_hash)
    if queues:
        covers |= Q(scope=LegalHold.Scope.QUEUE, queue__in=sorted(queues))
    return list(LegalHold.objects.filter(covers, released_at__isnull=True).order_by("pk"))


def erasure_of(
    conversations: Sequence[Any], covered: Covered, *, subject_hash: str, customer_scope: bool
) -> Erasure:
    """``conversations``: rows with ``pk``, ``queue``, ``last_activity_at`` and
    ``external_id``; ``covered``: the same as a subquery. Five queries whatever their number."""
    ids = covered.ids
    queues = {c.queue for c in conversations if c.queue}
    classes = list(
        RetentionClass.objects.filter(
            Q(conversation_id__in=covered.q) | Q(queue__in=sorted(queues))
        ).values_list("conversation_id", "queue", "days")
        if ids
        else []
    )
    own = {cid: days for cid, queue, days in classes if cid is not None}
    per_queue = {queue: days for cid, queue, days in classes if queue}
    holds = _holds(covered, subject_hash if customer_scope else "", queues)
    planned: list[Planned] = []
    for c in conversations:
        if c.pk in own:
            days, source = own[c.pk], "conversation"
        elif c.queue in per_queue:
            days, source = per_queue[c.queue], f"queue {c.queue}"
        else:
            days, source = int(settings.RETENTION_DEFAULT_DAYS), "default"
        erase_on = c.last_activity_at + timedelta(days=days)
        held = [
            h.pk
            for h in holds
            if (h.scope == LegalHold.Scope.SUBJECT and customer_scope)
            or (h.scope == LegalHold.Scope.CONVERSATION and h.conversation_id == c.pk)
            or (h.scope == LegalHold.Scope.QUEUE and h.queue == c.queue)
        ]
        planned.append(Planned(c.pk, days, source, erase_on, backup_horizon(erase_on), held))
    requests = _requests(covered, subject_hash if customer_scope else "")
    receipts = []
    past: set[int] = set()
    for r in requests:
        receipt = getattr(r, "receipt", None) if r.status == "completed" else None
        if receipt is not None:
            past.update(r.conversation_ids)
            receipts.append(
                ReceiptRow(
                    r.pk,
                    receipt.issued_at,
                    receipt.conversations,
                    receipt.keys_destroyed,
                    sum(int(n) for per in receipt.counts.values() for n in per.values()),
                    receipt.backup_horizon,
                )
            )
    # The customer's tombstone, or the one conversation's. (An erased conversation's tombstone
    # is a keyed hash of an id erased with it: the receipts count those conversations.)
    if customer_scope:
        named = Q(kind=Tombstone.Kind.CUSTOMER, key_hash=subject_hash)
    else:
        hashes = [conversation_hash(c.external_id) for c in conversations]
        named = Q(kind=Tombstone.Kind.CONVERSATION, key_hash__in=hashes)
    tombstones = {str(kind): 0 for kind in Tombstone.Kind.values}
    for kind in Tombstone.objects.filter(named).values_list("kind", flat=True):
        tombstones[kind] += 1
    horizons = [r.backup_horizon for r in receipts if r.backup_horizon]
    if planned and not any(p.held_by for p in planned):
        horizons.extend(p.backups_until for p in planned)
    return Erasure(
        planned=planned,
        holds=[
            HoldRow(h.pk, h.scope, h.reason, h.placed_at, h.placed_by_label or "—") for h in holds
        ],
        open_requests=[
            RequestRow(r.pk, r.scope, r.status, r.reason, r.requested_at, r.due, r.blocked_reason)
            for r in requests
            if r.status in _OPEN
        ],
        receipts=receipts,
        tombstones=tombstones,
        backup_horizon=None if any(p.held_by for p in planned) else max(horizons, default=None),
        past_conversation_ids=sorted(past - set(ids)),
    )


def subject_hash_of(customer: str) -> str:
    return audit.subject_hash(customer)
