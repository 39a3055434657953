"""Asking for a review grant from the conversation page, and deciding (issue 25).

A reviewer who may read a conversation but holds no live grant on it asks for one, with the
purpose, the ticket and how long (``review_access_request``). **Who decides**: compliance staff
and console admins (``may_decide``, the people who see and revoke grants), never the person who
asked. They find the pending requests under *Review requests* in the menu (with their count), are
told of each new one by e-mail (those of them with an address) and by the webhook
``REVIEW_REQUESTS_WEBHOOK_URL`` names (``notify.py``: the signals' notification outbox and
delivery), and approve, which gives the grant through ``review_grant_create`` (checked and
audited there), or deny (``review_access_decide``). The asker reads where the request stands on
the conversation page. Each step writes its audit row in its transaction:
``review_access.requested``, ``review_access.decided``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import DateTimeField, ExpressionWrapper, F, QuerySet
from django.db.models.functions import Now
from django.http import Http404
from django.utils import timezone

import audit

from ..models import Conversation, ReviewAccessRequest, ReviewGrant
from ..permissions import visible_conversations
from .grants import MAX_GRANT_DAYS, GrantRefused, is_reviewer, review_grant_create
from .notify import DECIDER_GROUPS, review_request_notify


def may_decide(user: Any) -> bool:
    """Compliance staff and console admins decide review requests (compliance already sees and
    revokes grants; an admin gives them in the admin site): ``notify.DECIDER_GROUPS``."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    return bool(user.is_superuser or user.groups.filter(name__in=DECIDER_GROUPS).exists())


@transaction.atomic
def review_access_request(
    *, actor: Any, conversation: Conversation, purpose: str, reference: str, days: int
) -> ReviewAccessRequest:
    """A pending request by ``actor``, a reviewer who may read ``conversation`` (the caller,
    ``services.conversation_review_ask``, checked that: 404 otherwise). One pending request per
    reviewer and conversation: asking again returns it."""
    if not is_reviewer(actor):
        raise GrantRefused("only members of the reviewer group may ask for a review grant")
    if purpose not in ReviewGrant.Purpose.values:
        raise GrantRefused(f"unknown purpose {purpose!r}")
    reference = reference.strip()
    if not reference or len(reference) > 100:
        raise GrantRefused("the reference (a ticket id) must be 1 to 100 characters")
    if isinstance(days, bool) or not 1 <= days <= MAX_GRANT_DAYS:
        raise GrantRefused(f"a grant lasts 1 to {MAX_GRANT_DAYS} days")
    pending = ReviewAccessRequest.objects.filter(
        requester=actor, conversation=conversation, status=ReviewAccessRequest.Status.PENDING
    ).first()
    if pending is not None and pending.waiting:
        return pending
    if pending is not None:  # lapsed undecided: recorded so, and asked afresh
        pending.status = ReviewAccessRequest.Status.EXPIRED
        pending.save(update_fields=["status"])
    row = ReviewAccessRequest.objects.create(
        requester=actor,
        conversation=conversation,
        purpose=purpose,
        reference=reference,
        days=days,
    )
    audit.record(
        "review_access.requested",
        actor=actor,
        conversation_id=conversation.pk,
        request=row.pk,
        purpose={"category": purpose, "reference": reference},
        days=days,
    )
    review_request_notify(request=row)
    return row


@transaction.atomic(durable=True)
def review_access_decide(*, actor: Any, request_id: int, approve: bool) -> ReviewAccessRequest:
    """Approve (the grant is given from now for the days asked) or deny a pending request."""
    if not may_decide(actor):
        raise Http404("no such request")
    row = (
        ReviewAccessRequest.objects.select_for_update()
        .select_related("requester", "conversation")
        .filter(pk=request_id)
        .first()
    )
    if row is None:
        raise Http404("no such request")
    if row.status != ReviewAccessRequest.Status.PENDING:
        raise GrantRefused(f"this request was already {row.status}")
    if not row.waiting:
        raise GrantRefused(
            f"this request lapsed on {row.lapses_at:%Y-%m-%d %H:%M} UTC, undecided: "
            "the reviewer may ask again"
        )
    if not visible_conversations(row.requester).filter(pk=row.conversation_id).exists():
        # Asked while they could read it; since then their queues changed.
        raise GrantRefused(
            f"{row.requester.get_username()} no longer sees this conversation's queue: "
            "no grant can be given"
        )
    if row.requester_id == actor.pk:
        # Asking is not deciding: a person holding both roles waits for someone else.
        raise GrantRefused("you asked for this review: someone else decides it")
    now = timezone.now()
    if approve:
        row.grant = review_grant_create(
            reviewer=row.requester,
            conversation=row.conversation,
            purpose=row.purpose,
            reference=row.reference,
            expires_at=now + timedelta(days=row.days),
            granted_by=actor,
        )
    row.status = (
        ReviewAccessRequest.Status.APPROVED if approve else ReviewAccessRequest.Status.DENIED
    )
    row.decided_by, row.decided_at = actor, now
    row.save(update_fields=["status", "decided_by", "decided_at", "grant"])
    audit.record(
        "review_access.decided",
        actor=actor,
        conversation_id=row.conversation_id,
        request=row.pk,
        outcome=row.status,
        grant=row.grant_id,
    )
    return row


def review_access_pending_read(*, user: Any) -> list[ReviewAccessRequest]:
    """The deciders' list: pending requests, oldest first (404 for anyone else). Names the
    conversation by its backend id and queue; no conversation content, so no audit row."""
    if not may_decide(user):
        raise Http404("no such page")
    return list(review_access_pending())


def review_access_pending_count(*, user: Any) -> int:
    """How many requests wait for a decision, for a decider (the menu's count; 0 for anyone
    else, with no query)."""
    if not may_decide(user):
        return 0
    return _waiting().count()


def review_access_pending() -> QuerySet[ReviewAccessRequest]:
    """Pending requests, oldest first, with who asked and on which conversation (one query)."""
    return _waiting().select_related("requester", "conversation").order_by("requested_at")


def _waiting() -> QuerySet[ReviewAccessRequest]:
    """Pending requests that have not lapsed (the days they asked for not yet past)."""
    lapses = ExpressionWrapper(
        F("requested_at") + F("days") * timedelta(days=1), output_field=DateTimeField()
    )
    return (
        ReviewAccessRequest.objects.filter(status=ReviewAccessRequest.Status.PENDING)
        .alias(lapses=lapses)
        .filter(lapses__gt=Now())
    )


def review_access_mine(*, user: Any, conversation_id: int) -> ReviewAccessRequest | None:
    """The reviewer's latest request on this conversation (the page says where it stands)."""
    return (
        ReviewAccessRequest.objects.filter(requester=user, conversation_id=conversation_id)
        .select_related("decided_by", "grant")
        .order_by("-requested_at")
        .first()
    )
