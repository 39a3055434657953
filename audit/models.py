"""The audit log: one table, append-only, hash-chained.

Rows are written only by ``audit.record()`` (services.py) and never changed: a trigger in the
database refuses UPDATE and DELETE (migration 0002). Each row carries the hash of the previous
one, so a row altered or removed behind the trigger's back (by a superuser) breaks the chain,
and ``manage.py verify_audit`` names the first broken row.

There is no foreign key: a conversation is named by its internal id and a customer by a keyed
hash, so the log outlives an erasure and never has to be rewritten by one.
"""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Now

TABLE = "audit_auditevent"


class AuditEvent(models.Model):
    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField(db_default=Now())
    code = models.CharField(max_length=60, help_text="the event type's stable code (registry.py)")
    actor_id = models.IntegerField(
        null=True, blank=True, help_text="the Django user's id; empty for the system or a token"
    )
    actor_label = models.CharField(
        max_length=200, help_text="username at the time, 'system' or 'service-token:<name>'"
    )
    conversation_id = models.BigIntegerField(
        null=True, blank=True, help_text="internal id (no foreign key: the log outlives erasure)"
    )
    # NULL, not "": "no subject" must not hash like a subject (DJ001 is about forms, not logs).
    subject_hash = models.CharField(  # noqa: DJ001
        max_length=64, null=True, blank=True, help_text="keyed hash of the customer id"
    )
    details = models.JSONField(default=dict, blank=True)
    # Unique: two rows naming the same predecessor would be a fork, so the database refuses the
    # second even if the append lock were ever bypassed.
    prev_hash = models.CharField(max_length=64, unique=True)
    hash = models.CharField(max_length=64)

    class Meta:
        db_table = TABLE
        # The compliance filters, each paired with -id because the log is read newest first.
        indexes = [
            models.Index(fields=["code", "-id"], name="audit_code_idx"),
            models.Index(fields=["actor_id", "-id"], name="audit_actor_idx"),
            models.Index(fields=["conversation_id", "-id"], name="audit_conversation_idx"),
            models.Index(fields=["subject_hash", "-id"], name="audit_subject_idx"),
            models.Index(fields=["at"], name="audit_at_idx"),
        ]

    def __str__(self) -> str:
        return f"audit {self.pk} {self.code}"
