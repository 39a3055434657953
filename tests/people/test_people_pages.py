"""The People pages: who may enter, with which role and queues, from which source; inviting,
roles, queue grants and deactivation, each leaving exactly one audit row."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from audit.models import AuditEvent
from console.people.models import Person
from console.people.roles import roles_of
from conversations.models import Queue
from tests.factories import UserFactory, roles

User = get_user_model()


@pytest.fixture
def world(db: Any) -> dict[str, Any]:
    roles()
    for name in ("billing", "shipping"):
        Queue.objects.create(name=name)
    sso = UserFactory(username="sso-person", groups=["support_agent"])
    Person.objects.create(
        user=sso, source="provider", oidc_subject="s-1", oidc_issuer="https://idp"
    )
    return {
        "admin": UserFactory(username="role-admin", groups=["admin"]),
        "agent": UserFactory(username="agent", groups=["support_agent"], queues=["billing"]),
        "sso": sso,
    }


def people_rows() -> list[str]:
    return list(
        AuditEvent.objects.filter(code__startswith="person.")
        .order_by("id")
        .values_list("code", flat=True)
    )


def grant_rows() -> list[str]:
    return list(
        AuditEvent.objects.filter(code__startswith="queue.")
        .order_by("id")
        .values_list("code", flat=True)
    )


def as_(client: Any, user: Any) -> Any:
    client.force_login(user)
    return client


ENDPOINTS = [
    ("get", "/people/"),
    ("get", "/people/invite/"),
    ("post", "/people/invite/"),
    ("get", "/people/{agent}/"),
    ("post", "/people/{agent}/roles/"),
    ("post", "/people/{agent}/queues/"),
    ("post", "/people/{agent}/deactivate/"),
    ("post", "/people/{agent}/reactivate/"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_only_the_admin_role_reaches_the_people_pages(
    client: Any, world: dict[str, Any], method: str, path: str
) -> None:
    url = path.format(agent=world["agent"].pk)
    anonymous = getattr(client, method)(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")
    forbidden = getattr(as_(client, world["agent"]), method)(url, {"roles": ["admin"]})
    assert forbidden.status_code == 404
    assert roles_of(world["agent"]) == {"support_agent"} and world["agent"].is_active
    assert people_rows() == [] and grant_rows() == ["queue.granted"]  # the fixture's own grant


def test_the_list_shows_role_queues_last_sign_in_and_source(
    client: Any, world: dict[str, Any], django_assert_num_queries: Any
) -> None:
    scim = UserFactory(username="scim-person")
    Person.objects.create(user=scim, source="scim", in_directory=True)
    Client().login(username="agent", password="pw-agent")
    as_(client, world["admin"]).get("/people/")
    # The session, the user, their permissions (2), the people, their groups, directory groups
    # and queue grants, the header's roles: whatever the number of people.
    with django_assert_num_queries(9):
        page = client.get("/people/")
    assert page.status_code == 200
    text = re.sub(r"\s+", " ", page.content.decode())
    assert re.search(r"agent</a>.*?Support agent.*?<code>billing</code>.*?<time", text)
    assert re.search(r"role-admin</a>.*?Admin.*?all.*?local", text)
    assert re.search(r"sso-person</a>.*?never.*?single sign-on", text)
    assert re.search(r"scim-person</a>.*?no role.*?SCIM", text)
    for n in range(5):  # more people, the same queries
        UserFactory(username=f"more{n}", groups=["reviewer"], queues=["shipping"])
    with django_assert_num_queries(9):
        assert client.get("/people/").status_code == 200


def test_inviting_a_local_person(client: Any, world: dict[str, Any]) -> None:
    as_(client, world["admin"])
    response = client.post(
        "/people/invite/",
        {"username": "newbie", "email": "newbie@example.com", "roles": ["reviewer"]},
    )
    assert response.status_code == 200, response.content
    newbie = User.objects.get(username="newbie")
    assert roles_of(newbie) == {"reviewer"} and not newbie.has_usable_password()
    assert newbie.person.source == "local" and newbie.person.invited_by == world["admin"]
    row = AuditEvent.objects.get(code="person.invited")
    assert row.details == {"person": newbie.pk, "roles": ["reviewer"], "via": "page"}
    assert row.actor_id == world["admin"].pk
    link = re.search(r'id="set-password-link">([^<]+)<', response.content.decode())
    assert link is not None
    path = link.group(1).replace("http://testserver", "")
    invitee = Client()
    form = invitee.get(path, follow=True)
    assert b"Set your password" in form.content and b"does not work" not in form.content
    done = invitee.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a-long-new-password-1", "new_password2": "a-long-new-password-1"},
    )
    assert done.status_code == 302
    assert invitee.login(username="newbie", password="a-long-new-password-1")
    assert b"does not work" in Client().get(path, follow=True).content  # used: gone
    assert people_rows() == ["person.invited"]


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"username": "agent"}, "taken"),
        ({"username": "AGENT"}, "taken"),
        ({"username": "has space"}, "letters, digits"),
        ({"username": "x", "email": "not-an-address"}, "valid email"),
        ({"username": "x", "roles": ["god"]}, "not one of the available choices"),
        ({"username": ""}, "required"),
    ],
)
def test_a_bad_invitation_is_refused_and_stores_nothing(
    client: Any, world: dict[str, Any], form: dict[str, Any], error: str
) -> None:
    users = User.objects.count()
    response = as_(client, world["admin"]).post("/people/invite/", form)
    assert response.status_code == 400
    assert error in response.content.decode()
    assert User.objects.count() == users and people_rows() == []


def test_no_invitations_where_local_passwords_are_off(
    client: Any, world: dict[str, Any], settings: Any
) -> None:
    settings.LOCAL_PASSWORDS = False
    as_(client, world["admin"])
    assert "Invite a person" not in client.get("/people/").content.decode()
    assert client.post("/people/invite/", {"username": "newbie"}).status_code == 404
    assert not User.objects.filter(username="newbie").exists() and people_rows() == []


def test_changing_roles(client: Any, world: dict[str, Any]) -> None:
    agent = world["agent"]
    as_(client, world["admin"])
    response = client.post(f"/people/{agent.pk}/roles/", {"roles": ["reviewer", "compliance"]})
    assert response.status_code == 302
    assert roles_of(agent) == {"reviewer", "compliance"}
    row = AuditEvent.objects.get(code="person.roles_changed")
    assert row.details == {
        "person": agent.pk,
        "roles": ["compliance", "reviewer"],
        "previous": ["support_agent"],
        "via": "page",
    }
    client.post(f"/people/{agent.pk}/roles/", {"roles": ["reviewer", "compliance"]})
    assert people_rows() == ["person.roles_changed"]  # no change, no row
    assert client.post(f"/people/{agent.pk}/roles/", {"roles": ["god"]}).status_code == 400
    # A person from the identity provider keeps the roles its groups give.
    refused = client.post(f"/people/{world['sso'].pk}/roles/", {"roles": ["admin"]}, follow=True)
    assert "follow their groups" in refused.content.decode()
    assert roles_of(world["sso"]) == {"support_agent"}
    # An admin cannot take the admin role from themselves.
    me = world["admin"]
    refused = client.post(f"/people/{me.pk}/roles/", {"roles": []}, follow=True)
    assert "from yourself" in refused.content.decode() and roles_of(me) == {"admin"}
    assert people_rows() == ["person.roles_changed"]


def test_granting_and_revoking_queues(client: Any, world: dict[str, Any]) -> None:
    agent = world["agent"]
    as_(client, world["admin"])
    before = grant_rows()
    page = client.get(f"/people/{agent.pk}/").content.decode()
    assert '<option value="shipping">' in page and '<option value="billing">' not in page
    assert client.post(f"/people/{agent.pk}/queues/", {"queue": "shipping", "action": "grant"})
    assert grant_rows() == [*before, "queue.granted"]
    assert agent.has_perm("conversations.see_queue", Queue.objects.get(name="shipping"))
    client.post(f"/people/{agent.pk}/queues/", {"queue": "billing", "action": "revoke"})
    assert grant_rows() == [*before, "queue.granted", "queue.revoked"]
    row = AuditEvent.objects.filter(code="queue.revoked").get()
    assert row.details == {"queue": "billing", "user": agent.pk}
    bad = client.post(f"/people/{agent.pk}/queues/", {"queue": "nope", "action": "grant"})
    assert bad.status_code == 400
    again = client.post(f"/people/{agent.pk}/queues/", {"queue": "shipping", "action": "grant"})
    assert again.status_code == 302
    assert grant_rows() == [*before, "queue.granted", "queue.revoked"]


def test_deactivating_ends_every_session_at_once(client: Any, world: dict[str, Any]) -> None:
    agent = world["agent"]
    laptop, phone = Client(), Client()
    assert laptop.login(username="agent", password="pw-agent")
    assert phone.login(username="agent", password="pw-agent")
    assert laptop.get("/settings/").status_code == 200
    as_(client, world["admin"])
    response = client.post(f"/people/{agent.pk}/deactivate/", {"reason": "left the team"})
    assert response.status_code == 302
    for device in (laptop, phone):
        after = device.get("/settings/")
        assert after.status_code == 302 and after["Location"].startswith("/login/")
    assert not laptop.login(username="agent", password="pw-agent")
    row = AuditEvent.objects.get(code="person.deactivated")
    assert row.details == {
        "person": agent.pk,
        "sessions_ended": 2,
        "reason": "left the team",
        "via": "page",
    }
    assert client.post(f"/people/{agent.pk}/reactivate/").status_code == 302
    assert laptop.login(username="agent", password="pw-agent")
    assert people_rows() == ["person.deactivated", "person.reactivated"]
    # Nobody deactivates themselves from here.
    me = world["admin"]
    refused = client.post(f"/people/{me.pk}/deactivate/", {}, follow=True)
    assert "cannot deactivate yourself" in refused.content.decode()
    me.refresh_from_db()
    assert me.is_active and people_rows() == ["person.deactivated", "person.reactivated"]


def test_a_missing_person_is_a_404(client: Any, world: dict[str, Any]) -> None:
    as_(client, world["admin"])
    assert client.get("/people/999999/").status_code == 404
    assert client.post("/people/999999/deactivate/").status_code == 404
