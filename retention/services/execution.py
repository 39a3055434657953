"""Executing a deletion request: claimed (skip-locked; a dead worker's claim, whose lock its
session took with it, resumed at once: claims.py; a stale claim reclaimed), checked against
legal holds, tombstones first and the ingest barrier, each conversation through the one erase
path in chunks (resumable after a crash at any step), the verification scan, the receipt; the
request then keeps only keyed hashes and internal ids."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

import audit
from conversations.ingest.guards import ingest_barrier
from conversations.models import Conversation

from .. import registry
from ..backups import backup_horizon
from ..models import DeletionRequest, LegalHold, Receipt, Tombstone
from .claims import claim_lock_held, claim_lock_release, claim_lock_take
from .erase import conversation_erase
from .holds import active_holds, hold_for
from .receipts import receipt_hmac, verification_scan
from .tombstones import conversation_hash, tombstone_write


def deletion_request_claim(
    *, now: datetime | None = None, exclude: Sequence[int] = ()
) -> DeletionRequest | None:
    """Claim one due request, skipping those another tick holds: pending; running, with a claim
    token, and no live worker holding its lock (``claims.py``: its worker died); or running with
    a claim older than ``RETENTION_CLAIM_STALE_SECONDS`` (a stuck worker, or the back-off after a
    failed attempt). The claim is committed and its lock held by this session until
    ``deletion_request_release``; a crash releases the lock and the next tick resumes it."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.RETENTION_CLAIM_STALE_SECONDS)
    Status = DeletionRequest.Status
    with transaction.atomic():
        candidates = (
            DeletionRequest.objects.select_for_update(skip_locked=True)
            .filter(
                Q(status=Status.PENDING, due__lte=now)
                | Q(status=Status.RUNNING, claimed_at__lt=stale)
                | (Q(status=Status.RUNNING) & ~Q(claim_token=""))
            )
            .exclude(pk__in=list(exclude))
            .order_by("due", "pk")[:20]
        )
        for request in candidates:
            abandoned = request.claimed_at is not None and request.claimed_at < stale
            if request.status == Status.RUNNING and not abandoned and claim_lock_held(request.pk):
                continue  # a live worker is on it
            if not claim_lock_take(request.pk) and not abandoned:
                continue
            request.status = Status.RUNNING
            request.claimed_at = now
            request.claim_token = uuid.uuid4().hex
            request.attempts += 1
            request.save(update_fields=["status", "claimed_at", "claim_token", "attempts"])
            return request
    return None


def deletion_request_release(request: DeletionRequest) -> None:
    """Give up this session's lock on a request it claimed (done, or failed for now)."""
    claim_lock_release(request.pk)


def _targets(request: DeletionRequest) -> list[int]:
    ids = set(request.conversation_ids)
    if request.subject:
        # A customer's conversations now: those created since submission are erased too.
        ids.update(
            Conversation.objects.filter(customer_external_id=request.subject).values_list(
                "pk", flat=True
            )
        )
    if request.conversation_external_ids:
        ids.update(
            Conversation.objects.filter(
                external_id__in=request.conversation_external_ids
            ).values_list("pk", flat=True)
        )
    return sorted(ids)


def _heartbeat(request: DeletionRequest) -> bool:
    """Renew the claim; False when another tick reclaimed the request."""
    return bool(
        DeletionRequest.objects.filter(pk=request.pk, claim_token=request.claim_token).update(
            claimed_at=timezone.now()
        )
    )


def _blocked_by(request: DeletionRequest, ids: Sequence[int]) -> DeletionRequest | None:
    """Block the request when an active legal hold covers it or any of these conversations:
    the request, blocked (with the hold's reason), else None."""
    conversations = list(
        Conversation.objects.filter(pk__in=ids).only("pk", "queue", "customer_external_id")
    )
    hold = hold_for(active_holds(), subject_hash=request.subject_hash, conversations=conversations)
    if hold is None:
        return None
    with transaction.atomic():
        DeletionRequest.objects.filter(pk=request.pk).update(
            status=DeletionRequest.Status.BLOCKED,
            blocked_by=hold,
            blocked_reason=hold.reason,
            claimed_at=None,
            claim_token="",
        )
        audit.record(
            "deletion.blocked",
            subject=request.subject or None,
            request=request.pk,
            hold=hold.pk,
            conversations=list(ids),
        )
    request.refresh_from_db()
    return request


def deletion_request_execute(*, request: DeletionRequest) -> DeletionRequest:
    """Carry out a claimed request: legal holds first (blocked, with the reason), then the
    tombstones of the customer and of the named conversations, the ingest barrier, each
    conversation through ``conversation_erase`` in chunks, the verification scan, the receipt;
    the request then keeps only keyed hashes and internal ids."""
    blocked = _blocked_by(request, _targets(request))
    if blocked is not None:
        return blocked
    # Tombstones first, so no new exchange of this customer or these conversations is stored
    # from here on; then the barrier (conversations/ingest/guards.py): every ingest that started
    # before the tombstones has committed, and what it stored is among the targets read below.
    with transaction.atomic():
        if request.subject:
            tombstone_write(Tombstone.Kind.CUSTOMER, request.subject_hash)
        for external_id in request.conversation_external_ids:
            tombstone_write(Tombstone.Kind.CONVERSATION, conversation_hash(external_id))
    ingest_barrier()
    externals = set(request.conversation_external_ids)
    chunk = max(1, settings.RETENTION_CHUNK)
    erased: set[int] = set()
    ids = _targets(request)
    while ids:
        if erased:  # conversations stored while the request was being checked: holds again
            blocked = _blocked_by(request, ids)
            if blocked is not None:
                return blocked
        DeletionRequest.objects.filter(pk=request.pk).update(
            conversation_ids=sorted(erased | set(ids))
        )
        for start in range(0, len(ids), chunk):
            if not _heartbeat(request):
                request.refresh_from_db()
                return request
            for conversation_id in ids[start : start + chunk]:
                _, external_id = conversation_erase(conversation_id, request_id=request.pk)
                if external_id is not None:
                    externals.add(external_id)
        erased.update(ids)
        ids = [pk for pk in _targets(request) if pk not in erased]
    done = sorted(erased)
    verification = verification_scan(
        conversation_ids=done, external_ids=sorted(externals), subject=request.subject
    )
    return _complete(request, done, verification)


def _complete(
    request: DeletionRequest, ids: Sequence[int], verification: dict[str, Any]
) -> DeletionRequest:
    with transaction.atomic():
        current = DeletionRequest.objects.select_for_update().get(pk=request.pk)
        if (
            current.claim_token != request.claim_token
            or current.status != DeletionRequest.Status.RUNNING
        ):
            return current  # another tick took it over (or finished it)
        if not verification["ok"]:
            current.status = DeletionRequest.Status.FAILED
            current.error = "verification found rows left: " + json.dumps(verification["found"])
            current.save(update_fields=["status", "error"])
            return current
        now = timezone.now()
        counts = current.counts
        keys_destroyed = counts.get("keys", {}).get(registry.KEYS.label, 0)
        receipt = Receipt(
            request=current,
            subject_hash=current.subject_hash,
            conversations=current.conversations_erased,
            counts=counts,
            keys_destroyed=keys_destroyed,
            verification=verification,
            issued_at=now,
            backup_horizon=backup_horizon(now),
        )
        receipt.hmac = receipt_hmac(receipt)
        receipt.save()
        if current.subject_hash:  # the customer is erased: holds forget the id typed too
            LegalHold.objects.filter(subject_hash=current.subject_hash).exclude(subject="").update(
                subject=""
            )
        current.status = DeletionRequest.Status.COMPLETED
        current.completed_at = now
        current.subject = ""
        current.conversation_external_ids = []
        current.claim_token = ""
        current.save(
            update_fields=[
                "status",
                "completed_at",
                "subject",
                "conversation_external_ids",
                "claim_token",
            ]
        )
        audit.record(
            "deletion.executed",
            request=current.pk,
            conversations=list(ids),
            rows=sum(n for per in counts.values() for n in per.values()),
            keys_destroyed=keys_destroyed,
            receipt_hash=receipt.hmac,
        )
    return current
