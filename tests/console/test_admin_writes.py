"""Every write in the admin goes through an audited service: one audit row per change, in the
change's transaction. The walk over the admin's registry fails for a new writable admin that
is not audited."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import DatabaseError, transaction
from django.test import Client

from audit.models import AuditEvent
from conversations.admin import AuditedAdmin
from conversations.models import FieldPolicy, Queue, ServiceToken, ShareLink, ToolLink, WorkNote
from conversations.services import service_token_create
from conversations.sharing.links import share_link_create
from retention.models import RetentionClass
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db(databases="__all__")

# Django's own admins (users, groups): who may log in is outside the console's audit log.
NOT_OURS = {"auth"}


@pytest.fixture
def superuser() -> Any:
    call_command("setup_roles", stdout=io.StringIO())
    return get_user_model().objects.create_superuser("root", password="pw")


@pytest.fixture
def admin_client(superuser: Any) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


def written(client: Client, method: str, url: str, data: dict[str, Any] | None = None) -> list[Any]:
    """The audit rows written by one request (which must succeed)."""
    before = AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
    response = getattr(client, method)(url, data or {})
    assert response.status_code in (200, 302), (response.status_code, url)
    if response.status_code == 200 and method == "post":
        errors = response.context.get("errors") if response.context else None
        assert not errors, errors
    return list(
        AuditEvent.objects.filter(pk__gt=before).order_by("id").values_list("code", "details")
    )


def test_every_writable_admin_of_ours_is_audited(superuser: Any) -> None:
    unaudited = []
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label in NOT_OURS:
            continue

        class Request:
            user = superuser

        writable = any(
            getattr(model_admin, f"has_{verb}_permission")(Request())
            for verb in ("add", "change", "delete")
        )
        if writable and not isinstance(model_admin, AuditedAdmin):
            unaudited.append(model._meta.label)
    assert not unaudited, f"admins that write without an audited service: {unaudited}"


def test_the_admin_walk_answers_every_page(admin_client: Client) -> None:
    service_token_create(name="walk")
    ToolLink.objects.create(tool_name="walk", url_template="https://x.example/{id}")
    WorkNote.objects.create(tool_name="walk", template="Walked {id}")
    user = get_user_model().objects.get(username="root")
    share_link_create(actor=user, conversation_id=ConversationFactory().pk)
    for model, model_admin in admin.site._registry.items():
        opts = model._meta
        base = f"/admin/{opts.app_label}/{opts.model_name}/"
        assert admin_client.get(base).status_code == 200, base
        first = model_admin.get_queryset(type("R", (), {"user": None})()).first()  # type: ignore[arg-type]
        if first is not None:
            page = f"{base}{first.pk}/change/"
            assert admin_client.get(page).status_code == 200, page


def test_service_tokens_changed_and_revoked(admin_client: Client) -> None:
    token, _ = service_token_create(name="backend")
    url = f"/admin/conversations/servicetoken/{token.pk}/change/"
    assert written(admin_client, "post", url, {"name": "backend-eu", "scope": "ingest"}) == [
        ("token.changed", {"token": token.pk, "fields": ["name"], "scope": "ingest"})
    ]
    assert written(admin_client, "post", url, {"name": "backend-eu", "scope": "compliance"}) == [
        ("token.changed", {"token": token.pk, "fields": ["scope"], "scope": "compliance"})
    ]
    assert written(admin_client, "post", url, {"name": "backend-eu", "scope": "compliance"}) == []
    revoke = {"action": "revoke", "_selected_action": [token.pk]}
    assert written(admin_client, "post", "/admin/conversations/servicetoken/", revoke) == [
        ("token.revoked", {"token": token.pk})
    ]
    token.refresh_from_db()
    assert token.revoked_at is not None and token.scope == "compliance"
    assert written(admin_client, "post", "/admin/conversations/servicetoken/", revoke) == []


def test_a_token_created_by_the_command_is_audited() -> None:
    call_command("create_service_token", "ticketing", "--scope", "compliance", stdout=io.StringIO())
    token = ServiceToken.objects.get(name="ticketing")
    (row,) = AuditEvent.objects.filter(code="token.created")
    assert row.details == {"token": token.pk, "name": "ticketing", "scope": "compliance"}
    assert token.token_sha256 not in str(row.details)


def test_tool_links_saved_and_deleted(admin_client: Client) -> None:
    base = "/admin/conversations/toollink/"
    data = {"tool_name": "get_order", "url_template": "https://o.example/{order_id}"}
    rows = written(admin_client, "post", f"{base}add/", data)
    link = ToolLink.objects.get()
    assert rows == [
        ("tool_link.changed", {"change": "saved", "tool": "get_order", "link": link.pk})
    ]
    data["url_template"] = "https://orders.example/{order_id}"
    assert [c for c, _ in written(admin_client, "post", f"{base}{link.pk}/change/", data)] == [
        "tool_link.changed"
    ]
    rows = written(admin_client, "post", f"{base}{link.pk}/delete/", {"post": "yes"})
    assert rows == [
        ("tool_link.changed", {"change": "deleted", "tool": "get_order", "link": link.pk})
    ]
    assert not ToolLink.objects.exists()


def test_work_notes_saved_refused_and_deleted(admin_client: Client) -> None:
    base = "/admin/conversations/worknote/"
    data = {"tool_name": "get_order", "template": "Looked up order {order_id}: {status}"}
    rows = written(admin_client, "post", f"{base}add/", data)
    note = WorkNote.objects.get()
    assert rows == [
        ("work_note.changed", {"change": "saved", "tool": "get_order", "note": note.pk})
    ]
    refused = admin_client.post(f"{base}{note.pk}/change/", {**data, "template": "{secret}"})
    assert refused.status_code == 200
    assert "{secret} is a drop field of get_order" in refused.content.decode()
    note.refresh_from_db()
    assert note.template == data["template"]
    rows = written(admin_client, "post", f"{base}{note.pk}/delete/", {"post": "yes"})
    assert rows == [
        ("work_note.changed", {"change": "deleted", "tool": "get_order", "note": note.pk})
    ]


def test_share_links_are_read_only_in_the_admin(admin_client: Client) -> None:
    user = get_user_model().objects.get(username="root")
    link, token = share_link_create(actor=user, conversation_id=ConversationFactory().pk)
    page = admin_client.get(f"/admin/conversations/sharelink/{link.pk}/change/")
    assert page.status_code == 200
    assert link.token_sha256 not in page.content.decode() and token not in page.content.decode()
    assert admin_client.post(f"/admin/conversations/sharelink/{link.pk}/delete/",
                             {"post": "yes"}).status_code == 403  # fmt: skip
    assert ShareLink.objects.filter(pk=link.pk).exists()


def test_queues_created_granted_and_never_renamed(admin_client: Client, superuser: Any) -> None:
    agent = get_user_model().objects.create_user("ann")
    base = "/admin/conversations/queue/"
    rows = written(admin_client, "post", f"{base}add/", {"name": "vip"})
    assert rows == [("queue.created", {"queue": "vip"})]
    queue = Queue.objects.get(name="vip")
    change = f"{base}{queue.pk}/change/"
    rows = written(admin_client, "post", change, {"users": [agent.pk], "groups": []})
    assert rows == [("queue.granted", {"queue": "vip", "user": agent.pk})]
    group = Group.objects.get(name="support_agent")
    rows = written(admin_client, "post", change, {"users": [], "groups": [group.pk]})
    assert rows == [
        ("queue.revoked", {"queue": "vip", "user": agent.pk}),
        ("queue.granted", {"queue": "vip", "group": group.pk}),
    ]
    # The name is read-only in the form, and the database refuses a rename from anywhere.
    assert written(admin_client, "post", change, {"name": "other", "groups": [group.pk]}) == []
    assert Queue.objects.filter(name="vip").exists()
    with pytest.raises(DatabaseError, match="cannot be renamed"), transaction.atomic():
        Queue.objects.filter(pk=queue.pk).update(name="renamed")
    assert admin_client.get(f"{base}{queue.pk}/delete/").status_code == 403


def test_field_policies_saved_and_deleted(admin_client: Client) -> None:
    base = "/admin/conversations/fieldpolicy/"
    data = {
        "tool_name": "get_order",
        "block_type": "*",
        "side": "input",
        "path": "$.email",
        "storage_class": "restricted",
    }
    rows = written(admin_client, "post", f"{base}add/", data)
    assert [c for c, _ in rows] == ["policy.changed"]
    policy = FieldPolicy.objects.get()
    rows = written(admin_client, "post", f"{base}{policy.pk}/delete/", {"post": "yes"})
    assert [(c, d["change"]) for c, d in rows] == [("policy.changed", "deleted")]


def test_retention_classes_saved_and_deleted(admin_client: Client) -> None:
    base = "/admin/retention/retentionclass/"
    rows = written(admin_client, "post", f"{base}add/", {"queue": "billing", "days": "30"})
    retention = RetentionClass.objects.get()
    assert rows == [
        (
            "retention_class.changed",
            {"change": "saved", "retention_class": retention.pk, "queue": "billing", "days": 30},
        )
    ]
    rows = written(
        admin_client, "post", f"{base}{retention.pk}/change/", {"queue": "billing", "days": "90"}
    )
    assert [d["days"] for _, d in rows] == [90]
    bulk = {"action": "delete_selected", "_selected_action": [retention.pk], "post": "yes"}
    rows = written(admin_client, "post", base, bulk)
    assert [(c, d["change"]) for c, d in rows] == [("retention_class.changed", "deleted")]
