"""The signals' admin writes through audited services."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from audit.models import AuditEvent
from conversations.models import AlertRule, ModelPrice

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture
def admin_client() -> Client:
    call_command("setup_roles", stdout=io.StringIO())
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    return client


def codes_after(before: int) -> list[tuple[str, Any]]:
    return list(
        AuditEvent.objects.filter(pk__gt=before).order_by("id").values_list("code", "details")
    )


def last_id() -> int:
    return AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0


def test_alert_rule_and_price_changes_are_audited(admin_client: Client) -> None:
    from conversations.models import Queue

    Queue.objects.create(name="billing")  # a rule chooses a queue that exists
    before = last_id()
    data = {
        "name": "latency",
        "metric": "latency_p95",
        "queue": "billing",
        "snapshot": "",
        "window_minutes": 30,
        "threshold": 9000,
        "min_exchanges": 10,
        "enabled": "on",
        "webhook_url": "https://hooks.example/x",
        "webhook_secret": "s",
        "emails": "a@example.com",
    }
    r = admin_client.post("/admin/conversations/alertrule/add/", data)
    assert r.status_code == 302, r.content
    rule = AlertRule.objects.get(name="latency")
    assert codes_after(before) == [
        (
            "alert_rule.changed",
            {
                "change": "saved",
                "rule": rule.pk,
                "metric": "latency_p95",
                "muted": False,
                "enabled": True,
            },
        )
    ]
    before = last_id()
    r = admin_client.post(f"/admin/conversations/alertrule/{rule.pk}/delete/", {"post": "yes"})
    assert r.status_code == 302
    assert codes_after(before) == [("alert_rule.changed", {"change": "deleted", "rule": rule.pk})]

    before = last_id()
    price = {
        "model": "claude-sonnet-4-5-20250929",
        "input": "3",
        "cache_read": "0.3",
        "cache_write": "3.75",
        "output": "15",
    }
    assert admin_client.post("/admin/conversations/modelprice/add/", price).status_code == 302
    row = ModelPrice.objects.get()
    assert codes_after(before) == [
        ("model_price.changed", {"change": "saved", "price": row.pk, "model": row.model})
    ]
    for page in ("alertrule", "modelprice", "alert", "allowanceprobe"):
        assert admin_client.get(f"/admin/conversations/{page}/").status_code == 200
