"""A verified sign-in through the identity provider: the account it opens, its roles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

import audit

from ..models import Person
from ..names import USERNAME_MAX, UsernameRefused, username_clean, username_holder
from ..roles import roles_for_groups, set_roles
from .base import NAME_MAX


class SignInRefused(Exception):
    """A sign-in through the identity provider that must not open a session (the sentence is
    shown on the sign-in page)."""


@dataclass(frozen=True)
class Claims:
    """What the console takes from a verified sign-in."""

    issuer: str
    subject: str
    username: str
    email: str
    first_name: str
    last_name: str
    groups: tuple[str, ...]


def _claimed_username(claims: Claims) -> str:
    # Not every provider's names fit Django's user names (spaces, other signs): keep what fits,
    # in the form every user name is stored in (names.username_clean).
    raw = claims.username or claims.email or claims.subject
    kept = "".join(ch for ch in raw if ch.isalnum() or ch in "@.+-_")[:USERNAME_MAX]
    try:
        return username_clean(kept)
    except UsernameRefused:
        return f"sso-{claims.subject}"[:USERNAME_MAX]


@transaction.atomic(durable=True)
def person_sign_in(*, claims: Claims) -> Any:
    """The account a verified sign-in opens: found by the provider's subject, else a SCIM account
    of that user name not yet linked to a subject, else created now (a first sign-in). Its roles
    are set from the provider's groups every time. One audit row: ``person.provisioned`` for a
    new account (its roles in it), ``person.roles_changed`` when the groups moved it.

    Refused (``SignInRefused``): a deactivated or deleted account (a subject the directory deleted
    never signs in again, even when an account of its name was provisioned since), and a user
    name that belongs to another account by its key (``names.py``: case and compatibility forms
    do not count; an admin must decide, the provider cannot take it over)."""
    User = get_user_model()
    wanted = roles_for_groups(claims.groups)
    person = (
        Person.objects.select_for_update()
        .select_related("user")
        .filter(oidc_issuer=claims.issuer, oidc_subject=claims.subject, deleted_at__isnull=True)
        .first()
    )
    username = _claimed_username(claims)
    if person is None:
        if Person.objects.filter(oidc_issuer=claims.issuer, oidc_subject=claims.subject).exists():
            raise SignInRefused(
                "This account was removed by your organisation's directory. Ask an administrator."
            )
        holder = username_holder(username)  # the name's key, locked until this commits
        candidate = (
            Person.objects.select_for_update()
            .select_related("user")
            .filter(
                user=holder,
                source=Person.Source.SCIM,
                oidc_subject="",
                deleted_at__isnull=True,
            )
            .first()
            if holder is not None
            else None
        )
        if candidate is not None:
            person = candidate
            person.oidc_issuer, person.oidc_subject = claims.issuer, claims.subject
            person.save(update_fields=["oidc_issuer", "oidc_subject", "updated_at"])
        elif holder is not None:
            raise SignInRefused(
                f"An account named {holder.username} exists already and is not linked to your "
                "identity provider. Ask an administrator."
            )
    if person is None:
        user = User.objects.create_user(
            username,
            email=claims.email[:254],
            first_name=claims.first_name[:NAME_MAX],
            last_name=claims.last_name[:NAME_MAX],
        )
        user.set_unusable_password()
        user.save(update_fields=["password"])
        Person.objects.create(
            user=user,
            source=Person.Source.PROVIDER,
            oidc_issuer=claims.issuer,
            oidc_subject=claims.subject,
            in_directory=True,
        )
        set_roles(user, wanted)
        audit.record(
            "person.provisioned",
            actor=user,
            person=user.pk,
            source=Person.Source.PROVIDER,
            roles=sorted(wanted),
            via="sign-in",
        )
        return user
    user = person.user
    if not user.is_active:
        raise SignInRefused("This account is deactivated. Ask an administrator.")
    before, after = set_roles(user, wanted)
    if before != after:
        audit.record(
            "person.roles_changed",
            actor=user,
            person=user.pk,
            roles=sorted(after),
            previous=sorted(before),
            via="sign-in",
        )
    return user
