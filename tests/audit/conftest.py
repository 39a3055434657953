"""Helpers for the audit tests: hashes computed independently of audit/hashing.py, rows written
one transaction each, sealing, and what a database superuser can do behind the log's back."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

import audit
from audit.models import AuditEvent, AuditSeal
from audit.sealer import seal_pending
from tests.retention.conftest import clock, private_redis  # noqa: F401 (the clock's fixtures)

GENESIS = "0" * 64


def expected_event_hash(event: AuditEvent) -> str:
    """An event's hash as specified (sorted-key compact JSON, ISO UTC with microseconds)."""
    payload = {
        "id": event.id,
        "at": event.at.astimezone(UTC).isoformat(timespec="microseconds"),
        "xid": event.xid,
        "code": event.code,
        "actor_id": event.actor_id,
        "actor_label": event.actor_label,
        "conversation_id": event.conversation_id,
        "subject_hash": event.subject_hash,
        "details": event.details,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def expected_seal_hash(position: int, event_hash: str, prev_hash: str) -> str:
    payload = {"position": position, "event_hash": event_hash, "prev_hash": prev_hash}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def rows() -> list[AuditEvent]:
    return list(AuditEvent.objects.order_by("id"))


def seals() -> list[AuditSeal]:
    return list(AuditSeal.objects.order_by("position"))


def write(n: int, code: str = "conversation.viewed") -> list[AuditEvent]:
    """``n`` rows, each committed in its own transaction."""
    events = []
    for i in range(n):
        with transaction.atomic():
            events.append(
                audit.record(
                    code,
                    conversation_id=i + 1,
                    subject=f"cust-{i}",
                    page="detail",
                    purpose=f"ticket {i} ✓",
                )
            )
    return events


def write_and_seal(n: int) -> list[AuditEvent]:
    events = write(n)
    report = seal_pending()
    assert report.rows == n, f"sealed {report.rows} of {n}; holding the horizon: {holders()}"
    return events


def holders() -> list[tuple[object, ...]]:
    """The sessions with a transaction id in this database: what holds the sealer's horizon."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, backend_type, backend_xid::text, state, left(query, 80) "
            "FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL"
        )
        return list(cursor.fetchall())


def as_superuser(table: str, sql: str, params: list[Any]) -> None:
    """What a database superuser can do behind the application's back: the table's trigger is
    disabled for one statement."""
    trigger = f"{table}_append_only"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
        cursor.execute(sql, params)
        cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")


@pytest.fixture
def alice(db: Any) -> User:
    return User.objects.create_user("alice", password="x")
