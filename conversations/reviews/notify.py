"""Telling the deciders that a reviewer asked for review access.

A new request queues one notification per channel in the transaction that stores it, in the
signals' outbox (``models.Notification``): an e-mail to each person who may decide it
and has an address (``review_deciders``: compliance staff and admins, never the asker),
and a webhook to ``REVIEW_REQUESTS_WEBHOOK_URL`` when set. The signals' delivery sends them after
the commit, each on its own, outside any transaction, with the same checks (a webhook address is
checked again when sent; internal addresses are refused unless ``NOTIFY_ALLOWED_HOSTS`` names
them), signature (``X-Signals-Signature`` under ``SIGNALS_WEBHOOK_SECRET``) and retries, on the
signals' beat entry (every ``SIGNALS_INTERVAL_SECONDS``).

What a notification says: who asked, for which purpose and ticket, for how many days, the
conversation's internal number and queue, and the link to the requests page. Never conversation
text, never the customer.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.utils import timezone

from ..models import Notification, ReviewAccessRequest

# Who decides a review request: the same people as ``permissions.is_compliance`` (compliance
# staff, console admins, superusers), named here because the reviews room sits below the
# permissions module (the import contracts); tests/review_requests holds both to one answer.
DECIDER_GROUPS = ("admin", "compliance")


def review_request_notify(*, request: ReviewAccessRequest) -> list[Notification]:
    """Queue the notifications of a new request (in the caller's transaction)."""
    now = timezone.now()
    rows: list[Notification] = []
    url = getattr(settings, "REVIEW_REQUESTS_WEBHOOK_URL", "")
    if url:
        rows.append(Notification(review_request=request, channel="webhook", target=url))
    addresses = (
        review_deciders()
        .exclude(pk=request.requester_id)
        .exclude(email="")
        .values_list("email", flat=True)
    )
    for address in dict.fromkeys(addresses):
        rows.append(Notification(review_request=request, channel="email", target=address))
    for row in rows:
        row.next_attempt_at = now
    return Notification.objects.bulk_create(rows)


def review_request_payload(request: ReviewAccessRequest) -> tuple[str, str, dict[str, Any]]:
    """(subject, text, webhook body) of a request's notification."""
    link = f"{settings.SIGNALS_BASE_URL.rstrip('/')}/review-requests/"
    who = request.requester.get_username()
    queue = request.conversation.queue or "no queue"
    text = (
        f"[review access asked] {who} asks to read the reasoning of conversation "
        f"#{request.conversation_id} (queue {queue}) for {request.get_purpose_display()}, "
        f"ticket {request.reference}, for {request.days} day{'s' if request.days != 1 else ''}. "
        f"Compliance staff or an admin decides: {link}"
    )
    subject = " ".join(f"Review access asked by {who} (ticket {request.reference})".split())
    body = {
        "text": text,
        "kind": "review_request",
        "request": request.pk,
        "requester": who,
        "conversation": request.conversation_id,
        "queue": request.conversation.queue,
        "purpose": request.purpose,
        "reference": request.reference,
        "days": request.days,
        "at": request.requested_at.isoformat(),
        "url": link,
    }
    return subject, text, body


def review_deciders() -> QuerySet[Any]:
    """The active people who may decide: superusers and members of ``DECIDER_GROUPS``."""
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(is_superuser=True) | Q(groups__name__in=DECIDER_GROUPS))
        .distinct()
        .order_by("username")
    )
