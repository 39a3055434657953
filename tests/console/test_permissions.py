"""The permission matrix: every console URL for every role. Forbidden and missing look the same
(404); anonymous users are sent to the login page."""

from __future__ import annotations

from typing import Any

import pytest

from tests.console.conftest import ROLES, World, client_for

pytestmark = pytest.mark.django_db(databases="__all__")

LOGIN = 302  # anonymous: redirect to the login page
EXPECTED: dict[str, dict[str, int]] = {
    # url name: {role: status}
    # compliance staff do not read transcripts: their home is the audit log
    "list": {
        "anonymous": LOGIN,
        "agent": 200,
        "other_agent": 200,
        "reviewer": 200,
        "compliance": 302,
        "admin": 200,
        "inactive": LOGIN,
    },
    "billing": {
        "anonymous": LOGIN,
        "agent": 200,
        "other_agent": 404,
        "reviewer": 200,
        "compliance": 404,
        "admin": 200,
        "inactive": LOGIN,
    },
    "shipping": {
        "anonymous": LOGIN,
        "agent": 404,
        "other_agent": 200,
        "reviewer": 404,
        "compliance": 404,
        "admin": 200,
        "inactive": LOGIN,
    },
    "missing": {
        "anonymous": LOGIN,
        "agent": 404,
        "other_agent": 404,
        "reviewer": 404,
        "compliance": 404,
        "admin": 404,
        "inactive": LOGIN,
    },
    "audit": {
        "anonymous": LOGIN,
        "agent": 404,
        "other_agent": 404,
        "reviewer": 404,
        "compliance": 200,
        "admin": 200,
        "inactive": LOGIN,
    },
    "deletions": {
        "anonymous": LOGIN,
        "agent": 404,
        "other_agent": 404,
        "reviewer": 404,
        "compliance": 200,
        "admin": 200,
        "inactive": LOGIN,
    },
    "holds": {
        "anonymous": LOGIN,
        "agent": 404,
        "other_agent": 404,
        "reviewer": 404,
        "compliance": 200,
        "admin": 200,
        "inactive": LOGIN,
    },
    # The workspace (issue 14): a tool call's record, the audit log's download, one's settings.
    "billing_call": {
        "anonymous": LOGIN,
        "agent": 200,
        "other_agent": 404,
        "reviewer": 200,
        "compliance": 404,
        "admin": 200,
        "inactive": LOGIN,
    },
    "audit_export": {
        "anonymous": LOGIN,
        "agent": 404,
        "other_agent": 404,
        "reviewer": 404,
        "compliance": 200,
        "admin": 200,
        "inactive": LOGIN,
    },
    "settings": {
        "anonymous": LOGIN,
        "agent": 200,
        "other_agent": 200,
        "reviewer": 200,
        "compliance": 200,
        "admin": 200,
        "inactive": LOGIN,
    },
    # The Django admin: the admin role opens it (no staff flag); anyone else signed in gets the
    # 404 of a page that does not exist (console/people/admin_site.py).
    "admin": {
        "anonymous": LOGIN,
        "agent": 404,
        "other_agent": 404,
        "reviewer": 404,
        "compliance": 404,
        "admin": 200,
        "inactive": LOGIN,
    },
    "people": {
        "anonymous": LOGIN,
        "agent": 404,
        "other_agent": 404,
        "reviewer": 404,
        "compliance": 404,
        "admin": 200,
        "inactive": LOGIN,
    },
}


def url_of(name: str, world: World) -> str:
    return {
        "list": "/",
        "billing": f"/conversations/{world.billing.pk}/",
        "shipping": f"/conversations/{world.shipping.pk}/",
        "missing": "/conversations/999999999/",
        "audit": "/audit/",
        "deletions": "/compliance/deletions/",
        "holds": "/compliance/holds/",
        "billing_call": f"/conversations/{world.billing.pk}/calls/{_call(world.billing)}/",
        "audit_export": "/audit/export.csv",
        "settings": "/settings/",
        "admin": "/admin/",
        "people": "/people/",
    }[name]


def _call(conversation: Any) -> str:
    from tests.console.test_read_services import call_key

    return call_key(conversation)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("page", list(EXPECTED))
def test_permission_matrix(client: Any, world: World, page: str, role: str) -> None:
    response = client_for(client, world, role).get(url_of(page, world))
    assert response.status_code == EXPECTED[page][role], (page, role)
    if response.status_code == LOGIN:
        expected = "/audit/" if (page, role) == ("list", "compliance") else "/login/"
        assert expected in response["Location"]


def test_forbidden_and_missing_are_the_same_404(client: Any, world: World) -> None:
    client.force_login(world.users["agent"])
    forbidden = client.get(url_of("shipping", world))
    missing = client.get(url_of("missing", world))
    assert forbidden.status_code == missing.status_code == 404
    assert forbidden.content == missing.content


def test_the_list_shows_only_granted_queues(client: Any, world: World) -> None:
    client.force_login(world.users["agent"])
    page = client.get("/").content.decode()
    assert f"/conversations/{world.billing.pk}/" in page
    assert f"/conversations/{world.shipping.pk}/" not in page


def test_a_group_grant_works_like_a_user_grant(client: Any, world: World) -> None:
    from django.contrib.auth.models import Group

    from conversations.services import queue_grant

    queue_grant(principal=Group.objects.get(name="support_agent"), queue_name="shipping")
    client.force_login(world.users["agent"])
    assert client.get(url_of("shipping", world)).status_code == 200
    queue_grant(
        principal=Group.objects.get(name="support_agent"), queue_name="shipping", revoke=True
    )
    client.force_login(world.users["agent"])
    assert client.get(url_of("shipping", world)).status_code == 404
