"""Read services of the console's conversation pages: access, the tuned selectors, the audit row.

Each page's data comes from one function here, shaped like ``reviews.review_read``:

1. it checks access: a conversation the user may not see raises ``Http404``, like a missing one
   (invariant 8);
2. it runs the selectors, which return everything the template needs (no query at render time
   beyond the fixed few a page's header makes);
3. it writes the audit row as its very last statement, in the same transaction as the reads
   (invariant 6: no audit row, no read);
4. it returns a plain dataclass; the view renders it after the transaction has committed.

``audit.record`` takes no shared lock (audit/services.py), so nothing a page does here makes
another page wait. To add a page: write its ``<thing>_read(*, user, ...)`` here, decorated with
``@transaction.atomic``, with its audit event registered in ``audit/registry.py``; the view calls
it and renders; a test pins its query count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

import audit

from .models import Conversation, ReviewAlert, ReviewGrant
from .permissions import (
    access_conversation,
    require_compliance,
    require_reader,
    visible_conversations,
)
from .reviews import review_alerts_recent, review_grant_live, review_grants_recent
from .selectors import ConversationPage, ListFilters, conversation_list, conversation_page

__all__ = [
    "ConversationList",
    "ConversationView",
    "conversation_list_read",
    "conversation_read",
    "review_grants_read",
]


@dataclass(frozen=True)
class ConversationList:
    rows: list[Conversation]
    next_cursor: str | None
    audit_id: int


@dataclass(frozen=True)
class ConversationView:
    page: ConversationPage
    can_review: bool
    audit_id: int


@transaction.atomic
def conversation_list_read(
    *, user: Any, filters: ListFilters, used: list[str], limit: int = 50
) -> ConversationList:
    """One page of the conversations ``user`` may see. ``used``: the names of the filters that
    were set, for the audit row (never their values: a customer id is an external id)."""
    require_reader(user)
    rows, next_cursor = conversation_list(visible_conversations(user), filters, limit=limit)
    if filters.q:
        event = audit.record(
            "conversation.searched",
            actor=user,
            query_hash=audit.query_hash(filters.q),
            filters=sorted(used),
            results=len(rows),
            page="list",
        )
    else:
        event = audit.record(
            "conversation.listed", actor=user, filters=sorted(used), results=len(rows), page="list"
        )
    return ConversationList(rows, next_cursor, event.pk)


@transaction.atomic
def conversation_read(*, user: Any, id: int) -> ConversationView:
    """A conversation's page: its messages, trail, exchanges and events, as ``user`` may see
    them, and whether ``user`` holds a live review grant on it."""
    require_reader(user)
    conversation = access_conversation(user, id)
    page = conversation_page(
        conversation, can_see_restricted=user.has_perm("conversations.view_restricted_fields")
    )
    can_review = review_grant_live(user=user, conversation_id=conversation.pk) is not None
    event = audit.record(
        "conversation.viewed", actor=user, conversation_id=conversation.pk, page="detail"
    )
    return ConversationView(page, can_review, event.pk)


@dataclass(frozen=True)
class ReviewGrants:
    rows: list[tuple[ReviewGrant, str]]  # each grant and its state: live, expired or revoked
    alerts: list[ReviewAlert]


@transaction.atomic
def review_grants_read(*, user: Any) -> ReviewGrants:
    """Compliance: the review grants of the last 30 days and the review alerts."""
    require_compliance(user)
    grants = list(review_grants_recent())
    alerts = list(review_alerts_recent())
    now = timezone.now()
    rows = [
        (g, "revoked" if g.revoked_at else ("live" if g.expires_at > now else "expired"))
        for g in grants
    ]
    audit.record(
        "audit.viewed", actor=user, page="review-grants", results=len(grants) + len(alerts)
    )
    return ReviewGrants(rows, alerts)
