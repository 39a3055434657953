"""Login throttling (django-axes, counted in the cache), the lock-out page that says the same
whether the user exists or not, ``Cache-Control: no-store, private`` on the pages that carry
conversation data, and a working day's sliding session."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from tests.console.conftest import World, client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _name(prefix: str) -> str:
    """A username of this run only: the failures of an earlier run live on in the cache."""
    return f"{prefix}-{uuid4().hex[:10]}"


def _try(client: Client, username: str, password: str) -> Any:
    return client.post("/login/", {"username": username, "password": password})


def test_wrong_passwords_lock_the_account_out_then_even_the_right_one_fails(db: Any) -> None:
    agent_axes = _name("agent-axes")
    UserFactory(username=agent_axes, raw_password="right-password-1")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = _try(client, agent_axes, "wrong")
        assert response.status_code == 200  # the form again, with the usual error
        assert "did not match" in response.content.decode()
    locked = _try(client, agent_axes, "wrong")
    assert locked.status_code == 429
    response = _try(client, agent_axes, "right-password-1")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    assert "Too many failed sign-ins" in response.content.decode()


def test_the_lock_out_does_not_tell_whether_the_user_exists(db: Any) -> None:
    real, nobody = _name("real"), _name("nobody")
    UserFactory(username=real, raw_password="right-password-1")
    pages = {}
    for name in (real, nobody):
        client = Client()
        for _ in range(settings.AXES_FAILURE_LIMIT):
            last = _try(client, name, "wrong")
        assert last.status_code == 429
        pages[name] = last.content.decode().replace(client.cookies["csrftoken"].value, "")
    strip = [p.split('name="csrfmiddlewaretoken" value="')[0] for p in pages.values()]
    assert strip[0] == strip[1]
    assert real not in pages[real]


def test_a_right_password_before_the_limit_signs_in_and_resets(db: Any) -> None:
    agent_ok = _name("agent-ok")
    UserFactory(username=agent_ok, raw_password="right-password-1")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _try(client, agent_ok, "wrong")
    response = _try(client, agent_ok, "right-password-1")
    assert response.status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):  # the count started again
        assert _try(client, agent_ok, "wrong").status_code == 200


def test_the_counter_lives_in_the_cache(db: Any) -> None:
    """The cache handler: no table rows, the Redis cache holds the failures."""
    from axes.handlers.cache import AxesCacheHandler
    from axes.handlers.proxy import AxesProxyHandler

    agent_c = _name("agent-c")
    UserFactory(username=agent_c, raw_password="right-password-1")
    _try(Client(), agent_c, "wrong")
    assert isinstance(AxesProxyHandler.get_implementation(), AxesCacheHandler)
    assert any("axes" in str(k) for k in cache._cache.get_client().keys("*"))


PAGES = [
    ("agent", "/"),
    ("agent", "/?q=answer"),
    ("agent", "/conversations/{billing}/"),
    ("compliance", "/audit/"),
    ("compliance", "/audit/export.csv"),
    ("compliance", "/compliance/deletions/"),
    ("admin", "/admin/conversations/conversation/"),
    ("admin", "/admin/conversations/conversation/{billing}/change/"),
]


@pytest.mark.parametrize(("role", "url"), PAGES)
def test_pages_with_conversation_data_are_never_stored(
    client: Client, world: World, role: str, url: str
) -> None:
    client_for(client, world, role)
    response = client.get(url.format(billing=world.billing.pk))
    assert response.status_code == 200, url
    directives = {d.strip() for d in response["Cache-Control"].split(",")}
    assert {"no-store", "private"} <= directives
    assert "public" not in directives


def test_api_answers_are_never_stored(api: Any, world: World) -> None:
    response = api.get("/api/v1/conversations/conv-billing/messages")
    assert response.status_code == 200
    assert {"no-store", "private"} <= {d.strip() for d in response["Cache-Control"].split(",")}


def test_the_session_is_a_working_day_and_slides(client: Client, world: World) -> None:
    from console.hardening import RENEWED

    assert settings.SESSION_COOKIE_AGE == 8 * 60 * 60
    client_for(client, world, "agent")
    assert isinstance(client.session[RENEWED], int)  # the login is the first renewal
    first = client.get("/")
    assert first.status_code == 200
    assert "sessionid" not in first.cookies  # just renewed: no session write on this page
    session = client.session
    session[RENEWED] -= settings.SESSION_RENEW_SECONDS
    session.save()
    again = client.get("/")
    assert again.cookies["sessionid"]["max-age"] == 8 * 60 * 60  # renewed: the expiry slides
    assert client.session[RENEWED] > session[RENEWED]
    assert client.session.get_expiry_age() == 8 * 60 * 60
