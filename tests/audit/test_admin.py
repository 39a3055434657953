"""The admin: read-only, and browsing the log is itself logged."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client

import audit
from audit.models import AuditEvent
from audit.verify import verify_chain

pytestmark = pytest.mark.django_db

LIST = "/admin/audit/auditevent/"


@pytest.fixture
def event() -> AuditEvent:
    with transaction.atomic():
        return audit.record("conversation.viewed", conversation_id=4242, page="detail")


def test_changelist_filters_and_logs_the_view(admin_client: Client, event: AuditEvent) -> None:
    response = admin_client.get(
        LIST,
        {"code__exact": "conversation.viewed", "q": "4242", "at__gte": "2000-01-01 00:00:00+00:00"},
    )
    assert response.status_code == 200
    assert b"4242" in response.content
    viewed = AuditEvent.objects.get(code="audit.viewed")
    assert viewed.actor_label == "admin"
    assert viewed.details == {
        "page": "admin-list",
        "filters": {"at__gte": "2000-01-01 00:00:00+00:00", "code__exact": "conversation.viewed"},
        "query_hash": audit.query_hash("4242"),
    }
    assert verify_chain().ok


def test_any_text_typed_in_is_hashed_not_stored(admin_client: Client, event: Any) -> None:
    response = admin_client.get(LIST, {"q": "customer-RAW-1", "code": "customer-RAW-2"})
    assert response.status_code == 200
    viewed = AuditEvent.objects.get(code="audit.viewed")
    assert "customer-RAW" not in str(viewed.details)
    assert viewed.details["query_hash"] == audit.query_hash("customer-RAW-1")
    assert viewed.details["filters"] == {"code": "hash:" + audit.query_hash("customer-RAW-2")}


def test_detail_is_read_only_and_logged(admin_client: Client, event: AuditEvent) -> None:
    url = f"{LIST}{event.pk}/change/"
    response = admin_client.get(url)
    assert response.status_code == 200
    assert b'name="_save"' not in response.content
    assert AuditEvent.objects.get(code="audit.viewed").details == {
        "page": "admin-detail",
        "filters": {"id": str(event.pk)},
    }
    assert admin_client.post(url, {"code": "x.y"}).status_code == 403
    assert AuditEvent.objects.get(pk=event.pk).code == "conversation.viewed"


def test_no_add_and_no_delete(admin_client: Client, event: AuditEvent) -> None:
    assert admin_client.get(f"{LIST}add/").status_code == 403
    assert admin_client.get(f"{LIST}{event.pk}/delete/").status_code == 403
    assert admin_client.post(f"{LIST}{event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AuditEvent.objects.filter(pk=event.pk).exists()


def test_staff_without_the_permission_see_nothing(client: Client, event: AuditEvent) -> None:
    User.objects.create_user("agent", password="pw", is_staff=True)
    client.login(username="agent", password="pw")
    assert client.get(LIST).status_code == 403
    assert not AuditEvent.objects.filter(code="audit.viewed").exists()
