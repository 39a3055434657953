"""What SCIM changes: people the identity provider manages, and its groups (whose names give
roles through ``OIDC_ROLE_MAP``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

import audit

from ..models import DirectoryGroup, Person
from ..names import USERNAME_MAX
from ..roles import roles_for_groups, set_roles
from .base import (
    NAME_MAX,
    PeopleError,
    after_access_lost,
    check_email,
    claim_username,
    user_ids,
)


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
    data.username = claim_username(data.username, exclude=exclude, field="userName")
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
    ``active`` off ends every session at once (counted in the same row) and takes every role:
    an account reactivated later has the roles its directory groups give *then* (its groups may
    have changed meanwhile, and a group change skips inactive members), never the ones it had.
    Returns the fields."""
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
    roles: list[str] | None = None
    if "active" in fields:
        before, after = set_roles(user, _directory_roles(user) if data.active else ())
        if before != after:
            fields.append("roles")
            roles = sorted(after)
        if not data.active:
            ended = after_access_lost(user=user)
    if fields:
        audit.record(
            "person.updated",
            actor=actor,
            person=user.pk,
            fields=fields,
            active=user.is_active,
            sessions_ended=ended,
            roles=roles,
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
    ended = after_access_lost(user=user)
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
        members=user_ids(users),
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
        members=user_ids(members),
        roles_changed=_resync_roles(members),
        via="scim",
    )
