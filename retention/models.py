"""Deletion requests, legal holds, retention classes, tombstones and receipts (DESIGN section 7).

State lives here, in PostgreSQL, not in the broker: the clock (``tasks.retention_tick``) claims
due requests with ``select_for_update(skip_locked=True)``; a crashed tick's claim is resumed by
the next tick (its worker's session-level lock went with its connection: services/claims.py), a
stuck one once ``claimed_at`` is older than ``RETENTION_CLAIM_STALE_SECONDS``.

Customers and conversations are named by keyed hash (``audit.subject_hash``) or internal id. The
raw ids a request is submitted with (``subject``, ``conversation_external_ids``) are cleared when it
completes: after an erasure the subject's raw id appears nowhere in the database.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q


class DeletionRequest(models.Model):
    class Scope(models.TextChoices):
        CUSTOMER = "customer", "a customer (data subject) and all their conversations"
        CONVERSATIONS = "conversations", "named conversations"
        RETENTION = "retention", "conversations past their retention (the clock)"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        COMPLETED = "completed"
        BLOCKED = "blocked"
        FAILED = "failed"

    scope = models.CharField(max_length=20, choices=Scope.choices)
    # Raw ids, kept only until execution completes (then blank / empty).
    subject = models.CharField(max_length=200, blank=True, help_text="raw customer id, cleared")
    conversation_external_ids = models.JSONField(
        default=list, blank=True, help_text="raw conversation ids, cleared on completion"
    )
    subject_hash = models.CharField(max_length=64, blank=True, db_index=True)
    conversation_ids = ArrayField(
        models.BigIntegerField(), default=list, blank=True, help_text="internal ids"
    )
    reason = models.CharField(max_length=300)
    reference = models.CharField(
        max_length=100,
        blank=True,
        help_text="the requester's reference (a ticket id); one request per reference",
    )
    # A keyed hash of what was asked (scope and ids), so a retried submission with the same
    # reference is recognised after the raw ids are cleared.
    request_hash = models.CharField(max_length=64, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    requester = models.CharField(
        max_length=200, blank=True, help_text="who submitted it: a user or a service token"
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    due = models.DateTimeField(db_index=True)
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    preview = models.JSONField(default=dict, blank=True, help_text="rows per model at submission")
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=32, blank=True)
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="claims so far; failed after RETENTION_MAX_ATTEMPTS"
    )
    # What the erasures so far removed, added in each conversation's erase transaction (so a
    # crashed execution resumes with the right totals).
    counts = models.JSONField(default=dict, blank=True)
    conversations_erased = models.PositiveIntegerField(default=0)
    blocked_reason = models.CharField(max_length=300, blank=True)
    blocked_by = models.ForeignKey(
        "LegalHold", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    error = models.TextField(blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-requested_at"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="completed")
                | (Q(subject="") & Q(conversation_external_ids=[])),
                name="deletion_completed_keeps_no_raw_id",
            ),
            models.UniqueConstraint(
                fields=["reference"], condition=~Q(reference=""), name="deletion_reference_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"deletion request {self.pk} ({self.status})"


class LegalHold(models.Model):
    """While active (not released), blocks deletion and retention of what it covers."""

    class Scope(models.TextChoices):
        SUBJECT = "subject", "a customer"
        CONVERSATION = "conversation", "one conversation"
        QUEUE = "queue", "a queue"

    scope = models.CharField(max_length=20, choices=Scope.choices)
    # The customer id as the officer typed it, so the holds page names the customer they know;
    # cleared in the transaction that completes the customer's erasure (``subject_hash`` stays).
    subject = models.CharField(
        max_length=200, blank=True, help_text="raw customer id, cleared when the customer is erased"
    )
    subject_hash = models.CharField(max_length=64, blank=True, db_index=True)
    conversation_id = models.BigIntegerField(null=True, blank=True, help_text="internal id")
    queue = models.CharField(max_length=100, blank=True)
    reason = models.CharField(max_length=300)
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    placed_by_label = models.CharField(max_length=200, blank=True)
    placed_at = models.DateTimeField(auto_now_add=True)
    released_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    released_by_label = models.CharField(max_length=200, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)
    release_reason = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-placed_at"]

    def __str__(self) -> str:
        return f"legal hold {self.pk} ({self.scope})"


class RetentionClass(models.Model):
    """How many days a conversation is kept after its last activity: per queue, or per
    conversation (which overrides its queue's). Neither: ``RETENTION_DEFAULT_DAYS``."""

    queue = models.CharField(max_length=100, blank=True)
    conversation_id = models.BigIntegerField(null=True, blank=True, help_text="internal id")
    days = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "retention classes"
        constraints = [
            models.CheckConstraint(
                condition=(Q(queue="") & Q(conversation_id__isnull=False))
                | (~Q(queue="") & Q(conversation_id__isnull=True)),
                name="retention_class_one_target",
            ),
            models.UniqueConstraint(
                fields=["queue"], condition=~Q(queue=""), name="retention_class_queue_uniq"
            ),
            models.UniqueConstraint(
                fields=["conversation_id"],
                condition=Q(conversation_id__isnull=False),
                name="retention_class_conversation_uniq",
            ),
        ]

    def __str__(self) -> str:
        target = self.queue or f"conversation {self.conversation_id}"
        return f"{target}: {self.days} days"


class Tombstone(models.Model):
    """A deleted conversation or customer, by keyed hash only: late exchanges get 410."""

    class Kind(models.TextChoices):
        CONVERSATION = "conversation"
        CUSTOMER = "customer"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    refused_count = models.PositiveIntegerField(default=0)
    last_refused_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "key_hash"], name="tombstone_uniq"),
        ]

    def __str__(self) -> str:
        return f"tombstone {self.kind} {self.key_hash[:12]}…"


class Receipt(models.Model):
    """What one executed request removed, and the proof: an HMAC over the canonical receipt."""

    request = models.OneToOneField(
        DeletionRequest, on_delete=models.PROTECT, related_name="receipt"
    )
    subject_hash = models.CharField(max_length=64, blank=True)
    conversations = models.PositiveIntegerField()
    counts = models.JSONField(help_text="rows removed, per store and model")
    keys_destroyed = models.PositiveIntegerField()
    verification = models.JSONField()
    issued_at = models.DateTimeField()
    # The date after which no backup taken before the erasure can restore it
    # (``retention.backups.backup_horizon``), signed with the rest. Empty on receipts issued
    # before backups had a horizon.
    backup_horizon = models.DateTimeField(
        null=True, blank=True, help_text="after this, no backup can restore the erased data"
    )
    hmac = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"receipt of deletion request {self.request_id}"
