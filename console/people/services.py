"""Every change to who may enter: one service each, keyword-only, atomic, one audit row each.

The People page, a sign-in through the identity provider and a SCIM request all change people
through these functions, so a change leaves the same row whichever way it came (``via``:
``page``, ``sign-in``, ``scim``). Queue grants reuse ``conversations.services.queue_grant``
(``queue.granted`` / ``queue.revoked``).

Deactivating someone (``person_deactivate``, ``person_update`` with ``active`` false,
``person_delete``) ends their sessions in the same call: ``_after_access_lost`` is the one place
that says what else a person loses with their access.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

import audit

from .models import DirectoryGroup, Person, PersonSession
from .roles import ROLE_NAMES, roles_for_groups, roles_of, set_roles

log = logging.getLogger(__name__)

USERNAME_MAX = 150
NAME_MAX = 150


class PeopleError(ValueError):
    """A change refused, with the field it is about (for the page's form or SCIM's error)."""

    def __init__(self, detail: str, *, field: str | None = None, conflict: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.conflict = conflict


class SignInRefused(Exception):
    """A sign-in through the identity provider that must not open a session (the sentence is
    shown on the sign-in page)."""


# --- helpers -------------------------------------------------------------------------------------


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


def _after_access_lost(*, user: Any) -> int:
    """What a person loses with their access, in the transaction that takes it: every session at
    once. Returns the sessions ended.

    Share links: the lead adds ``share_links_revoke_for_user(user=user, reason=...)`` from
    ``conversations/sharing/services.py`` HERE at merge time, so the People page, SCIM
    deactivation and SCIM deletion all revoke them through this one place."""
    return sessions_end(user=user)


def _ids(users: Iterable[Any]) -> list[int]:
    return sorted(int(u.pk) for u in users)


# --- the People page ---------------------------------------------------------------------------


@transaction.atomic
def person_invite(
    *,
    username: str,
    email: str = "",
    first_name: str = "",
    last_name: str = "",
    roles: Iterable[str] = (),
    actor: Any,
) -> Any:
    """A local account, with no password yet: the invitee sets one through a one-time link
    (``console.people.views.set_password_link``). Refused where local passwords are off."""
    if not settings.LOCAL_PASSWORDS:
        raise PeopleError(
            "local passwords are turned off (LOCAL_PASSWORDS=false): people sign in through "
            "the identity provider"
        )
    username = check_username(username)
    if username_taken(username):
        raise PeopleError(f"the user name {username!r} is taken", field="username", conflict=True)
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
    return user


@transaction.atomic
def person_roles_set(*, user: Any, roles: Iterable[str], actor: Any) -> bool:
    """An admin sets a local person's roles. A person from the identity provider has the roles
    its groups give (re-read at every sign-in and at every SCIM change): refused here, so a
    change made on this page is never silently undone at the next sign-in."""
    wanted = check_roles(roles)
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


@transaction.atomic
def person_deactivate(*, user: Any, actor: Any, reason: str = "", via: str = "page") -> int:
    """The person cannot sign in any more and every session they hold ends now. Returns the
    number of sessions ended."""
    if via == "page" and user.pk == getattr(actor, "pk", None):
        raise PeopleError("you cannot deactivate yourself")
    person = person_of(user)
    if not user.is_active:
        return 0
    user.is_active = False
    user.save(update_fields=["is_active"])
    person.deactivated_at = timezone.now()
    person.save(update_fields=["deactivated_at", "updated_at"])
    ended = _after_access_lost(user=user)
    audit.record(
        "person.deactivated",
        actor=actor,
        person=user.pk,
        sessions_ended=ended,
        reason=reason[:200] or None,
        via=via,
    )
    return ended


@transaction.atomic
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


# --- sign-in through the identity provider -----------------------------------------------------


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
    # Not every provider's names fit Django's user names (spaces, other signs): keep what fits.
    raw = claims.username or claims.email or claims.subject
    kept = "".join(ch for ch in raw if ch.isalnum() or ch in "@.+-_")[:USERNAME_MAX]
    return kept or f"sso-{claims.subject}"[:USERNAME_MAX]


@transaction.atomic
def person_sign_in(*, claims: Claims) -> Any:
    """The account a verified sign-in opens: found by the provider's subject, else a SCIM account
    of that user name not yet linked to a subject, else created now (a first sign-in). Its roles
    are set from the provider's groups every time. One audit row: ``person.provisioned`` for a
    new account (its roles in it), ``person.roles_changed`` when the groups moved it.

    Refused (``SignInRefused``): a deactivated or deleted account, and a user name that belongs
    to a local account (an admin must decide; the provider cannot take it over)."""
    User = get_user_model()
    wanted = roles_for_groups(claims.groups)
    person = (
        Person.objects.select_for_update()
        .select_related("user")
        .filter(issuer=claims.issuer, subject=claims.subject, deleted_at__isnull=True)
        .first()
    )
    username = _claimed_username(claims)
    if person is None:
        candidate = (
            Person.objects.select_for_update()
            .select_related("user")
            .filter(
                source=Person.Source.SCIM,
                subject="",
                deleted_at__isnull=True,
                user__username__iexact=username,
            )
            .first()
        )
        if candidate is not None:
            person = candidate
            person.issuer, person.subject = claims.issuer, claims.subject
            person.save(update_fields=["issuer", "subject", "updated_at"])
    if person is None:
        if Person.objects.filter(issuer=claims.issuer, subject=claims.subject).exists():
            raise SignInRefused(
                "This account was removed by your organisation's directory. Ask an administrator."
            )
        if username_taken(username):
            raise SignInRefused(
                f"An account named {username} exists already and is not linked to your "
                "identity provider. Ask an administrator."
            )
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
            issuer=claims.issuer,
            subject=claims.subject,
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


# --- SCIM ----------------------------------------------------------------------------------------


@dataclass
class Directory:
    """What SCIM sets on a user (``console/people/scim.py`` builds it from the request)."""

    username: str
    active: bool
    email: str = ""
    first_name: str = ""
    last_name: str = ""
    external_id: str = ""
    attributes: Mapping[str, Any] | None = None


def _check_directory(data: Directory, *, exclude: int | None = None) -> None:
    data.username = check_username(data.username)
    if username_taken(data.username, exclude=exclude):
        raise PeopleError(
            f"the userName {data.username!r} is taken", field="userName", conflict=True
        )
    data.email = check_email(data.email)


def _directory_roles(user: Any) -> frozenset[str]:
    return roles_for_groups(
        DirectoryGroup.objects.filter(members=user).values_list("display_name", flat=True)
    )


@transaction.atomic
def person_provision(*, data: Directory, actor: Any) -> Any:
    """A SCIM ``POST /Users``: an account the identity provider manages (no password: it signs
    in through the provider)."""
    _check_directory(data)
    user = get_user_model().objects.create_user(
        data.username,
        email=data.email,
        first_name=data.first_name[:NAME_MAX],
        last_name=data.last_name[:NAME_MAX],
        is_active=data.active,
    )
    user.set_unusable_password()
    user.save(update_fields=["password"])
    Person.objects.create(
        user=user,
        source=Person.Source.SCIM,
        in_directory=True,
        external_id=data.external_id[:255],
        attributes=dict(data.attributes or {}),
        deactivated_at=None if data.active else timezone.now(),
    )
    audit.record(
        "person.provisioned",
        actor=actor,
        person=user.pk,
        source=Person.Source.SCIM,
        roles=[],
        via="scim",
    )
    return user


@transaction.atomic
def person_update(*, user: Any, data: Directory, actor: Any) -> list[str]:
    """A SCIM ``PUT`` or ``PATCH`` of a user: one row naming the fields that changed. Turning
    ``active`` off ends every session at once (counted in the same row). Returns the fields."""
    person = Person.objects.select_for_update().get(user=user)
    _check_directory(data, exclude=user.pk)
    fields: list[str] = []
    for field, value in (
        ("username", data.username),
        ("email", data.email),
        ("first_name", data.first_name[:NAME_MAX]),
        ("last_name", data.last_name[:NAME_MAX]),
    ):
        if getattr(user, field) != value:
            setattr(user, field, value)
            fields.append(field)
    ended: int | None = None
    if user.is_active != data.active:
        user.is_active = data.active
        fields.append("active")
        person.deactivated_at = None if data.active else timezone.now()
    if fields:
        user.save(update_fields=[f if f != "active" else "is_active" for f in fields])
    person_fields: list[str] = []
    if person.external_id != data.external_id[:255]:
        person.external_id = data.external_id[:255]
        person_fields.append("external_id")
    attributes = dict(data.attributes or {})
    if person.attributes != attributes:
        person.attributes = attributes
        person_fields.append("attributes")
    person.save()
    fields += person_fields
    if "active" in fields and not data.active:
        ended = _after_access_lost(user=user)
    if fields:
        audit.record(
            "person.updated",
            actor=actor,
            person=user.pk,
            fields=fields,
            active=user.is_active,
            sessions_ended=ended,
            via="scim",
        )
    return fields


@transaction.atomic
def person_delete(*, user: Any, actor: Any) -> None:
    """A SCIM ``DELETE /Users/{id}``. The account is kept, inactive and renamed (the audit log
    names people by id; share links and grants they gave keep a name), hidden from SCIM, and
    its subject can never sign in again."""
    person = Person.objects.select_for_update().get(user=user)
    user.is_active = False
    user.username = f"deleted-{user.pk}-{user.username}"[:USERNAME_MAX]
    user.save(update_fields=["is_active", "username"])
    now = timezone.now()
    person.deactivated_at = person.deactivated_at or now
    person.deleted_at = now
    person.in_directory = False
    person.save(update_fields=["deactivated_at", "deleted_at", "in_directory", "updated_at"])
    DirectoryGroup.members.through.objects.filter(user_id=user.pk).delete()
    set_roles(user, ())
    ended = _after_access_lost(user=user)
    audit.record("person.deleted", actor=actor, person=user.pk, sessions_ended=ended, via="scim")


def _resync_roles(users: Iterable[Any]) -> list[int]:
    """Set each user's roles from their directory groups; the ids of those whose roles moved."""
    changed = []
    for user in users:
        if not user.is_active:
            continue
        before, after = set_roles(user, _directory_roles(user))
        if before != after:
            changed.append(int(user.pk))
    return sorted(changed)


def _check_group_name(name: str, *, exclude: int | None = None) -> str:
    name = (name or "").strip() if isinstance(name, str) else ""
    if not name:
        raise PeopleError("displayName is required", field="displayName")
    if len(name) > 255:
        raise PeopleError("displayName has at most 255 characters", field="displayName")
    taken = DirectoryGroup.objects.filter(display_name__iexact=name)
    if exclude is not None:
        taken = taken.exclude(pk=exclude)
    if taken.exists():
        raise PeopleError(f"the group {name!r} exists already", field="displayName", conflict=True)
    return name


@transaction.atomic
def directory_group_create(
    *, display_name: str, external_id: str = "", members: Iterable[Any] = (), actor: Any
) -> DirectoryGroup:
    group = DirectoryGroup.objects.create(
        display_name=_check_group_name(display_name), external_id=(external_id or "")[:255]
    )
    users = list(members)
    group.members.set(users)
    audit.record(
        "directory_group.changed",
        actor=actor,
        change="created",
        group=group.pk,
        members=_ids(users),
        roles_changed=_resync_roles(users),
        via="scim",
    )
    return group


@transaction.atomic
def directory_group_update(
    *,
    group: DirectoryGroup,
    display_name: str,
    external_id: str,
    members: Iterable[Any],
    actor: Any,
) -> list[str]:
    group = DirectoryGroup.objects.select_for_update().get(pk=group.pk)
    name = _check_group_name(display_name, exclude=group.pk)
    fields: list[str] = []
    if group.display_name != name:
        group.display_name = name
        fields.append("displayName")
    if group.external_id != (external_id or "")[:255]:
        group.external_id = (external_id or "")[:255]
        fields.append("externalId")
    before = {u.pk: u for u in group.members.all()}
    after = {u.pk: u for u in members}
    if set(before) != set(after):
        fields.append("members")
        group.members.set(list(after.values()))
    if not fields:
        return fields
    group.save()
    # A rename can move every member's roles; a membership change moves those who came or went.
    touched = (
        {**before, **after}
        if "displayName" in fields
        else {pk: u for pk, u in {**before, **after}.items() if (pk in before) != (pk in after)}
    )
    audit.record(
        "directory_group.changed",
        actor=actor,
        change="updated",
        group=group.pk,
        fields=fields,
        members=sorted(after),
        roles_changed=_resync_roles(touched.values()),
        via="scim",
    )
    return fields


@transaction.atomic
def directory_group_delete(*, group: DirectoryGroup, actor: Any) -> None:
    members = list(group.members.all())
    pk = group.pk
    group.delete()
    audit.record(
        "directory_group.changed",
        actor=actor,
        change="deleted",
        group=pk,
        members=_ids(members),
        roles_changed=_resync_roles(members),
        via="scim",
    )
