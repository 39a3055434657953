"""Review grants: given, revoked, checked (see the package docstring)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

import audit

from ..models import Conversation, ConversationUserObjectPermission, ReviewAlert, ReviewGrant
from ..permissions import visible_conversations

REVIEWER_GROUP = "reviewer"
REVIEW_PERMISSION = "review_reasoning"
REVIEW_PERMISSION_NAME = "Read the reasoning of this conversation (review grant)"
# A grant is for one investigation, not a standing right: at most this long.
MAX_GRANT_DAYS = 30


class ReviewError(Exception):
    pass


class GrantRefused(ReviewError, ValueError):
    """A grant that cannot be given or revoked as asked; the message says why."""


def review_permission() -> Permission:
    """The ``conversations.review_reasoning`` permission (on the Conversation content type)."""
    content_type = ContentType.objects.get_for_model(Conversation)
    permission, _ = Permission.objects.get_or_create(
        content_type=content_type,
        codename=REVIEW_PERMISSION,
        defaults={"name": REVIEW_PERMISSION_NAME},
    )
    return permission


def _is_reviewer(user: Any) -> bool:
    # The group names the access checks already read for this request (permissions._groups),
    # where they did: no second query for the same rows.
    cached = getattr(user, "_console_groups", None)
    if cached is not None:
        return bool(user.is_active and REVIEWER_GROUP in cached)
    return bool(user.is_active and user.groups.filter(name=REVIEWER_GROUP).exists())


def is_reviewer(user: Any) -> bool:
    """Whether ``user`` is an active member of the reviewer group (one query, none once the
    access checks have read its groups)."""
    return _is_reviewer(user)


def review_grant_check(
    *,
    reviewer: Any,
    purpose: str,
    reference: str,
    expires_at: datetime,
    now: datetime | None = None,
) -> None:
    """Raise GrantRefused when a grant with these terms may not be given (the admin's form and
    the command show the message)."""
    now = now or timezone.now()
    if reviewer is None or not _is_reviewer(reviewer):
        raise GrantRefused(f"the grantee must be an active member of the {REVIEWER_GROUP!r} group")
    if purpose not in ReviewGrant.Purpose.values:
        raise GrantRefused(
            f"unknown purpose {purpose!r}; one of: {', '.join(ReviewGrant.Purpose.values)}"
        )
    if not reference.strip() or len(reference) > 100:
        raise GrantRefused("the reference (a ticket id) must be 1 to 100 characters")
    if timezone.is_naive(expires_at):
        raise GrantRefused("the expiry must carry a time zone")
    if expires_at <= now:
        raise GrantRefused("the expiry must be in the future")
    if expires_at > now + timedelta(days=MAX_GRANT_DAYS):
        raise GrantRefused(f"a grant lasts at most {MAX_GRANT_DAYS} days")


@transaction.atomic
def review_grant_create(
    *,
    reviewer: Any,
    conversation: Conversation,
    purpose: str,
    reference: str,
    expires_at: datetime,
    granted_by: Any = None,
) -> ReviewGrant:
    """Give ``reviewer`` the review of ``conversation`` until ``expires_at``; audited."""
    from guardian.shortcuts import assign_perm

    review_grant_check(
        reviewer=reviewer, purpose=purpose, reference=reference, expires_at=expires_at
    )
    grant = ReviewGrant.objects.create(
        reviewer=reviewer,
        conversation=conversation,
        purpose=purpose,
        reference=reference.strip(),
        expires_at=expires_at,
        granted_by=granted_by,
    )
    # Stored in ConversationUserObjectPermission (the direct foreign key): erased with the
    # conversation.
    assign_perm(review_permission(), reviewer, conversation)
    audit.record(
        "grant.created",
        actor=granted_by,
        conversation_id=conversation.pk,
        grant=grant.pk,
        grantee=reviewer.pk,
        purpose={"category": grant.purpose, "reference": grant.reference},
        expires_at=expires_at.isoformat(),
    )
    return grant


@transaction.atomic
def review_grant_revoke(*, grant_id: int, actor: Any = None, reason: str = "") -> ReviewGrant:
    """End a grant now; the permission goes when no other live grant of the same reviewer on the
    same conversation remains. Audited."""
    from guardian.shortcuts import remove_perm

    grant = (
        ReviewGrant.objects.select_for_update()
        .select_related("reviewer", "conversation")
        .filter(pk=grant_id)
        .first()
    )
    if grant is None:
        raise GrantRefused(f"no review grant {grant_id}")
    if grant.revoked_at is not None:
        raise GrantRefused(f"review grant {grant_id} was already revoked")
    now = timezone.now()
    grant.revoked_at = now
    grant.revoked_by = actor if getattr(actor, "pk", None) is not None else None
    grant.save(update_fields=["revoked_at", "revoked_by"])
    others = review_grants_live(now=now).filter(
        reviewer=grant.reviewer, conversation=grant.conversation
    )
    if not others.exists():
        remove_perm(f"conversations.{REVIEW_PERMISSION}", grant.reviewer, grant.conversation)
    audit.record(
        "grant.revoked",
        actor=actor,
        conversation_id=grant.conversation_id,
        grant=grant.pk,
        grantee=grant.reviewer_id,
        reason=reason[:300],
    )
    return grant


def review_grants_live(*, now: datetime | None = None) -> QuerySet[ReviewGrant]:
    """Grants neither revoked nor expired (the permission aside: see ``review_grant_live``)."""
    return ReviewGrant.objects.filter(revoked_at__isnull=True, expires_at__gt=now or timezone.now())


def review_grant_live(*, user: Any, conversation_id: int) -> ReviewGrant | None:
    """The user's live grant on the conversation, or None: an active member of the reviewer
    group, holding the guardian permission on it, with a grant neither revoked nor expired. One
    query."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return None
    permission = ConversationUserObjectPermission.objects.filter(
        user_id=user.pk,
        content_object_id=OuterRef("conversation_id"),
        permission__codename=REVIEW_PERMISSION,
        permission__content_type__app_label="conversations",
        permission__content_type__model="conversation",
    )
    return (
        review_grants_live()
        .filter(
            reviewer_id=user.pk,
            reviewer__is_active=True,
            reviewer__groups__name=REVIEWER_GROUP,
            conversation_id=conversation_id,
        )
        .filter(Exists(permission))
        # A reviewer who lost the conversation's queue reads nothing of it, grant or not.
        .filter(conversation__in=visible_conversations(user).values("pk"))
        .order_by("-expires_at")
        .first()
    )


# --- oversight ---------------------------------------------------------------------------------


def review_grants_recent(*, days: int = 30) -> QuerySet[ReviewGrant]:
    """Grants live now or ended (expired, revoked) within ``days``, newest first: the
    compliance page's list. Its rows name users, so they come with them."""
    since = timezone.now() - timedelta(days=days)
    return (
        ReviewGrant.objects.filter(expires_at__gte=since)
        .exclude(revoked_at__lt=since)
        .select_related("reviewer", "granted_by", "revoked_by")
        .order_by("-granted_at", "-pk")
    )


def review_alerts_recent(*, days: int = 30) -> QuerySet[ReviewAlert]:
    since = timezone.localdate() - timedelta(days=days)
    return ReviewAlert.objects.filter(day__gte=since).select_related("reviewer")
