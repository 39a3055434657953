"""Queues from the start (issue 35): the invite form grants queues (each grant audited), and a
support agent who sees no queue is told so on the list, once, with who can grant one (not "No
conversation matches." twice)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from audit.models import AuditEvent
from conversations.models import Queue
from conversations.permissions import visible_queues
from tests.factories import ExchangeBodyFactory, UserFactory, ingest, roles

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(db: Any) -> Any:
    roles()
    for name in ("billing", "shipping", "returns"):
        Queue.objects.create(name=name)
    return UserFactory(username="role-admin", groups=["admin"])


def test_the_invite_form_offers_the_queues_and_grants_them(client: Any, admin: Any) -> None:
    client.force_login(admin)
    form = client.get("/people/invite/").content.decode()
    for name in ("billing", "shipping", "returns"):
        assert re.search(rf'<input type="checkbox" name="queues" value="{name}"', form), name
    response = client.post(
        "/people/invite/",
        {"username": "newbie", "roles": ["support_agent"], "queues": ["billing", "returns"]},
    )
    assert response.status_code == 200, response.content
    assert "They see the queues <code>billing</code>, <code>returns</code>" in (
        response.content.decode()
    )
    newbie = get_user_model().objects.get(username="newbie")
    assert sorted(visible_queues(newbie).values_list("name", flat=True)) == ["billing", "returns"]
    grants = AuditEvent.objects.filter(code="queue.granted").order_by("id")
    assert [(g.details["queue"], g.details["user"], g.actor_id) for g in grants] == [
        ("billing", newbie.pk, admin.pk),
        ("returns", newbie.pk, admin.pk),
    ]


def test_an_unknown_queue_is_refused_and_nobody_is_invited(client: Any, admin: Any) -> None:
    client.force_login(admin)
    response = client.post(
        "/people/invite/", {"username": "newbie", "roles": ["support_agent"], "queues": ["nope"]}
    )
    assert response.status_code == 400
    assert "nope is not one of the available choices" in response.content.decode()
    assert not get_user_model().objects.filter(username="newbie").exists()
    assert not AuditEvent.objects.filter(code__in=["person.invited", "queue.granted"]).exists()


def test_an_agent_with_no_queue_is_told_once_and_by_whom(client: Any, admin: Any) -> None:
    ingest(ExchangeBodyFactory(conversation="conv-billing", queue="billing"))
    UserFactory(username="zed-admin", groups=["admin"])
    UserFactory(username="gone-admin", groups=["admin"], is_active=False)
    newcomer = UserFactory(username="newcomer", groups=["support_agent"])
    client.force_login(newcomer)
    page = client.get("/").content.decode()
    assert page.count("You see no queue yet") == 1
    assert "No conversation matches." not in page
    assert "An admin grants one on the People page (role-admin, zed-admin)." in page
    assert "gone-admin" not in page
    # With a queue, an empty result says so once, and nothing about queues.
    agent = UserFactory(username="agent", groups=["support_agent"], queues=["shipping"])
    client.force_login(agent)
    page = client.get("/").content.decode()
    assert page.count("No conversation matches.") == 1
    assert "You see no queue yet" not in page
