"""The People page's changes: invite a local person, set roles, deactivate and reactivate."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

import audit
from conversations.permissions import is_console_admin
from conversations.services import queue_grant

from ..models import Person
from ..roles import roles_of, set_roles
from .base import (
    NAME_MAX,
    PeopleError,
    after_access_lost,
    check_email,
    check_roles,
    claim_username,
    keep_an_administrator,
    person_of,
)


@transaction.atomic(durable=True)
def person_invite(
    *,
    username: str,
    email: str = "",
    first_name: str = "",
    last_name: str = "",
    roles: Iterable[str] = (),
    queues: Iterable[str] = (),
    actor: Any,
) -> Any:
    """A local account, with no password yet: the invitee sets one through a one-time link
    (``console.people.views.set_password_link``), seeing the ``queues`` named (each grant
    audited by ``queue_grant``, in this transaction). Refused where local passwords are off."""
    if not settings.LOCAL_PASSWORDS:
        raise PeopleError(
            "local passwords are turned off (LOCAL_PASSWORDS=false): people sign in through "
            "the identity provider"
        )
    username = claim_username(username)
    email = check_email(email)
    wanted = check_roles(roles)
    user = get_user_model().objects.create_user(
        username,
        email=email,
        first_name=(first_name or "").strip()[:NAME_MAX],
        last_name=(last_name or "").strip()[:NAME_MAX],
    )
    user.set_unusable_password()
    user.save(update_fields=["password"])
    Person.objects.create(user=user, source=Person.Source.LOCAL, invited_by=actor)
    set_roles(user, wanted)
    audit.record("person.invited", actor=actor, person=user.pk, roles=sorted(wanted), via="page")
    for queue in sorted(set(queues)):
        queue_grant(principal=user, queue_name=queue, actor=actor)
    return user


def _check_reach(*, user: Any, actor: Any) -> None:
    """The admin role manages people, not the superusers above it: only a superuser changes a
    superuser."""
    if user.is_superuser and not getattr(actor, "is_superuser", False):
        raise PeopleError(f"{user.username} is a superuser: only a superuser can change them")


@transaction.atomic
def person_roles_set(*, user: Any, roles: Iterable[str], actor: Any) -> bool:
    """An admin sets a local person's roles. A person from the identity provider has the roles
    its groups give (re-read at every sign-in and at every SCIM change): refused here, so a
    change made on this page is never silently undone at the next sign-in. Taking the admin
    role from the last administrator is refused (``keep_an_administrator``)."""
    wanted = check_roles(roles)
    _check_reach(user=user, actor=actor)
    person = person_of(user)
    if person.source != Person.Source.LOCAL:
        raise PeopleError(
            "this person's roles follow their groups in the identity provider "
            "(OIDC_ROLE_MAP): change the groups there",
            field="roles",
        )
    if (
        user.pk == getattr(actor, "pk", None)
        and "admin" not in wanted
        and "admin" in roles_of(user)
    ):
        raise PeopleError("you cannot take the admin role from yourself", field="roles")
    if "admin" not in wanted and "admin" in roles_of(user):
        keep_an_administrator(losing=user)
    before, after = set_roles(user, wanted)
    if before == after:
        return False
    audit.record(
        "person.roles_changed",
        actor=actor,
        person=user.pk,
        roles=sorted(after),
        previous=sorted(before),
        via="page",
    )
    return True


@transaction.atomic(durable=True)
def person_deactivate(*, user: Any, actor: Any, reason: str = "", via: str = "page") -> int:
    """The person cannot sign in any more and every session they hold ends now. Returns the
    number of sessions ended. Refused for a superuser unless a superuser asks, and for the last
    active administrator."""
    if via == "page" and user.pk == getattr(actor, "pk", None):
        raise PeopleError("you cannot deactivate yourself")
    _check_reach(user=user, actor=actor)
    person = person_of(user)
    if not user.is_active:
        return 0
    if is_console_admin(user):
        keep_an_administrator(losing=user)
    user.is_active = False
    user.save(update_fields=["is_active"])
    person.deactivated_at = timezone.now()
    person.save(update_fields=["deactivated_at", "updated_at"])
    ended = after_access_lost(user=user)
    audit.record(
        "person.deactivated",
        actor=actor,
        person=user.pk,
        sessions_ended=ended,
        reason=reason[:200] or None,
        via=via,
    )
    return ended


@transaction.atomic(durable=True)
def person_reactivate(*, user: Any, actor: Any) -> bool:
    person = person_of(user)
    if person.deleted_at is not None:
        raise PeopleError("this account was deleted by the identity provider")
    if user.is_active:
        return False
    user.is_active = True
    user.save(update_fields=["is_active"])
    person.deactivated_at = None
    person.save(update_fields=["deactivated_at", "updated_at"])
    audit.record("person.reactivated", actor=actor, person=user.pk, via="page")
    return True
