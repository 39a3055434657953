"""What every people service shares: the errors, the checks of names and addresses, and what a
person loses with their access (``_after_access_lost``)."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from conversations.sharing.services import share_links_revoke_for_user

from ..models import Person, PersonSession
from ..roles import ROLE_NAMES

USERNAME_MAX = 150
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


def check_username(username: str) -> str:
    username = username.strip() if isinstance(username, str) else ""
    if not username:
        raise PeopleError("a user name is required", field="username")
    if len(username) > USERNAME_MAX:
        raise PeopleError(f"a user name has at most {USERNAME_MAX} characters", field="username")
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise PeopleError(
            "a user name may hold letters, digits and @ . + - _ only", field="username"
        ) from None
    return username


def username_taken(username: str, *, exclude: int | None = None) -> bool:
    """User names compare without case (SCIM's userName is case-insensitive; two accounts that
    differ only by case would confuse everyone who reads the audit log)."""
    users = get_user_model().objects.filter(username__iexact=username)
    if exclude is not None:
        users = users.exclude(pk=exclude)
    return users.exists()


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


def user_ids(users: Iterable[Any]) -> list[int]:
    return sorted(int(u.pk) for u in users)
