"""Reads of the People pages: every person with role, queues, last sign-in and source, in a
fixed number of queries whatever the number of people."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Prefetch

from conversations.models import Queue, QueueUserObjectPermission
from conversations.permissions import SEE_QUEUE

from .models import Person
from .roles import ROLE_NAMES, ROLE_WORDS

SOURCE_WORDS: dict[str, str] = {
    Person.Source.LOCAL: "local",
    Person.Source.PROVIDER: "single sign-on",
    Person.Source.SCIM: "SCIM",
}


@dataclass(frozen=True)
class PersonRow:
    user: Any
    source: str
    source_words: str
    roles: tuple[str, ...]
    queues: tuple[str, ...]
    all_queues: bool
    last_login: datetime | None
    active: bool
    deleted: bool
    person: Person | None = None
    groups: tuple[str, ...] = field(default_factory=tuple)

    @property
    def role_words(self) -> list[str]:
        return [ROLE_WORDS.get(r, r) for r in self.roles]

    @property
    def managed_by_provider(self) -> bool:
        return self.source != Person.Source.LOCAL


def _queues_by_user(user_ids: list[int]) -> dict[int, list[str]]:
    app_label, codename = SEE_QUEUE.split(".")
    grants = (
        QueueUserObjectPermission.objects.filter(
            user_id__in=user_ids,
            permission__codename=codename,
            permission__content_type__app_label=app_label,
        )
        .select_related("content_object")
        .order_by("content_object__name")
    )
    out: dict[int, list[str]] = defaultdict(list)
    for grant in grants:
        out[grant.user_id].append(grant.content_object.name)
    return out


def _row(user: Any, queues: dict[int, list[str]]) -> PersonRow:
    person: Person | None = getattr(user, "person", None)
    source = person.source if person is not None else Person.Source.LOCAL
    group_names = [g.name for g in user.groups.all()]
    roles = tuple(r for r in ROLE_NAMES if r in group_names)
    return PersonRow(
        user=user,
        source=source,
        source_words=SOURCE_WORDS.get(source, source),
        roles=roles,
        queues=tuple(queues.get(user.pk, [])),
        all_queues=user.is_superuser or "admin" in roles,
        last_login=user.last_login,
        active=user.is_active,
        deleted=person is not None and person.deleted_at is not None,
        person=person,
        groups=tuple(g.display_name for g in user.directory_groups.all()),
    )


def _users() -> Any:
    from django.contrib.auth.models import Group

    from .models import DirectoryGroup

    return (
        get_user_model()
        .objects.select_related("person")
        .prefetch_related(
            Prefetch("groups", queryset=Group.objects.order_by("name")),
            Prefetch("directory_groups", queryset=DirectoryGroup.objects.order_by("display_name")),
        )
    )


def people_list() -> list[PersonRow]:
    """Every account, active first, then by user name (deleted ones last)."""
    users = list(_users().order_by("-is_active", "username"))
    queues = _queues_by_user([u.pk for u in users])
    rows = [_row(u, queues) for u in users]
    return sorted(rows, key=lambda r: (r.deleted, not r.active, r.user.username.lower()))


def person_detail(pk: int) -> PersonRow | None:
    user = _users().filter(pk=pk).first()
    if user is None:
        return None
    return _row(user, _queues_by_user([user.pk]))


def queue_names() -> list[str]:
    return list(Queue.objects.order_by("name").values_list("name", flat=True))


def queue_granters(*, limit: int = 5) -> list[str]:
    """The user names of who may grant a queue (the People page: the admin role, superusers),
    active ones, at most ``limit``: the list page names them to a person who sees no queue."""
    from django.contrib.auth import get_user_model
    from django.db.models import Q

    from conversations.permissions import ADMIN_GROUP

    return list(
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(is_superuser=True) | Q(groups__name=ADMIN_GROUP))
        .distinct()
        .order_by("username")
        .values_list("username", flat=True)[:limit]
    )
