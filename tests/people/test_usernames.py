"""User names that differ only by case or Unicode compatibility form are the same name
(console/people/names.py), refused by every way an account is made or renamed: SCIM, a first
sign-in through the identity provider, an invitation, the Django admin; and the migration
reports the collisions already stored instead of renaming anyone."""

from __future__ import annotations

import importlib
import io
import threading
from contextlib import redirect_stdout
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.checks import Tags, run_checks
from django.db import close_old_connections, connection, transaction

from console.people.models import Person
from console.people.names import UsernameRefused, username_claim, username_collisions
from console.people.services import Claims, SignInRefused, person_sign_in
from tests.factories import UserFactory, roles

from .test_scim import USER_URN, Scim, scim

__all__ = ["scim"]

User = get_user_model()

FULL_WIDTH_ADMIN = "\uff21\uff24\uff2d\uff29\uff2e"
TWINS = [
    ("admin", FULL_WIDTH_ADMIN),  # NFKC makes it ADMIN
    ("admin", "ADMIN"),
    ("reviewer_live", "Reviewer_live"),
    ("compliance1", "COMPLIANCE1"),
    ("agent_shipping", "AGENT_SHIPPING"),
    ("straße", "STRASSE"),  # full case folding
    ("kelvin", "\u212aelvin"),  # the Kelvin sign
]


@pytest.mark.parametrize(("stored", "asked"), TWINS)
def test_scim_refuses_a_twin_of_any_account(scim: Scim, stored: str, asked: str) -> None:
    UserFactory(username=stored, is_superuser=True)
    users = User.objects.count()
    response = scim.post("Users", {"schemas": [USER_URN], "userName": asked, "active": True})
    assert response.status_code == 409, response.content
    assert response.json()["scimType"] == "uniqueness"
    assert User.objects.count() == users
    # A rename onto the twin is refused too.
    own = scim.post("Users", {"schemas": [USER_URN], "userName": "someone", "active": True})
    assert own.status_code == 201
    body = {"schemas": [USER_URN], "userName": asked, "active": True}
    renamed = scim.send("put", f"Users/{own.json()['id']}", body)
    assert renamed.status_code == 409
    assert User.objects.filter(username="someone").exists()


def claims(username: str, subject: str = "sub-1") -> Claims:
    return Claims(
        issuer="https://idp.example",
        subject=subject,
        username=username,
        email="",
        first_name="",
        last_name="",
        groups=(),
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("stored", "asked"), TWINS)
def test_a_first_sign_in_never_makes_a_twin(stored: str, asked: str) -> None:
    roles()
    UserFactory(username=stored)
    with pytest.raises(SignInRefused, match="exists already"):
        person_sign_in(claims=claims(asked))
    assert not Person.objects.filter(oidc_subject="sub-1").exists()


@pytest.mark.django_db
def test_a_sign_in_links_the_scim_account_of_its_name_whatever_the_case() -> None:
    roles()
    provisioned: Any = UserFactory(username="jo.doe")
    Person.objects.create(user=provisioned, source=Person.Source.SCIM, in_directory=True)
    assert person_sign_in(claims=claims("Jo.Doe")) == provisioned
    assert Person.objects.get(user=provisioned).oidc_subject == "sub-1"


@pytest.mark.django_db
@pytest.mark.parametrize(("stored", "asked"), TWINS)
def test_an_invitation_of_a_twin_is_a_form_error(client: Any, stored: str, asked: str) -> None:
    roles()
    UserFactory(username=stored)
    admin = UserFactory(username="the-admin", groups=["admin"])
    client.force_login(admin)
    users = User.objects.count()
    response = client.post("/people/invite/", {"username": asked})
    assert response.status_code == 400
    assert "is taken" in response.content.decode()
    assert User.objects.count() == users


@pytest.mark.django_db
def test_the_django_admin_refuses_a_twin(client: Any) -> None:
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    UserFactory(username="admin")
    client.force_login(root)
    password = "a-long-pass-9x"
    form = {"username": FULL_WIDTH_ADMIN, "password1": password, "password2": password}
    response = client.post("/admin/auth/user/add/", form)
    assert response.status_code == 200
    assert "is taken" in response.content.decode()
    assert not User.objects.filter(username="ADMIN").exists()
    # Renaming an account onto a twin, the same.
    other: Any = UserFactory(username="other")
    change = client.get(f"/admin/auth/user/{other.pk}/change/")
    assert change.status_code == 200
    data = {"username": "Admin", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    refused = client.post(f"/admin/auth/user/{other.pk}/change/", data)
    assert "is taken" in refused.content.decode()
    other.refresh_from_db()
    assert other.username == "other"


@pytest.mark.django_db
def test_the_migration_reports_collisions_and_renames_no_one() -> None:
    # Made before the check existed (straight into the table).
    for name in ("admin", "ADMIN", "\uff21dmin", "bob", "BOB", "carol"):
        User.objects.create(username=name)
    migration = importlib.import_module("console.people.migrations.0001_initial")
    out = io.StringIO()

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection  # type: ignore[attr-defined]
    with redirect_stdout(out):
        migration.report_collisions(None, editor)
    text = out.getvalue()
    assert "2 group(s)" in text
    assert "'ADMIN', 'admin', '\uff21dmin'" in text and "'BOB', 'bob'" in text
    assert "carol" not in text
    assert username_collisions() == [["ADMIN", "admin", "\uff21dmin"], ["BOB", "bob"]]
    names = ["admin", "ADMIN", "\uff21dmin", "bob", "BOB"]
    assert User.objects.filter(username__in=names).count() == 5
    # manage.py check --database default names them too.
    found = run_checks(tags=[Tags.database], databases=["default"])
    twins = [m for m in found if m.id == "people.W002"]
    assert len(twins) == 2 and "ADMIN, admin" in twins[0].msg


@pytest.mark.django_db(transaction=True)
def test_two_twins_claimed_at_once_make_one_account() -> None:
    """Two requests claim ``Admin`` and ``admin`` at the same moment: the key's lock serialises
    them, and the second sees the first's account (a read-then-write would make both)."""
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def claim(name: str) -> None:
        try:
            with transaction.atomic():
                barrier.wait(timeout=10)
                username_claim(name)
                User.objects.create(username=name)
            outcomes.append("made")
        except UsernameRefused:
            outcomes.append("refused")
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=claim, args=(n,)) for n in ("Admin", "admin")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["made", "refused"]
    assert User.objects.filter(username__iexact="admin").count() == 1
