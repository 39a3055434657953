"""The backup horizon: the date after which no backup can bring back what an erasure removed.

An erasure removes a conversation from the live databases at once, but not from the backups taken
before it, and those are restorable until they expire. Two kinds of backup hold it
(docs/operations.md gives the procedure for both):

- **backups of the keys database** (``KEYS_DATABASE_URL``) hold the conversation's data key, and
  with it the encrypted verbatim store (every message byte for byte, reasoning included) becomes
  readable again from any main backup of the same age. They are kept
  ``KEY_BACKUP_RETENTION_DAYS``: the reason the keys live in a database of their own is that this
  can be short whatever the main backups' retention is.
- **backups of the main database** hold the verbatim store only as ciphertext, but also the
  projections in the clear (the redacted visible text of each turn, the tool trail's identifiers
  and statuses) and the conversation's and customer's ids. They are kept
  ``BACKUP_RETENTION_DAYS`` (by default the same as the key backups).

So nothing of an erased conversation can come back from a backup once every backup of either kind
taken before the erasure has expired: ``at`` plus the longer of the two retentions, counted from
when each backup *started* (a dump started a second before the erasure holds the conversation).
That is the date a deletion receipt states (``Receipt.backup_horizon``, signed with the receipt)
and the one the exposure map gives for backups.

A restore brings erased conversations back into the main database (an erasure after the main
backup was taken is not in it), their keys gone if the keys backup was taken after the main one:
``restore_reconcile`` (``manage.py reconcile_restore``) erases them again before the console
opens.

The horizon is only as true as the backups' pruning: it assumes each backup, and the WAL archive a
physical backup needs, is deleted when its retention ends. Change the settings together with the
backup job, never one without the other.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connections, transaction

import audit
from conversations.keystore.routers import KEYS_DB
from conversations.models import Conversation

from .services.erase import conversation_erase

__all__ = [
    "backup_horizon",
    "backup_retention",
    "keyless_conversations",
    "restore_reconcile",
]


def backup_retention() -> timedelta:
    """How long the longest-kept backup that may hold erased data is kept."""
    days = max(int(settings.KEY_BACKUP_RETENTION_DAYS), int(settings.BACKUP_RETENTION_DAYS))
    return timedelta(days=days)


def backup_horizon(at: datetime) -> datetime:
    """The instant after which no backup can restore data erased at ``at`` (aware datetime)."""
    if at.tzinfo is None:
        raise ValueError("backup_horizon needs an aware datetime")
    return at + backup_retention()


# --- after a restore ----------------------------------------------------------------------------

_KEYS_HELD = "SELECT conversation_id FROM conversations_datakey WHERE conversation_id = ANY(%s)"


def keyless_conversations(*, batch: int = 1000) -> list[int]:
    """Conversations of the (restored) main database with stored messages and no data key in
    the (restored) keys database, compared in batches. With the keys backup taken after the main
    one (docs/operations.md), these are exactly the conversations erased in between."""
    keyless: list[int] = []
    last = 0
    while True:
        ids = list(
            Conversation.objects.filter(pk__gt=last, message_count__gt=0)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch]
        )
        if not ids:
            return keyless
        last = ids[-1]
        with connections[KEYS_DB].cursor() as cur:
            cur.execute(_KEYS_HELD, [ids])
            held = {row[0] for row in cur.fetchall()}
        keyless.extend(pk for pk in ids if pk not in held)


def restore_reconcile(*, dry_run: bool = False) -> tuple[list[int], int]:
    """After restoring both databases: erase again, through the one erase path, every
    conversation whose data key the restored keys backup does not hold: erased after the main
    backup was taken (its messages are unreadable, but its projections and ids came back with the
    main backup). Returns the conversations and the rows removed. Audited
    (``restore.reconciled``)."""
    keyless = keyless_conversations()
    rows = 0
    if dry_run:
        return keyless, rows
    for pk in keyless:
        counts, _ = conversation_erase(pk)
        rows += sum(n for per in counts.values() for n in per.values())
    with transaction.atomic(durable=True):
        audit.record("restore.reconciled", conversations=len(keyless), rows=rows)
    return keyless, rows
