"""SCIM 2.0 at /scim/v2/ (django-scim2): who may call, Users and Groups with filtering and PATCH,
roles from groups through OIDC_ROLE_MAP, one audit row per write, and a deactivation that ends
the person's open session on its next request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from audit.models import AuditEvent
from console.people.models import DirectoryGroup, Person
from console.people.roles import roles_of
from conversations.services import service_token_create
from tests.factories import UserFactory, roles

User = get_user_model()
SCIM = "application/scim+json"
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


class Scim:
    """Django's test client speaking SCIM with a token."""

    def __init__(self, client: Any, token: str) -> None:
        self.client = client
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(f"/scim/v2/{path}", params, **self.auth)

    def send(self, method: str, path: str, body: Any) -> Any:
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        call = getattr(self.client, method)
        return call(f"/scim/v2/{path}", data=data, content_type=SCIM, **self.auth)

    def post(self, path: str, body: Any) -> Any:
        return self.send("post", path, body)

    def put(self, path: str, body: Any) -> Any:
        return self.send("put", path, body)

    def patch(self, path: str, *operations: dict[str, Any]) -> Any:
        return self.send("patch", path, {"schemas": [PATCH_URN], "Operations": list(operations)})

    def delete(self, path: str) -> Any:
        return self.client.delete(f"/scim/v2/{path}", **self.auth)


@pytest.fixture
def scim(client: Any, db: Any, settings: Any) -> Scim:
    roles()
    settings.OIDC_ROLE_MAP = "support=support_agent,reviewers=reviewer,console-admins=admin"
    _, token = service_token_create(name="idp", scope="scim")
    return Scim(client, token)


def new_user(scim: Scim, username: str = "jo@example.com", **extra: Any) -> dict[str, Any]:
    body = {
        "schemas": [USER_URN],
        "userName": username,
        "externalId": f"ext-{username}",
        "name": {"givenName": "Jo", "familyName": "Doe"},
        "emails": [{"value": username, "type": "work", "primary": True}],
        "active": True,
        **extra,
    }
    response = scim.post("Users", body)
    assert response.status_code == 201, response.content
    assert response["Content-Type"] == SCIM
    return dict(response.json())


def audit_codes() -> list[str]:
    """The people rows written (the token's own creation row left out)."""
    rows = AuditEvent.objects.exclude(code="token.created").order_by("id")
    return list(rows.values_list("code", flat=True))


def test_only_a_token_of_scope_scim_opens_scim(client: Any, db: Any) -> None:
    assert client.get("/scim/v2/Users").status_code == 401
    bad = client.get("/scim/v2/Users", HTTP_AUTHORIZATION="Bearer nope")
    assert bad.status_code == 401 and bad.json()["status"] == "401"
    _, ingest = service_token_create(name="chat", scope="ingest")
    other = client.get("/scim/v2/Users", HTTP_AUTHORIZATION=f"Bearer {ingest}")
    assert other.status_code == 403
    _, token = service_token_create(name="idp", scope="scim")
    assert client.get("/scim/v2/Users", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200


def test_a_user_is_provisioned_read_filtered_and_replaced(scim: Scim) -> None:
    created = new_user(scim)
    user = User.objects.get(username="jo@example.com")
    assert (user.email, user.first_name, user.last_name) == ("jo@example.com", "Jo", "Doe")
    assert not user.has_usable_password()
    assert user.person.source == Person.Source.SCIM and user.person.in_directory
    assert created["id"] == user.person.scim_id
    assert created["meta"]["location"].endswith(f"/scim/v2/Users/{created['id']}")
    assert audit_codes() == ["person.provisioned"]

    assert scim.get(f"Users/{created['id']}").json()["userName"] == "jo@example.com"
    found = scim.get("Users", filter='userName eq "jo@example.com"').json()
    assert found["totalResults"] == 1 and found["Resources"][0]["id"] == created["id"]
    assert (
        scim.get("Users", filter='externalId eq "ext-jo@example.com"').json()["totalResults"] == 1
    )
    assert scim.get("Users", filter='userName eq "nobody"').json()["totalResults"] == 0
    assert scim.get("Users", filter='name.familyName sw "Do"').json()["totalResults"] == 1
    projected = scim.get(f"Users/{created['id']}", attributes="userName").json()
    assert set(projected) == {"schemas", "id", "userName"}

    replaced = scim.put(
        f"Users/{created['id']}",
        {"schemas": [USER_URN], "userName": "jo.doe@example.com", "active": True},
    )
    assert replaced.status_code == 200, replaced.content
    user.refresh_from_db()
    assert (user.username, user.email, user.first_name) == ("jo.doe@example.com", "", "")
    assert audit_codes() == ["person.provisioned", "person.updated"]


def test_local_accounts_are_out_of_reach(scim: Scim) -> None:
    local = UserFactory(username="break-glass", groups=["admin"])
    assert scim.get("Users").json()["totalResults"] == 0
    assert scim.get("Users", filter='userName eq "break-glass"').json()["totalResults"] == 0
    taken = scim.post("Users", {"schemas": [USER_URN], "userName": "Break-Glass", "active": True})
    assert taken.status_code == 409 and taken.json()["scimType"] == "uniqueness"
    local.refresh_from_db()
    assert local.is_active
    assert audit_codes() == []


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ("{not json", "JSON"),
        ({"schemas": [USER_URN], "active": True}, "userName is required"),
        ({"schemas": [USER_URN], "userName": "x"}, "active is required"),
        ({"schemas": [USER_URN], "userName": "x", "active": "yes"}, "active must be a bool"),
        ({"schemas": [USER_URN], "userName": "has space", "active": True}, "user name"),
        (
            {
                "schemas": [USER_URN],
                "userName": "x",
                "active": True,
                "emails": [
                    {"value": "a@b.c", "primary": True},
                    {"value": "d@e.f", "primary": True},
                ],
            },
            "primary",
        ),
        ({"schemas": [USER_URN], "userName": "x", "active": True, "emails": "a@b.c"}, "object"),
        ({"schemas": [USER_URN], "userName": "x", "active": True, "displayName": "a\x00b"}, "NUL"),
        (
            {"schemas": [USER_URN], "userName": "x", "active": True, "name": {"givenName": 5}},
            "name.givenName must be a str",
        ),
        (["not", "an", "object"], "JSON object"),
    ],
)
def test_bad_input_is_a_scim_400_and_stores_nothing(scim: Scim, body: Any, detail: str) -> None:
    response = scim.post("Users", body)
    assert response.status_code == 400, response.content
    error = response.json()
    assert error["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert detail in error["detail"]
    assert not Person.objects.exists() and audit_codes() == []


def test_patch_active_false_ends_the_open_session_on_the_next_request(
    scim: Scim, client: Any
) -> None:
    created = new_user(scim)
    user = User.objects.get(username="jo@example.com")
    DirectoryGroup.objects.create(display_name="support").members.add(user)
    from console.people.roles import set_roles

    set_roles(user, {"support_agent"})
    from django.test import Client

    browser = Client()
    browser.force_login(user)
    assert browser.get("/settings/").status_code == 200  # signed in, before

    response = scim.patch(
        f"Users/{created['id']}", {"op": "replace", "path": "active", "value": False}
    )
    assert response.status_code == 200, response.content
    assert response.json()["active"] is False
    after = browser.get("/settings/")
    assert after.status_code == 302 and after["Location"].startswith("/login/")
    user.refresh_from_db()
    assert not user.is_active
    row = AuditEvent.objects.get(code="person.updated")
    # The deactivation took the roles too (a reactivation gives those the groups give then).
    assert row.details["fields"] == ["active", "roles"] and row.details["sessions_ended"] == 1
    assert row.details["roles"] == []
    assert not browser.login(username="jo@example.com", password="anything")


def test_a_patch_of_many_operations_is_one_change(scim: Scim) -> None:
    created = new_user(scim)
    response = scim.patch(
        f"Users/{created['id']}",
        {"op": "replace", "value": {"name.givenName": "Joanna", "displayName": "Joanna D"}},
        {"op": "add", "path": "emails", "value": [{"value": "home@example.com", "type": "home"}]},
        {"op": "remove", "path": 'emails[type eq "work"]'},
        {"op": "replace", "path": "urn:ietf:params:scim:schemas:core:2.0:User:userName",
         "value": "joanna"},
    )  # fmt: skip
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["name"] == {"givenName": "Joanna", "familyName": "Doe"}
    assert body["displayName"] == "Joanna D"
    assert body["emails"] == [{"value": "home@example.com", "type": "home"}]
    user = User.objects.get(person__scim_id=created["id"])
    assert (user.username, user.first_name, user.email) == ("joanna", "Joanna", "home@example.com")
    assert audit_codes() == ["person.provisioned", "person.updated"]
    bad = scim.patch(f"Users/{created['id']}", {"op": "remove", "path": "userName"})
    assert bad.status_code == 400 and bad.json()["scimType"] == "mutability"
    assert audit_codes() == ["person.provisioned", "person.updated"]


def test_groups_give_roles_through_the_role_map(scim: Scim) -> None:
    jo = new_user(scim)
    al = new_user(scim, "al@example.com")
    group = scim.post(
        "Groups",
        {"schemas": [GROUP_URN], "displayName": "support", "members": [{"value": jo["id"]}]},
    )
    assert group.status_code == 201, group.content
    gid = group.json()["id"]
    jo_user = User.objects.get(person__scim_id=jo["id"])
    al_user = User.objects.get(person__scim_id=al["id"])
    assert roles_of(jo_user) == {"support_agent"} and roles_of(al_user) == set()
    assert scim.get(f"Users/{jo['id']}").json()["groups"][0]["display"] == "support"
    found = scim.get("Groups", filter='displayName eq "support"').json()
    assert found["totalResults"] == 1 and found["Resources"][0]["id"] == gid

    added = scim.patch(
        f"Groups/{gid}", {"op": "add", "path": "members", "value": [{"value": al["id"]}]}
    )
    assert added.status_code == 200, added.content
    assert roles_of(al_user) == {"support_agent"}
    removed = scim.patch(
        f"Groups/{gid}", {"op": "remove", "path": f'members[value eq "{jo["id"]}"]'}
    )
    assert removed.status_code == 200
    assert roles_of(jo_user) == set()
    renamed = scim.patch(f"Groups/{gid}", {"op": "replace", "value": {"displayName": "reviewers"}})
    assert renamed.status_code == 200
    assert roles_of(al_user) == {"reviewer"}
    assert scim.delete(f"Groups/{gid}").status_code == 204
    assert roles_of(al_user) == set()
    changes = AuditEvent.objects.filter(code="directory_group.changed").order_by("id")
    assert [c.details["change"] for c in changes] == [
        "created",
        "updated",
        "updated",
        "updated",
        "deleted",
    ]
    assert [c.details["roles_changed"] for c in changes] == [
        [jo_user.pk],
        [al_user.pk],
        [jo_user.pk],
        [al_user.pk],
        [al_user.pk],
    ]
    unknown = scim.post(
        "Groups", {"schemas": [GROUP_URN], "displayName": "x", "members": [{"value": "nobody"}]}
    )
    assert unknown.status_code == 400
    assert not DirectoryGroup.objects.filter(display_name="x").exists()


def test_a_deleted_user_is_gone_and_cannot_sign_in_again(scim: Scim) -> None:
    created = new_user(scim)
    user = User.objects.get(person__scim_id=created["id"])
    from django.test import Client

    browser = Client()
    browser.force_login(user)
    assert scim.delete(f"Users/{created['id']}").status_code == 204
    assert scim.get(f"Users/{created['id']}").status_code == 404
    assert browser.get("/settings/").status_code == 302
    user.refresh_from_db()
    assert not user.is_active and user.person.deleted_at is not None
    assert audit_codes() == ["person.provisioned", "person.deleted"]
    assert AuditEvent.objects.get(code="person.deleted").details["sessions_ended"] == 1
    # The user name is free for a new account.
    new_user(scim)


def test_an_unknown_path_is_a_scim_404(scim: Scim) -> None:
    response = scim.get("Nothing/here")
    assert response.status_code == 404
    assert response.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]


def test_a_search_with_an_unstorable_filter_is_a_400(scim: Scim) -> None:
    new_user(scim)
    body = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
        "filter": 'userName eq "a\x00b"',
    }
    response = scim.post("Users/.search", body)
    assert response.status_code == 400, response.content
    assert "filter" in response.json()["detail"]
    good = {**body, "filter": 'userName eq "jo@example.com"'}
    assert scim.post("Users/.search", good).json()["totalResults"] == 1
