"""The database refuses UPDATE and DELETE on the audit table, whoever asks."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

import audit
from audit.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def event() -> AuditEvent:
    with transaction.atomic():
        audit.record("retention.swept", conversations=3)
    return AuditEvent.objects.get()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE audit_auditevent SET details = '{\"conversations\": 0}' WHERE id = %s",
        "UPDATE audit_auditevent SET hash = prev_hash WHERE id = %s",
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
    assert (row.details, row.hash) == ({"conversations": 3}, event.hash)


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
