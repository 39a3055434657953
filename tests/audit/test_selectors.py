"""audit_events(): the compliance filters, newest first, one query."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction

import audit
from audit.models import AuditEvent
from audit.selectors import AuditFilters, audit_events

pytestmark = pytest.mark.django_db


@pytest.fixture
def log(alice: User) -> dict[str, AuditEvent]:
    with transaction.atomic():
        return {
            "view": audit.record("conversation.viewed", actor=alice, conversation_id=1, page="d"),
            "search": audit.record("conversation.searched", actor=alice, results=2),
            "request": audit.record("deletion.requested", subject="cust-1", scope="subject"),
            "executed": audit.record("deletion.executed", subject="cust-1", conversations=1),
            "other": audit.record("conversation.viewed", conversation_id=2, page="d"),
        }


def ids(filters: AuditFilters | None = None) -> list[int]:
    return list(audit_events(filters).values_list("id", flat=True))


def test_newest_first(log: dict[str, AuditEvent]) -> None:
    assert ids() == sorted((e.id for e in log.values()), reverse=True)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"code": "conversation.viewed"}, ["other", "view"]),
        ({"code": "deletion."}, ["executed", "request"]),
        ({"conversation_id": 1}, ["view"]),
        ({"subject": "cust-1"}, ["executed", "request"]),
        ({"subject": "cust-2"}, []),
        ({"actor_label": "system", "code": "conversation."}, ["other"]),
    ],
)
def test_filters(log: dict[str, AuditEvent], filters: dict[str, Any], expected: list[str]) -> None:
    assert ids(AuditFilters(**filters)) == [log[name].id for name in expected]


def test_actor_filter(log: dict[str, AuditEvent], alice: User) -> None:
    assert ids(AuditFilters(actor_id=alice.pk)) == [log["search"].id, log["view"].id]


def test_date_range(log: dict[str, AuditEvent]) -> None:
    at = log["request"].at
    assert ids(AuditFilters(since=at)) == [log["other"].id, log["executed"].id, log["request"].id]
    assert ids(AuditFilters(until=at)) == [log["search"].id, log["view"].id]
    later = at + timedelta(days=1)
    assert ids(AuditFilters(since=later)) == []


def test_one_query_whatever_the_rows(
    log: dict[str, AuditEvent], django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(1):
        rows = list(audit_events(AuditFilters(code="conversation.")))
        assert [r.details for r in rows]
