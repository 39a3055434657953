"""What every people service shares: the errors, the checks of names and addresses, and what a
person loses with their access (``_after_access_lost``)."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import connection
from django.db.models import Q

from conversations.sharing.services import share_links_revoke_for_user

from ..models import Person, PersonSession
from ..names import UsernameRefused, username_claim
from ..roles import ROLE_NAMES

NAME_MAX = 150


class PeopleError(ValueError):
    """A change refused, with the field it is about (for the page's form or SCIM's error)."""

    def __init__(self, detail: str, *, field: str | None = None, conflict: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.conflict = conflict


def person_of(user: Any) -> Person:
    """The user's Person row; a user made without one (createsuperuser, the Django admin) is
    local, and gets its row the first time a service changes it."""
    person, _ = Person.objects.get_or_create(user=user, defaults={"source": Person.Source.LOCAL})
    return person


def claim_username(raw: Any, *, exclude: int | None = None, field: str = "username") -> str:
    """``names.username_claim`` (the one check of every way an account is made or renamed), its
    refusal as a ``PeopleError`` on ``field`` (a conflict when the name is another account's)."""
    try:
        return username_claim(raw, exclude=exclude)
    except UsernameRefused as exc:
        raise PeopleError(exc.detail, field=field, conflict=exc.taken) from None


def check_email(email: str) -> str:
    email = (email or "").strip()
    if not email:
        return ""
    if len(email) > 254:
        raise PeopleError("an e-mail address has at most 254 characters", field="email")
    try:
        validate_email(email)
    except ValidationError:
        raise PeopleError(f"{email!r} is not an e-mail address", field="email") from None
    return email


def check_roles(roles: Iterable[str]) -> frozenset[str]:
    wanted = frozenset(roles)
    unknown = wanted - set(ROLE_NAMES)
    if unknown:
        raise PeopleError(f"unknown role(s): {', '.join(sorted(unknown))}", field="roles")
    return wanted


def sessions_end(*, user: Any) -> int:
    """End every session ``user`` holds (whatever the session engine): the next request of each
    is anonymous. Returns how many were ended."""
    engine = import_module(settings.SESSION_ENGINE)
    keys = list(PersonSession.objects.filter(user=user).values_list("session_key", flat=True))
    for key in keys:
        engine.SessionStore(session_key=key).delete()
    PersonSession.objects.filter(user=user).delete()
    return len(keys)


def after_access_lost(*, user: Any) -> int:
    """What a person loses with their access, in the transaction that takes it: every session at
    once. Returns the sessions ended. The one place: the People page's deactivation, SCIM's
    ``active: false`` and SCIM's deletion all call it.

    And the share links they made (``share_links_revoke_for_user``, audited): a link lives no
    longer than its creator's access."""
    share_links_revoke_for_user(user=user, reason="creator lost access")
    return sessions_end(user=user)


def keep_an_administrator(*, losing: Any) -> None:
    """Refuse a change that would leave the console without an active administrator (a
    superuser, or someone of the ``admin`` role) once ``losing`` is no longer one.

    Two admins demoting each other at the same moment must not both succeed: each would read the
    other still in place. So the decision is taken under one transaction-level advisory lock,
    held until the change commits: the second change waits for the first and then sees it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('console.administrators'))")
    others = (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(is_superuser=True) | Q(groups__name="admin"))
        .exclude(pk=losing.pk)
    )
    if not others.exists():
        raise PeopleError(
            f"{losing.username} is the last active administrator: give someone else the admin "
            "role first",
            field="roles",
        )


def user_ids(users: Iterable[Any]) -> list[int]:
    return sorted(int(u.pk) for u in users)
