"""The audit log: rows appended unchained, sealed into a hash chain by the sealer, signed in
batches by digests.

Three tables, all append-only (a trigger refuses UPDATE, DELETE and TRUNCATE, audit's migration):

- ``AuditEvent``: one row per audited action, inserted by ``audit.record()`` in the action's own
  transaction. It takes no lock shared with other writers: rows arrive in any order, and a row's
  transaction may commit after a row with a higher id. ``xid`` is the inserting transaction's id
  (``pg_current_xact_id()``), which is what lets the sealer know when a row can no longer appear
  behind one it has sealed.
- ``AuditSeal``: the chain. The sealer (``sealer.py``) gives each committed event a position, in
  an order it chooses and records, once: ``event_id`` is unique, so the database refuses a second
  seal of the same row. ``hash`` links each seal to the one before it.
- ``AuditDigest``: one per seal batch, like CloudTrail's digest files: it covers positions
  ``first_position..last_position``, names the previous digest's hash, and carries an HMAC of its
  own hash under ``AUDIT_DIGEST_KEY`` (hashing.py), so a rewritten chain cannot be re-signed by
  someone without the key.

There is no foreign key: a conversation is named by its internal id and a customer by a keyed
hash, so the log outlives an erasure and never has to be rewritten by one. ``verify.py`` says what
each check catches.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Func


class ClockTimestamp(Func):
    """``clock_timestamp()``: the time of the statement, not of the transaction's start (a page
    whose transaction began a second ago records when it read)."""

    function = "clock_timestamp"
    template = "clock_timestamp()"
    output_field = models.DateTimeField()


class CurrentXactId(Func):
    """``pg_current_xact_id()``: the top-level transaction's id (xid8, 64 bits: never wraps)."""

    function = "pg_current_xact_id"
    template = "pg_current_xact_id()::text::bigint"
    output_field = models.BigIntegerField()


TABLE = "audit_auditevent"
SEAL_TABLE = "audit_auditseal"
DIGEST_TABLE = "audit_auditdigest"


class AuditEvent(models.Model):
    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField(db_default=ClockTimestamp())
    xid = models.BigIntegerField(
        db_default=CurrentXactId(),
        help_text="the inserting transaction's id: the sealer seals a row once its transaction "
        "is older than every transaction still running",
    )
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

    class Meta:
        db_table = TABLE
        # The compliance filters, each paired with -id because the log is read newest first;
        # (xid, id) is the sealer's scan: the rows after its frontier, in the order it seals.
        indexes = [
            models.Index(fields=["code", "-id"], name="audit_code_idx"),
            models.Index(fields=["actor_id", "-id"], name="audit_actor_idx"),
            models.Index(fields=["conversation_id", "-id"], name="audit_conversation_idx"),
            models.Index(fields=["subject_hash", "-id"], name="audit_subject_idx"),
            models.Index(fields=["at"], name="audit_at_idx"),
            models.Index(fields=["xid", "id"], name="audit_xid_idx"),
        ]

    def __str__(self) -> str:
        return f"audit {self.pk} {self.code}"


class AuditSeal(models.Model):
    """An event's place in the chain: ``hash = sha256(prev_hash, position, event_hash)``."""

    position = models.BigIntegerField(primary_key=True)
    # Unique: a row sealed twice is refused by the database, whatever the sealer does.
    event_id = models.BigIntegerField(unique=True)
    event_hash = models.CharField(max_length=64, help_text="hash of the event row's values")
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    digest_id = models.BigIntegerField(help_text="the digest that signs this seal's batch")

    class Meta:
        db_table = SEAL_TABLE

    def __str__(self) -> str:
        return f"seal {self.position} of audit {self.event_id}"


class AuditDigest(models.Model):
    """One seal batch, signed. ``frontier_xid``/``frontier_event_id`` are the last sealed row's
    (xid, id): the sealer's next batch starts after it."""

    id = models.BigAutoField(primary_key=True)
    sealed_at = models.DateTimeField(db_default=ClockTimestamp())
    first_position = models.BigIntegerField()
    last_position = models.BigIntegerField()
    rows = models.IntegerField()
    last_seal_hash = models.CharField(max_length=64)
    frontier_xid = models.BigIntegerField()
    frontier_event_id = models.BigIntegerField()
    prev_hash = models.CharField(max_length=64, unique=True)
    hash = models.CharField(max_length=64)
    signature = models.CharField(max_length=64, help_text="HMAC-SHA256 of hash (AUDIT_DIGEST_KEYS)")

    class Meta:
        db_table = DIGEST_TABLE

    def __str__(self) -> str:
        return f"digest {self.pk}: positions {self.first_position}..{self.last_position}"
