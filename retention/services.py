"""The one erase path, deletion requests, legal holds and receipts (DESIGN section 7).

``conversation_erase`` is the only code that deletes a conversation: it destroys the data key
first (committed on its own, so backups become unreadable at once), then deletes every row the
registry (``registry.py``) lists for the conversation in one transaction, with its tombstone.
Deletion requests (a customer, named conversations, or the clock's expired conversations) are
executed by ``deletion_request_execute``, chunk by chunk, resumable after a crash; each ends
with a verification scan and a receipt carrying an HMAC.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import redis
from dateutil.relativedelta import relativedelta
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

import audit
from conversations.guards import Refused, ingest_barrier
from conversations.keys import data_key_destroy
from conversations.models import Conversation

from . import registry
from .models import DeletionRequest, LegalHold, Receipt, RetentionClass, Tombstone

logger = logging.getLogger(__name__)

__all__ = [
    "conversation_erase",
    "deletion_request_execute",
    "deletion_request_submit",
    "legal_hold_place",
    "legal_hold_release",
    "receipt_verify",
    "tombstone_guard",
]


# --- Tombstones -------------------------------------------------------------------------------


def conversation_hash(external_id: str) -> str:
    # A namespace of its own, so a conversation id and a customer id of the same text differ.
    return audit.subject_hash(f"conversation:{external_id}")


def tombstone_guard(pairs: Sequence[tuple[str, str]]) -> dict[int, Refused]:
    """The ingest guard (registered in apps.py): refuse, with 410, the exchanges of a deleted
    conversation or customer. One query for the whole batch; each refusal, once recorded, is
    counted on its tombstone and audited."""
    wanted: list[tuple[tuple[str, str], tuple[str, str] | None]] = []
    for conversation_external_id, customer_external_id in pairs:
        conversation = (
            str(Tombstone.Kind.CONVERSATION),
            conversation_hash(conversation_external_id),
        )
        customer = (
            (str(Tombstone.Kind.CUSTOMER), audit.subject_hash(customer_external_id))
            if customer_external_id
            else None
        )
        wanted.append((conversation, customer))
    hashes = {key for pair in wanted for key in pair if key is not None}
    found = {
        (t.kind, t.key_hash): t
        for t in Tombstone.objects.filter(key_hash__in=[h for _, h in hashes])
        if (t.kind, t.key_hash) in hashes
    }
    refused: dict[int, Refused] = {}
    for position, (conversation, customer) in enumerate(wanted):
        tombstone = found.get(conversation) or (found.get(customer) if customer else None)
        if tombstone is None:
            continue
        what = "conversation" if tombstone.kind == Tombstone.Kind.CONVERSATION else "customer"
        refused[position] = Refused(
            f"this {what} was deleted; exchanges for it are not stored",
            field=what,
            code="gone",
            record=partial(
                _refusal_record,
                tombstone=tombstone.pk,
                customer=pairs[position][1],
                conversation_hash=conversation[1],
            ),
        )
    return refused


def _refusal_record(*, tombstone: int, customer: str, conversation_hash: str) -> None:
    Tombstone.objects.filter(pk=tombstone).update(
        refused_count=F("refused_count") + 1, last_refused_at=timezone.now()
    )
    audit.record(
        "exchange.refused_tombstoned",
        subject=customer or None,
        tombstone=tombstone,
        conversation_hash=conversation_hash,
    )


def _tombstone(kind: str, key_hash: str) -> None:
    # One statement (INSERT … ON CONFLICT DO NOTHING): committed at once outside a transaction.
    Tombstone.objects.bulk_create([Tombstone(kind=kind, key_hash=key_hash)], ignore_conflicts=True)


# --- The one erase path -----------------------------------------------------------------------


def _add_counts(total: dict[str, dict[str, int]], counts: dict[str, dict[str, int]]) -> None:
    for store, per_model in counts.items():
        bucket = total.setdefault(store, {})
        for label, n in per_model.items():
            bucket[label] = bucket.get(label, 0) + n


def conversation_erase(
    conversation_id: int, *, request_id: int | None = None
) -> tuple[dict[str, dict[str, int]], str | None]:
    """Erase one conversation: its tombstone (committed first, so exchanges arriving during the
    erase are refused), its data key (committed on its own: backups become unreadable), then every
    registered row in one transaction. Idempotent (an erased conversation erases nothing). Returns
    the rows removed per store and model, and the conversation's external id (None when it was
    already gone). With ``request_id``, the counts are added to the request in the rows'
    transaction, so a resumed execution reports what was removed exactly once."""
    found = Conversation.objects.filter(pk=conversation_id).values_list("external_id", flat=True)
    known = found.first()
    if known is not None:
        _tombstone(Tombstone.Kind.CONVERSATION, conversation_hash(known))
    data_key_destroy(conversation_id)
    counts: dict[str, dict[str, int]] = {"keys": {}, "main": {}}
    external_id: str | None = None
    with transaction.atomic():
        conversation = Conversation.objects.select_for_update().filter(pk=conversation_id).first()
        if conversation is not None:
            # Holding the lock, no ingest of this conversation is in flight: a key one created
            # while we waited for the lock (it passed the guard before the tombstone) goes too.
            data_key_destroy(conversation_id)
            external_id = conversation.external_id
            deleted = registry.erase_rows([conversation_id])
            counts["main"] = {label: n for label, n in deleted.items() if n}
            # Its messages were encrypted under its key: that key is gone now (destroyed above,
            # or by an attempt that crashed before this transaction committed).
            if conversation.message_count:
                counts["keys"][registry.KEYS.label] = 1
            if external_id != known:  # created since the first look: tombstoned now
                _tombstone(Tombstone.Kind.CONVERSATION, conversation_hash(external_id))
        if request_id is not None:
            request = DeletionRequest.objects.select_for_update().get(pk=request_id)
            _add_counts(request.counts, counts)
            if conversation is not None:
                request.conversations_erased += 1
            request.save(update_fields=["counts", "conversations_erased"])
    return counts, external_id


# --- Legal holds ------------------------------------------------------------------------------


def _active_holds() -> list[LegalHold]:
    return list(LegalHold.objects.filter(released_at__isnull=True).order_by("pk"))


def _hold_for(
    holds: Sequence[LegalHold], *, subject_hash: str, conversations: Iterable[Conversation]
) -> LegalHold | None:
    conversations = list(conversations)
    ids = {c.pk for c in conversations}
    queues = {c.queue for c in conversations if c.queue}
    hashes = {audit.subject_hash(c.customer_external_id) for c in conversations}
    if subject_hash:
        hashes.add(subject_hash)
    for hold in holds:
        if (
            (hold.scope == LegalHold.Scope.SUBJECT and hold.subject_hash in hashes)
            or (hold.scope == LegalHold.Scope.CONVERSATION and hold.conversation_id in ids)
            or (hold.scope == LegalHold.Scope.QUEUE and hold.queue in queues)
        ):
            return hold
    return None


@transaction.atomic
def legal_hold_place(
    *,
    scope: str,
    reason: str,
    customer: str = "",
    conversation_id: int | None = None,
    conversation: str = "",
    queue: str = "",
    actor: Any = None,
) -> LegalHold:
    """Place a hold on a customer, a conversation (its internal id, or ``conversation``: the chat
    backend's id) or a queue. Audited. Raises ``DeletionInvalid``."""
    if scope not in LegalHold.Scope.values:
        raise DeletionInvalid(
            f"the scope is one of {', '.join(LegalHold.Scope.values)}", field="scope"
        )
    if not reason.strip():
        raise DeletionInvalid("a legal hold states its reason", field="reason")
    if scope == LegalHold.Scope.SUBJECT and not customer.strip():
        raise DeletionInvalid("a customer hold names the customer", field="customer")
    if scope == LegalHold.Scope.CONVERSATION:
        if conversation_id is None and conversation:
            conversation_id = (
                Conversation.objects.filter(external_id=conversation)
                .values_list("pk", flat=True)
                .first()
            )
            if conversation_id is None:
                raise DeletionInvalid("no such conversation", field="conversation")
        if conversation_id is None:
            raise DeletionInvalid(
                "a conversation hold names the conversation", field="conversation"
            )
    if scope == LegalHold.Scope.QUEUE and not queue.strip():
        raise DeletionInvalid("a queue hold names the queue", field="queue")
    hold = LegalHold.objects.create(
        scope=scope,
        reason=reason,
        subject=customer if scope == LegalHold.Scope.SUBJECT else "",
        subject_hash=audit.subject_hash(customer) if scope == LegalHold.Scope.SUBJECT else "",
        conversation_id=conversation_id if scope == LegalHold.Scope.CONVERSATION else None,
        queue=queue if scope == LegalHold.Scope.QUEUE else "",
        placed_by=_user(actor),
        placed_by_label=audit.actor_label(actor),
    )
    audit.record(
        "legal_hold.placed",
        actor=actor,
        subject=customer if scope == LegalHold.Scope.SUBJECT else None,
        conversation_id=hold.conversation_id,
        hold=hold.pk,
        reason=reason,
    )
    return hold


@transaction.atomic
def legal_hold_release(*, hold: LegalHold | int, reason: str, actor: Any = None) -> LegalHold:
    """Release a hold (or the hold of that id: ``LegalHold.DoesNotExist`` when there is none);
    the requests it blocked go back to pending, for the next tick. Releasing a released hold
    changes nothing."""
    if not reason.strip():
        raise DeletionInvalid("releasing a legal hold states its reason", field="reason")
    hold = LegalHold.objects.select_for_update().get(pk=hold if isinstance(hold, int) else hold.pk)
    if hold.released_at is not None:
        return hold
    hold.released_at = timezone.now()
    hold.released_by = _user(actor)
    hold.released_by_label = audit.actor_label(actor)
    hold.release_reason = reason
    hold.save(update_fields=["released_at", "released_by", "released_by_label", "release_reason"])
    DeletionRequest.objects.filter(status=DeletionRequest.Status.BLOCKED, blocked_by=hold).update(
        status=DeletionRequest.Status.PENDING, blocked_reason="", blocked_by=None
    )
    audit.record("legal_hold.released", actor=actor, hold=hold.pk, reason=reason)
    return hold


def _user(actor: Any) -> Any:
    """The user to keep in a foreign key: None for the system or a service token."""
    return actor if isinstance(actor, AbstractBaseUser) else None


# --- Deletion requests ------------------------------------------------------------------------


def _preview(conversation_ids: Sequence[int]) -> dict[str, int]:
    counts = {entry.label: entry.rows(conversation_ids).count() for entry in registry.ERASED}
    counts[registry.KEYS.label] = registry.KEYS.rows(conversation_ids).count()
    return counts


def deletion_preview(
    *, customer: str = "", conversations: Sequence[str] = ()
) -> tuple[list[int], dict[str, int]]:
    """The internal ids and the rows per model a request would delete now."""
    qs = Conversation.objects.none()
    if customer:
        qs = Conversation.objects.filter(customer_external_id=customer)
    elif conversations:
        qs = Conversation.objects.filter(external_id__in=list(conversations))
    ids = sorted(qs.values_list("pk", flat=True))
    return ids, _preview(ids)


class DeletionInvalid(ValueError):
    """A deletion request or legal hold that cannot be accepted as asked; ``field`` names the
    input at fault."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class ReferenceReused(DeletionInvalid):
    """The reference names an existing request that asked for something else."""


def legal_deadline(requested_at: datetime) -> datetime:
    """The legal deadline of a request received at ``requested_at``: one month (GDPR art. 12(3),
    ``RETENTION_LEGAL_DEADLINE_MONTHS``), the same day of the next month or its last day."""
    return requested_at + relativedelta(months=settings.RETENTION_LEGAL_DEADLINE_MONTHS)


def _request_hash(customer: str, conversations: Sequence[str]) -> str:
    what = {"customer": customer} if customer else {"conversations": sorted(set(conversations))}
    return audit.subject_hash("deletion-request:" + json.dumps(what, sort_keys=True))


def _check_request(
    *, reason: str, customer: str, conversations: Sequence[str], due: datetime | None
) -> None:
    if bool(customer) == bool(conversations):
        raise DeletionInvalid("name either a customer or conversations", field="customer")
    if customer and not customer.strip():
        raise DeletionInvalid("the customer id is blank", field="customer")
    if any(not c.strip() for c in conversations):
        raise DeletionInvalid("a conversation id is blank", field="conversations")
    if not reason.strip():
        raise DeletionInvalid("a deletion request states its reason", field="reason")
    if due is not None:
        if timezone.is_naive(due):
            raise DeletionInvalid("the due date must carry a time zone", field="due")
        deadline = legal_deadline(timezone.now())
        if due > deadline:
            raise DeletionInvalid(
                f"due after the legal deadline ({deadline:%Y-%m-%d %H:%M %Z}, one month from "
                "receipt)",
                field="due",
            )


@transaction.atomic
def deletion_request_submit(
    *,
    reason: str,
    customer: str = "",
    conversations: Sequence[str] = (),
    due: datetime | None = None,
    reference: str = "",
    actor: Any = None,
) -> DeletionRequest:
    """A request to erase a customer (every conversation of theirs, and tombstone them) or named
    conversations; due at ``due`` (default: now, i.e. the next tick; never after the legal
    deadline). ``reference``: the requester's ticket id, unique (see
    ``deletion_request_submit_once``). Audited. Raises ``DeletionInvalid``."""
    _check_request(reason=reason, customer=customer, conversations=conversations, due=due)
    ids, preview = deletion_preview(customer=customer, conversations=conversations)
    request = DeletionRequest.objects.create(
        scope=DeletionRequest.Scope.CUSTOMER if customer else DeletionRequest.Scope.CONVERSATIONS,
        subject=customer,
        subject_hash=audit.subject_hash(customer) if customer else "",
        conversation_external_ids=list(conversations),
        conversation_ids=ids,
        reason=reason,
        reference=reference,
        request_hash=_request_hash(customer, conversations),
        requested_by=_user(actor),
        requester=audit.actor_label(actor),
        due=due or timezone.now(),
        preview=preview,
    )
    audit.record(
        "deletion.requested",
        actor=actor,
        subject=customer or None,
        request=request.pk,
        scope=request.scope,
        conversations=ids,
        reason=reason,
        due=request.due.isoformat(),
        reference=reference,
    )
    return request


def deletion_request_submit_once(
    *,
    reference: str,
    reason: str,
    customer: str = "",
    conversations: Sequence[str] = (),
    due: datetime | None = None,
    actor: Any = None,
) -> tuple[DeletionRequest, bool]:
    """Submit, unless a request with this reference exists: then that one is returned (False)
    when it asked for the same thing, and ``ReferenceReused`` raised when it did not. A ticketing
    system retrying a submission gets the same request back."""
    existing = DeletionRequest.objects.filter(reference=reference).first()
    if existing is None:
        try:
            with transaction.atomic():
                request = deletion_request_submit(
                    reason=reason,
                    customer=customer,
                    conversations=conversations,
                    due=due,
                    reference=reference,
                    actor=actor,
                )
            return request, True
        except IntegrityError:
            # A concurrent submission with the same reference committed first.
            existing = DeletionRequest.objects.get(reference=reference)
    if existing.request_hash != _request_hash(customer, conversations):
        raise ReferenceReused(
            f"reference {reference!r} names deletion request {existing.pk}, which asked for "
            "something else",
            field="reference",
        )
    return existing, False


def deletion_request_claim(*, now: datetime | None = None) -> DeletionRequest | None:
    """Claim one due request (pending, or running with a stale claim), skipping those another
    tick holds. The claim is committed: a crash leaves it to go stale and be reclaimed."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.RETENTION_CLAIM_STALE_SECONDS)
    with transaction.atomic():
        request = (
            DeletionRequest.objects.select_for_update(skip_locked=True)
            .filter(
                Q(status=DeletionRequest.Status.PENDING, due__lte=now)
                | Q(status=DeletionRequest.Status.RUNNING, claimed_at__lt=stale)
            )
            .order_by("due", "pk")
            .first()
        )
        if request is None:
            return None
        request.status = DeletionRequest.Status.RUNNING
        request.claimed_at = now
        request.claim_token = uuid.uuid4().hex
        request.attempts += 1
        request.save(update_fields=["status", "claimed_at", "claim_token", "attempts"])
    return request


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
    hold = _hold_for(
        _active_holds(), subject_hash=request.subject_hash, conversations=conversations
    )
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
    # from here on; then the barrier (conversations/guards.py): every ingest that started before
    # the tombstones has committed, and what it stored is among the targets read below.
    with transaction.atomic():
        if request.subject:
            _tombstone(Tombstone.Kind.CUSTOMER, request.subject_hash)
        for external_id in request.conversation_external_ids:
            _tombstone(Tombstone.Kind.CONVERSATION, conversation_hash(external_id))
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
        if current.claim_token != request.claim_token or current.status != "running":
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


# --- Verification and receipts ----------------------------------------------------------------


def verification_scan(
    *, conversation_ids: Sequence[int], external_ids: Sequence[str], subject: str = ""
) -> dict[str, Any]:
    """Look for anything left of the erased conversations: rows of every registered model (the
    keys database included) by internal id, conversations by external id or customer, and Redis
    keys naming an external id or the customer."""
    found: dict[str, int] = {}
    for entry in registry.ALL:
        n = entry.rows(conversation_ids).count() if conversation_ids else 0
        if n:
            found[entry.label] = n
    by_external = Conversation.objects.filter(external_id__in=list(external_ids)).count()
    if subject:
        by_external += Conversation.objects.filter(customer_external_id=subject).count()
    if by_external:
        found["conversations.conversation(external)"] = by_external
    needles = [*external_ids, *([subject] if subject else [])]
    redis_hits = _redis_keys_naming(needles)
    if redis_hits:
        found["redis"] = redis_hits
    return {
        "ok": not found,
        "found": found,
        "tables": [e.label for e in registry.ALL],
        "redis": True,
        "conversations": len(conversation_ids),
    }


def _redis_keys_naming(needles: Sequence[str]) -> int:
    """Keys of the Redis database that contain any of ``needles``: one SCAN pass over the
    keyspace, whatever the number of needles (a retention request names thousands)."""
    if not needles:
        return 0
    pattern = re.compile(
        "|".join(re.escape(n) for n in sorted(set(needles), key=len, reverse=True)).encode()
    )
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        return sum(1 for key in client.scan_iter(count=1000) if pattern.search(key))
    finally:
        client.close()


def _receipt_key() -> bytes:
    configured = settings.RETENTION_RECEIPT_KEY
    if configured:
        return str(configured).encode("utf-8")
    return hmac.new(
        settings.SECRET_KEY.encode("utf-8"), b"retention.receipt", hashlib.sha256
    ).digest()


def receipt_hmac(receipt: Receipt) -> str:
    body = {
        "request": receipt.request_id,
        "subject_hash": receipt.subject_hash,
        "conversations": receipt.conversations,
        "counts": receipt.counts,
        "keys_destroyed": receipt.keys_destroyed,
        "verification": receipt.verification,
        "issued_at": receipt.issued_at.isoformat(timespec="microseconds"),
    }
    data = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(_receipt_key(), data.encode("utf-8"), hashlib.sha256).hexdigest()


def receipt_verify(receipt: Receipt) -> bool:
    return hmac.compare_digest(receipt_hmac(receipt), receipt.hmac)


# --- Retention classes and the clock ----------------------------------------------------------

# Expired: last activity older than the conversation's retention (its own class, else its
# queue's, else RETENTION_DEFAULT_DAYS), measured in elapsed seconds (days x 86,400), so a
# daylight-saving change neither shortens nor lengthens it. Conversations already named by an
# unfinished request are left to it.
_EXPIRED = """
    SELECT c.id FROM conversations_conversation c
    LEFT JOIN retention_retentionclass o ON o.conversation_id = c.id
    LEFT JOIN retention_retentionclass q ON q.queue = c.queue AND q.queue <> ''
    WHERE c.last_activity_at + make_interval(secs => COALESCE(o.days, q.days, %s) * 86400) < %s
      AND NOT EXISTS (
        SELECT 1 FROM retention_deletionrequest r
        WHERE r.status IN ('pending', 'running', 'blocked') AND c.id = ANY(r.conversation_ids)
      )
    ORDER BY c.id
    LIMIT %s
    FOR UPDATE OF c SKIP LOCKED
"""
# One sweep at a time (two ticks must not file the same conversations twice).
_SWEEP_LOCK = 0x7265746E  # "retn"


def retention_sweep(*, now: datetime | None = None) -> tuple[DeletionRequest | None, int]:
    """File the expired conversations not under a legal hold as one retention request, due now;
    returns it (None when nothing expired) and how many expired ones a hold kept."""
    from django.db import connection

    now = now or timezone.now()
    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("SELECT pg_try_advisory_xact_lock(%s)", [_SWEEP_LOCK])
            if not cur.fetchone()[0]:
                return None, 0
            cur.execute(
                _EXPIRED, [settings.RETENTION_DEFAULT_DAYS, now, settings.RETENTION_SWEEP_LIMIT]
            )
            expired = [row[0] for row in cur.fetchall()]
        if not expired:
            return None, 0
        holds = _active_holds()
        keep: list[int] = []
        held = 0
        for conversation in Conversation.objects.filter(pk__in=expired).only(
            "pk", "queue", "customer_external_id"
        ):
            if holds and _hold_for(holds, subject_hash="", conversations=[conversation]):
                held += 1
            else:
                keep.append(conversation.pk)
        if not keep:
            return None, held
        request = DeletionRequest.objects.create(
            scope=DeletionRequest.Scope.RETENTION,
            conversation_ids=sorted(keep),
            reason="retention period expired",
            due=now,
            preview=_preview(keep),
        )
    return request, held


def retention_tick(*, now: datetime | None = None, limit: int = 50) -> dict[str, int]:
    """One tick of the clock: file expired conversations, then claim and execute due requests
    one by one (at most ``limit``). Idempotent: run it twice, nothing happens twice."""
    started = timezone.now()
    now = now or started
    sweep, held = retention_sweep(now=now)
    done = {"requests": 0, "completed": 0, "blocked": 0, "failed": 0, "held": held}
    for _ in range(limit):
        request = deletion_request_claim(now=now)
        if request is None:
            break
        try:
            request = deletion_request_execute(request=request)
        except Exception as exc:
            # Left running: the claim goes stale and a later tick resumes it (every step is
            # idempotent), until RETENTION_MAX_ATTEMPTS claims have failed.
            logger.exception(
                "deletion request %s failed (attempt %s)", request.pk, request.attempts
            )
            failed = request.attempts >= settings.RETENTION_MAX_ATTEMPTS
            DeletionRequest.objects.filter(pk=request.pk, claim_token=request.claim_token).update(
                status=DeletionRequest.Status.FAILED if failed else DeletionRequest.Status.RUNNING,
                error=f"{type(exc).__name__}: {exc}"[:2000],
            )
            done["failed"] += int(failed)
            continue
        done["requests"] += 1
        done[request.status] = done.get(request.status, 0) + 1
    if sweep is not None:
        sweep.refresh_from_db()
        with transaction.atomic():
            audit.record(
                "retention.swept",
                conversations=sweep.conversations_erased,
                requests=1,
                blocked=held,
                duration_ms=int((timezone.now() - started).total_seconds() * 1000),
            )
    return done


# --- Retention classes (the admin) ------------------------------------------------------------


@transaction.atomic
def retention_class_save(*, retention_class: RetentionClass, actor: Any = None) -> RetentionClass:
    """Save how long a queue's (or one conversation's) conversations are kept
    (``retention_class.changed``); the clock applies it at its next tick."""
    retention_class.full_clean()
    retention_class.save()
    audit.record(
        "retention_class.changed",
        actor=actor,
        change="saved",
        retention_class=retention_class.pk,
        queue=retention_class.queue,
        days=retention_class.days,
    )
    return retention_class


@transaction.atomic
def retention_class_delete(*, retention_class: RetentionClass, actor: Any = None) -> None:
    pk, queue = retention_class.pk, retention_class.queue
    retention_class.delete()
    audit.record(
        "retention_class.changed", actor=actor, change="deleted", retention_class=pk, queue=queue
    )
