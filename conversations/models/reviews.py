"""The reasoning review's tables: who may read one conversation's reasoning (the guardian
object permissions and the grant that bounds them in time and purpose), the daily alert on a
reviewer who reads many, and a reviewer's request for a grant (``conversations/reviews/``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase

from .store import Conversation


class ConversationUserObjectPermission(UserObjectPermissionBase):
    """Object permissions of users on one conversation (``review_reasoning``). A direct foreign
    key, so a conversation's permissions go with it when it is erased."""

    content_object = models.ForeignKey(Conversation, on_delete=models.CASCADE)


class ConversationGroupObjectPermission(GroupObjectPermissionBase):
    content_object = models.ForeignKey(Conversation, on_delete=models.CASCADE)


class ReviewGrant(models.Model):
    """One reviewer may read one conversation's reasoning, for a stated purpose, until
    ``expires_at`` (or until revoked). Backed by the guardian object permission
    ``conversations.review_reasoning`` on the conversation; guardian has no expiry, so the checker
    (``reviews.review_grant_live``) requires both the permission and a live grant row. Rows are
    records: revoked or expired, they stay."""

    class Purpose(models.TextChoices):
        COMPLAINT = "complaint", "customer complaint"
        INCIDENT = "incident", "incident investigation"
        SAFETY = "safety", "safety or abuse review"
        QUALITY = "quality", "model behaviour investigation"
        LEGAL = "legal", "legal or regulatory request"

    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_grants"
    )
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="review_grants"
    )
    purpose = models.CharField(max_length=20, choices=Purpose.choices)
    reference = models.CharField(max_length=100, help_text="the ticket id of the investigation")
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="empty: granted by the grant_review command",
    )
    granted_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["-granted_at"]
        indexes = [
            models.Index(fields=["reviewer", "conversation"], name="review_grant_who_idx"),
        ]

    def __str__(self) -> str:
        return f"review grant {self.pk}: user {self.reviewer_id} on {self.conversation_id}"


class ReviewAlert(models.Model):
    """One user reviewed unusually many conversations within a day (more than
    ``REVIEW_ALERT_THRESHOLD`` distinct ones in 24 hours): one row per user and day, for compliance
    to look at in the admin. Written in the transaction of the review that crossed the line."""

    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_alerts"
    )
    day = models.DateField()
    conversations = models.PositiveIntegerField(
        help_text="distinct conversations reviewed in the 24 hours before the last review"
    )
    threshold = models.PositiveIntegerField(help_text="REVIEW_ALERT_THRESHOLD at the time")
    raised_at = models.DateTimeField(auto_now_add=True)
    last_review_at = models.DateTimeField()

    class Meta:
        ordering = ["-day", "-raised_at"]
        constraints = [
            models.UniqueConstraint(fields=["reviewer", "day"], name="review_alert_day_uniq")
        ]

    def __str__(self) -> str:
        return f"review alert: user {self.reviewer_id} on {self.day} ({self.conversations})"


class ReviewAccessRequest(models.Model):
    """A reviewer asks, from the conversation page, for a review grant on one conversation; those
    who may give grants see it and approve (which creates the grant) or deny it. Rows are
    records: decided, they stay. Goes with its conversation."""

    class Status(models.TextChoices):
        PENDING = "pending"
        EXPIRED = "expired"  # nobody decided within the days it asked for
        APPROVED = "approved"
        DENIED = "denied"

    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_requests"
    )
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="review_requests"
    )
    purpose = models.CharField(max_length=20, choices=ReviewGrant.Purpose.choices)
    reference = models.CharField(max_length=100, help_text="the ticket id of the investigation")
    days = models.PositiveSmallIntegerField(help_text="how long the grant would last")
    requested_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    grant = models.ForeignKey(
        ReviewGrant, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-requested_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["requester", "conversation"],
                condition=models.Q(status="pending"),
                name="review_request_one_pending",
            )
        ]

    def __str__(self) -> str:
        return f"review request {self.pk}: user {self.requester_id} on {self.conversation_id}"

    @property
    def lapses_at(self) -> Any:
        """A pending request lapses once the days it asked for have passed undecided."""
        return self.requested_at + timedelta(days=self.days)

    @property
    def waiting(self) -> bool:
        """Pending and not lapsed: the deciders see it, the asker reads "waiting"."""
        return self.status == self.Status.PENDING and self.lapses_at > timezone.now()

    @property
    def shown_status(self) -> str:
        return (
            self.Status.EXPIRED
            if self.status == self.Status.PENDING and not self.waiting
            else self.status
        )
