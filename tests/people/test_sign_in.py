"""Single sign-on against a real OpenID Provider (Node's oidc-provider on loopback): the
authorization code flow with state, nonce and PKCE, accounts made at the first sign-in, roles
re-read from the groups claim at every sign-in, and each forged answer refused."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model

from audit.models import AuditEvent
from console.people.models import Person
from console.people.roles import roles_of
from tests.factories import UserFactory

from .op import PROVIDER_NAME, OpenIdProvider, with_param

pytestmark = pytest.mark.slow

User = get_user_model()


def rows(code: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(code=code).order_by("id"))


def signed_in(client: Any) -> Any:
    """The user the client's session belongs to (None when anonymous)."""
    response = client.get("/settings/")
    return response.wsgi_request.user if response.status_code == 200 else None


def test_the_login_page_offers_the_provider_by_name(client: Any, op: OpenIdProvider) -> None:
    page = client.get("/login/").content.decode()
    assert f"Sign in with {PROVIDER_NAME}" in page
    assert 'href="/oidc/authenticate/"' in page
    assert 'name="password"' in page  # local passwords are on by default


def test_a_support_group_member_lands_on_the_list_as_a_support_agent(
    client: Any, op: OpenIdProvider
) -> None:
    op.set_account(
        "sub-alice",
        preferred_username="alice",
        email="alice@example.com",
        given_name="Alice",
        family_name="Smith",
        groups=["support", "some-other-group"],
    )
    start = client.get("/oidc/authenticate/")
    query = parse_qs(urlsplit(start["Location"]).query)
    # state, nonce and a PKCE challenge (S256) are sent, and kept in the session.
    assert query["code_challenge_method"] == ["S256"]
    assert len(query["code_challenge"][0]) >= 43
    assert query["state"][0] in client.session["oidc_states"]
    assert query["nonce"][0] == client.session["oidc_states"][query["state"][0]]["nonce"]

    back = op.sign_in(client, login="sub-alice")
    assert back.status_code == 302 and back["Location"] == "/"
    page = client.get("/")
    assert page.status_code == 200
    assert b"Conversations" in page.content and b"no role" not in page.content
    user = User.objects.get(username="alice")
    assert (user.email, user.first_name, user.last_name) == ("alice@example.com", "Alice", "Smith")
    assert not user.has_usable_password()
    person = Person.objects.get(user=user)
    assert (person.source, person.oidc_subject, person.oidc_issuer) == (
        "provider",
        "sub-alice",
        op.issuer,
    )
    assert roles_of(user) == {"support_agent"}
    provisioned = rows("person.provisioned")
    assert len(provisioned) == 1
    assert provisioned[0].details == {
        "person": user.pk,
        "source": "provider",
        "roles": ["support_agent"],
        "via": "sign-in",
    }


def test_roles_are_read_again_at_every_sign_in(client: Any, op: OpenIdProvider) -> None:
    op.set_account("sub-bob", preferred_username="bob", groups=["support"])
    assert op.sign_in(client, login="sub-bob").status_code == 302
    bob = User.objects.get(username="bob")
    assert roles_of(bob) == {"support_agent"}
    client.post("/logout/")

    op.set_account("sub-bob", preferred_username="bob", groups=[])  # moved to no group
    assert op.sign_in(client, login="sub-bob").status_code == 302
    assert User.objects.filter(username__startswith="bob").count() == 1  # the same account
    assert roles_of(bob) == set()
    page = client.get("/")
    assert page.status_code == 403
    assert b"You have no role here yet" in page.content
    assert b"Suite IdP" in page.content
    changed = rows("person.roles_changed")
    assert len(changed) == 1
    assert changed[0].details == {
        "person": bob.pk,
        "roles": [],
        "previous": ["support_agent"],
        "via": "sign-in",
    }
    # A sign-in that changes nothing writes nothing.
    client.post("/logout/")
    assert op.sign_in(client, login="sub-bob").status_code == 302
    assert len(rows("person.roles_changed")) == 1


@pytest.mark.parametrize(
    "forgery",
    ["state", "nonce", "audience", "expired", "pkce"],
)
def test_a_forged_sign_in_is_refused(client: Any, op: OpenIdProvider, forgery: str) -> None:
    op.set_account("sub-eve", preferred_username="eve", groups=["console-admins"])
    tamper = tamper_callback = None
    if forgery == "state":
        tamper_callback = lambda url: with_param(url, "state", "forged-state")  # noqa: E731
    elif forgery == "nonce":
        tamper = lambda url: with_param(url, "nonce", "forged-nonce")  # noqa: E731
    elif forgery == "pkce":
        tamper = lambda url: with_param(url, "code_challenge", "A" * 43)  # noqa: E731
    elif forgery == "audience":
        op.next_id_token(claims={"aud": "another-client"})
    elif forgery == "expired":
        op.next_id_token(expired=True)
    response = op.sign_in(client, login="sub-eve", tamper=tamper, tamper_callback=tamper_callback)
    assert response.status_code in (400, 502), response.status_code
    assert b"Sign in with Suite IdP" in response.content
    assert b"refused" in response.content or b"did not complete" in response.content
    assert signed_in(client) is None
    assert not User.objects.filter(username="eve").exists()
    assert not AuditEvent.objects.filter(code__startswith="person.").exists()


def test_the_forgeries_are_refused_by_the_console_not_by_chance(
    client: Any, op: OpenIdProvider
) -> None:
    """The same flow, unforged, signs in: the refusals above are the checks at work."""
    op.set_account("sub-eve", preferred_username="eve", groups=["console-admins"])
    assert op.sign_in(client, login="sub-eve").status_code == 302
    assert signed_in(client).username == "eve"


def test_a_deactivated_person_cannot_sign_in(client: Any, op: OpenIdProvider) -> None:
    op.set_account("sub-dan", preferred_username="dan", groups=["support"])
    assert op.sign_in(client, login="sub-dan").status_code == 302
    User.objects.filter(username="dan").update(is_active=False)
    assert signed_in(client) is None  # the open session is refused at once
    response = op.sign_in(client, login="sub-dan")
    assert response.status_code == 403
    assert b"deactivated" in response.content
    assert signed_in(client) is None


def test_the_provider_cannot_take_over_a_local_account(client: Any, op: OpenIdProvider) -> None:
    UserFactory(username="root-admin", groups=["admin"])
    op.set_account("sub-x", preferred_username="root-admin", groups=["console-admins"])
    response = op.sign_in(client, login="sub-x")
    assert response.status_code == 403
    assert b"exists already" in response.content
    assert signed_in(client) is None
    assert not Person.objects.filter(oidc_subject="sub-x").exists()


def test_with_local_passwords_off_no_password_signs_in(
    client: Any, op: OpenIdProvider, settings: Any
) -> None:
    settings.LOCAL_PASSWORDS = False
    UserFactory(username="local", groups=["admin"])
    page = client.get("/login/").content.decode()
    assert f"Sign in with {PROVIDER_NAME}" in page
    assert 'name="password"' not in page
    refused = client.post("/login/", {"username": "local", "password": "pw-local"})
    assert refused.status_code == 403
    assert signed_in(client) is None
    # The Django admin's login is the console's sign-in page: no password form of its own.
    admin_login = client.get("/admin/login/?next=/admin/")
    assert admin_login.status_code == 302 and admin_login["Location"].startswith("/login/")
    assert client.login(username="local", password="pw-local") is False
    # Single sign-on still works.
    op.set_account("sub-sso", preferred_username="sso", groups=["support"])
    assert op.sign_in(client, login="sub-sso").status_code == 302
    assert signed_in(client).username == "sso"


def test_a_pkce_verifier_that_does_not_match_is_a_400(client: Any, op: OpenIdProvider) -> None:
    """The provider's token endpoint refuses the code (invalid_grant): this sign-in was bad, the
    provider is not down, so the answer is a 400 saying so, never a 502."""
    op.set_account("sub-pk", preferred_username="pk", groups=["support"])
    response = op.sign_in(
        client, login="sub-pk", tamper=lambda url: with_param(url, "code_challenge", "A" * 43)
    )
    assert response.status_code == 400
    assert b"could not be verified" in response.content
    assert signed_in(client) is None
    assert not User.objects.filter(username="pk").exists()


def test_a_subject_the_directory_deleted_is_refused_after_a_new_account_of_its_name(
    client: Any, op: OpenIdProvider
) -> None:
    """SCIM provisions rita, she signs in (the account takes her subject), SCIM deletes her and
    provisions rita again: her subject is refused with a 403 (it once linked the new account,
    whose subject the deleted one still holds: a database error, and a 502)."""
    from conversations.services import service_token_create

    from .test_scim import USER_URN, Scim

    _, token = service_token_create(name="idp", scope="scim")
    scim = Scim(client, token)
    body = {"schemas": [USER_URN], "userName": "rita", "active": True}
    first = scim.post("Users", body)
    assert first.status_code == 201
    op.set_account("sub-rita", preferred_username="rita", groups=["support"])
    assert op.sign_in(client, login="sub-rita").status_code == 302
    client.post("/logout/")
    assert scim.delete(f"Users/{first.json()['id']}").status_code == 204
    again = scim.post("Users", body)
    assert again.status_code == 201
    response = op.sign_in(client, login="sub-rita")
    assert response.status_code == 403
    assert b"removed by your organisation" in response.content
    assert signed_in(client) is None
    assert Person.objects.get(scim_id=again.json()["id"]).oidc_subject == ""


def test_a_first_sign_in_cannot_take_a_name_that_differs_only_by_case(
    client: Any, op: OpenIdProvider
) -> None:
    UserFactory(username="reviewer_live", groups=["reviewer"])
    op.set_account("sub-rl", preferred_username="Reviewer_live", groups=["console-admins"])
    response = op.sign_in(client, login="sub-rl")
    assert response.status_code == 403
    assert b"exists already" in response.content
    assert User.objects.filter(username__iexact="reviewer_live").count() == 1
