"""Legal holds: while one is active, nothing it covers is erased (requests are blocked with its
reason, the retention sweep leaves the conversations alone)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

import audit
from conversations.models import Conversation

from ..models import DeletionRequest, LegalHold
from .base import DeletionInvalid, user_of


def active_holds() -> list[LegalHold]:
    return list(LegalHold.objects.filter(released_at__isnull=True).order_by("pk"))


def hold_for(
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


@transaction.atomic(durable=True)
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
        placed_by=user_of(actor),
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


@transaction.atomic(durable=True)
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
    hold.released_by = user_of(actor)
    hold.released_by_label = audit.actor_label(actor)
    hold.release_reason = reason
    hold.save(update_fields=["released_at", "released_by", "released_by_label", "release_reason"])
    DeletionRequest.objects.filter(status=DeletionRequest.Status.BLOCKED, blocked_by=hold).update(
        status=DeletionRequest.Status.PENDING, blocked_reason="", blocked_by=None
    )
    audit.record("legal_hold.released", actor=actor, hold=hold.pk, reason=reason)
    return hold
