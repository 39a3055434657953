"""User names: what makes two of them the same, checked in one place by every way an account is
made or renamed (SCIM, a first sign-in through the identity provider, an invitation, the Django
admin's user form).

Two names are the same when their *keys* are equal: the name in Unicode compatibility form
(NFKC: full-width letters are ASCII ones, U+FF21 is ``A``; the Kelvin sign is ``K``),
case-folded (``ADMIN`` is ``admin``, ``STRASSE`` is ``straße``, a final sigma is a sigma), and
in NFKC again. Someone who
reads the audit log, a share link's creator or the People page cannot tell such names apart, so
the console keeps one account per key; the name itself is kept as it was given (in NFKC, as
Django's own ``normalize_username`` stores it).

The key is computed by PostgreSQL, by the function ``console_username_key`` (the people
app's migration), for the stored names and the name asked for alike, so both sides are folded
by the same code, and an index on it answers the check. (PostgreSQL's ``lower`` folds case as
Unicode's simple case mapping does; the function adds the full folds that matter for names, ß
and the final sigma.) The check takes a transaction-level advisory lock on the key first: two
requests claiming ``Admin`` and ``admin`` at once are serialised, and the second sees the first's
account.

Accounts that collided before the check existed are not renamed: the migration reports them, and
``manage.py check --database default`` lists them (``people.W002``) for an administrator to
resolve.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import CharField, F, Func, Value

USERNAME_MAX = 150


class UsernameRefused(ValueError):
    """A user name that cannot be given (the sentence says why); ``taken``: it is another
    account's, by its key."""

    def __init__(self, detail: str, *, taken: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.taken = taken


class UsernameKey(Func):
    function = "console_username_key"
    output_field = CharField()


def username_clean(raw: Any) -> str:
    """The name as it will be stored (NFKC, no surrounding spaces), or ``UsernameRefused``."""
    name = AbstractBaseUser.normalize_username(raw.strip()) if isinstance(raw, str) else ""
    if not name:
        raise UsernameRefused("a user name is required")
    if len(name) > USERNAME_MAX:
        raise UsernameRefused(f"a user name has at most {USERNAME_MAX} characters")
    try:
        UnicodeUsernameValidator()(name)
    except ValidationError:
        raise UsernameRefused("a user name may hold letters, digits and @ . + - _ only") from None
    return name


def username_holder(name: str, *, exclude: int | None = None) -> Any:
    """The account whose name has ``name``'s key (other than ``exclude``), or None. Inside a
    transaction, takes the key's advisory lock first (held until it ends)."""
    if connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtext('console.username:' "
                "|| console_username_key(%s)))",
                [name],
            )
    users = (
        get_user_model()
        .objects.alias(key=UsernameKey(F("username")))
        .filter(key=UsernameKey(Value(name)))
    )
    if exclude is not None:
        users = users.exclude(pk=exclude)
    return users.order_by("pk").first()


def username_claim(raw: Any, *, exclude: int | None = None) -> str:
    """The one check every way of making or renaming an account runs: the name cleaned, and
    refused (``taken``) when another account's name has the same key. Call it inside the
    transaction that stores the name (the key stays locked until it commits)."""
    name = username_clean(raw)
    holder = username_holder(name, exclude=exclude)
    if holder is not None:
        same = "" if holder.username == name else f" (as {holder.username!r})"
        raise UsernameRefused(f"the user name {name!r} is taken{same}", taken=True)
    return name


def username_collisions() -> list[list[str]]:
    """Names already stored that share a key (made before the check existed), each group sorted:
    for an administrator to resolve; nothing renames them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT array_agg(username ORDER BY username) FROM auth_user "
            "GROUP BY console_username_key(username) HAVING count(*) > 1 "
            "ORDER BY min(username)"
        )
        return [list(row[0]) for row in cursor.fetchall()]
