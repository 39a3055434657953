"""The admin role does what its pages promise without being a superuser or staff: it opens
/admin/ and creates an alert rule, a price, a retention class and a field policy there (each
through its audited service); a support agent reaches none of those pages."""

from __future__ import annotations

from typing import Any

import pytest

from audit.models import AuditEvent
from conversations.models import AlertRule, FieldPolicy, ModelPrice
from retention.models import RetentionClass
from tests.factories import UserFactory, roles

PAGES = {
    "alert rule": (
        "/admin/conversations/alertrule/add/",
        {
            "name": "Truncation on billing",
            "metric": "truncation",
            "queue": "billing",
            "snapshot": "",
            "window_minutes": "60",
            "threshold": "0.05",
            "min_exchanges": "20",
            "enabled": "on",
            "webhook_url": "",
            "webhook_secret": "",
            "emails": "",
        },
        "alert_rule.changed",
    ),
    "price": (
        "/admin/conversations/modelprice/add/",
        {
            "model": "claude-sonnet-4-5",
            "input": "3",
            "cache_read": "0.3",
            "cache_write": "3.75",
            "output": "15",
        },
        "model_price.changed",
    ),
    "retention class": (
        "/admin/retention/retentionclass/add/",
        {"queue": "billing", "conversation_id": "", "days": "90"},
        "retention_class.changed",
    ),
    "field policy": (
        "/admin/conversations/fieldpolicy/add/",
        {
            "tool_name": "get_order",
            "block_type": "*",
            "side": "output",
            "path": "$.carrier",
            "storage_class": "status",
            "note": "",
        },
        "policy.changed",
    ),
}


@pytest.fixture
def people(db: Any) -> dict[str, Any]:
    roles()
    return {
        "admin": UserFactory(username="role-admin", groups=["admin"]),
        "agent": UserFactory(username="agent", groups=["support_agent"], queues=["billing"]),
    }


def test_the_admin_role_opens_the_admin_without_a_staff_flag(client: Any, people: Any) -> None:
    admin = people["admin"]
    assert not admin.is_staff and not admin.is_superuser
    client.force_login(admin)
    index = client.get("/admin/")
    assert index.status_code == 200
    page = index.content.decode()
    for name in ("Alert rules", "Model prices", "Retention classes", "Field policies"):
        assert name in page, name
    assert "Users" not in page  # people are managed on the People page, not here
    assert 'href="/admin/"' in client.get("/settings/").content.decode()  # the header's link


def test_the_admin_role_creates_each_through_the_pages(
    client: Any, people: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client.force_login(people["admin"])
    for what, (url, form, code) in PAGES.items():
        assert client.get(url).status_code == 200, what
        with django_capture_on_commit_callbacks(execute=False):
            response = client.post(url, form)
        assert response.status_code == 302, (what, response.content[:2000])
        assert AuditEvent.objects.filter(code=code).count() == 1, what
    assert AlertRule.objects.filter(name="Truncation on billing").exists()
    assert ModelPrice.objects.get().model == "claude-sonnet-4-5"
    assert RetentionClass.objects.get().days == 90
    assert FieldPolicy.objects.get().path == "$.carrier"


@pytest.mark.parametrize("what", list(PAGES))
def test_a_support_agent_reaches_none_of_them(client: Any, people: Any, what: str) -> None:
    url, form, _ = PAGES[what]
    rules = AlertRule.objects.count()  # the default rules (the conversations app's migration)
    client.force_login(people["agent"])
    assert client.get("/admin/").status_code == 404
    assert client.get(url).status_code == 404
    assert client.post(url, form).status_code == 404
    changelist = url.removesuffix("add/")
    assert client.get(changelist).status_code == 404
    assert AlertRule.objects.count() == rules and not ModelPrice.objects.exists()
    assert not RetentionClass.objects.exists() and not FieldPolicy.objects.exists()


def test_anonymous_is_sent_to_the_sign_in_page(client: Any, people: Any) -> None:
    response = client.get("/admin/conversations/alertrule/add/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
    login = client.get(response["Location"])
    assert login.status_code == 302 and login["Location"].startswith("/login/")
