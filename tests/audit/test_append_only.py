"""The database refuses UPDATE, DELETE and TRUNCATE on the audit tables (rows, seals, digests),
whoever asks."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

import audit
from audit.models import AuditDigest, AuditEvent, AuditSeal
from audit.sealer import seal_pending

pytestmark = pytest.mark.django_db

TABLES = ("audit_auditevent", "audit_auditseal", "audit_auditdigest")


@pytest.fixture
def event() -> AuditEvent:
    with transaction.atomic():
        audit.record("retention.swept", conversations=3)
    return AuditEvent.objects.get()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE audit_auditevent SET details = '{\"conversations\": 0}' WHERE id = %s",
        "UPDATE audit_auditevent SET xid = xid - 1 WHERE id = %s",
        "DELETE FROM audit_auditevent WHERE id = %s",
    ],
)
def test_raw_update_and_delete_fail(event: AuditEvent, sql: str) -> None:
    with (
        pytest.raises(DatabaseError, match="audit_auditevent is append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, [event.id])
    row = AuditEvent.objects.get()
    assert (row.details, row.xid) == ({"conversations": 3}, event.xid)


def test_orm_update_and_delete_fail(event: AuditEvent) -> None:
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).update(code="conversation.viewed")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).delete()
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        event.details = {"conversations": 0}
        event.save()
    assert AuditEvent.objects.get().details == {"conversations": 3}


def test_even_a_statement_touching_no_row_is_refused(event: AuditEvent) -> None:
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM audit_auditevent WHERE id = -1")


@pytest.mark.parametrize("table", TABLES)
def test_truncate_is_refused_on_every_audit_table(event: AuditEvent, table: str) -> None:
    with (
        pytest.raises(DatabaseError, match=f"{table} is append-only: TRUNCATE refused"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"TRUNCATE {table}")
    assert AuditEvent.objects.count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("model", "sql"),
    [
        (AuditSeal, "UPDATE audit_auditseal SET hash = prev_hash"),
        (AuditSeal, "DELETE FROM audit_auditseal"),
        (AuditDigest, "UPDATE audit_auditdigest SET signature = hash"),
        (AuditDigest, "DELETE FROM audit_auditdigest"),
    ],
)
def test_seals_and_digests_are_append_only_too(model: type, sql: str) -> None:
    with transaction.atomic():
        audit.record("retention.swept", conversations=3)
    assert seal_pending().rows == 1
    before = list(model.objects.values())  # type: ignore[attr-defined]
    with (
        pytest.raises(DatabaseError, match="is append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql)
    assert list(model.objects.values()) == before  # type: ignore[attr-defined]
