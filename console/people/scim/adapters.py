"""Users and Groups as SCIM sees them (django-scim2's adapters), every write through one
service of ``console/people/services``: one audit row per request."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

from django.contrib.auth import get_user_model
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django_scim import exceptions as scim_errors
from django_scim.adapters import SCIMGroup, SCIMUser

from ..models import DirectoryGroup
from ..services import (
    Directory,
    PeopleError,
    directory_group_create,
    directory_group_delete,
    directory_group_update,
    person_delete,
    person_provision,
    person_update,
)
from .auth import scim_error
from .representation import (
    GROUP_SHAPE,
    USER_SHAPE,
    apply_patch,
    bad,
    from_people_error,
    project,
    representation_body,
)
from .schemas import GROUP_URN, USER_URN, base_location


def actor_of(request: Any) -> Any:
    """The token the request came with (``scim_auth.ScimTokenCheck``): the audit rows' actor."""
    return getattr(request, "scim_token", None)


class UserAdapter(SCIMUser):
    """A console account seen through SCIM; its id is ``Person.scim_id``."""

    id_field = "person__scim_id"

    def __init__(self, obj: Any, request: Any = None) -> None:
        super().__init__(obj, request)
        self.obj: Any = obj
        self._state: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        return str(self.obj.person.scim_id)

    @property
    def display_name(self) -> str:
        return str(self.obj.person.attributes.get("displayName") or self.obj.username)

    def state(self) -> dict[str, Any]:
        person = self.obj.person
        attributes = person.attributes or {}
        return {
            "userName": self.obj.username,
            "externalId": person.external_id or None,
            "name": attributes.get("name"),
            "displayName": attributes.get("displayName"),
            "emails": attributes.get("emails"),
            "active": self.obj.is_active,
        }

    def to_dict(self) -> dict[str, Any]:
        person = self.obj.person
        doc: dict[str, Any] = {"schemas": [USER_URN], "id": self.id}
        doc.update({k: v for k, v in self.state().items() if v is not None})
        groups = [
            {
                "value": group.scim_id,
                "$ref": urljoin(
                    base_location(self.request),
                    reverse("scim:groups", kwargs={"uuid": group.scim_id}),
                ),
                "display": group.display_name,
                "type": "direct",
            }
            for group in self.obj.directory_groups.all()
        ]
        if groups:
            doc["groups"] = groups
        doc["meta"] = {
            "resourceType": "User",
            "created": person.created_at.isoformat(),
            "lastModified": person.updated_at.isoformat(),
            "location": self.location,
        }
        return project(doc, self.request)

    def validate_dict(self, d: Any) -> None:
        self._state = representation_body(USER_SHAPE, d)

    def from_dict(self, d: Any) -> None:
        if self._state is None:
            self.validate_dict(d)

    def _directory(self, state: dict[str, Any]) -> Directory:
        emails = state.get("emails") or []
        primary = next((e for e in emails if e.get("primary") is True), None) or (
            emails[0] if emails else {}
        )
        name = state.get("name") or {}
        return Directory(
            username=state["userName"],
            active=state["active"],
            email=str(primary.get("value") or ""),
            first_name=str(name.get("givenName") or ""),
            last_name=str(name.get("familyName") or ""),
            external_id=state.get("externalId") or "",
            attributes={
                key: state[key]
                for key in ("name", "displayName", "emails")
                if state.get(key) is not None
            },
        )

    def _reload(self, pk: int) -> None:
        self.obj = (
            get_user_model()
            .objects.select_related("person")
            .prefetch_related("directory_groups")
            .get(pk=pk)
        )

    def save(self) -> None:
        assert self._state is not None
        data = self._directory(self._state)
        try:
            if self.obj.pk is None:
                user = person_provision(data=data, actor=actor_of(self.request))
            else:
                user = self.obj
                person_update(user=user, data=data, actor=actor_of(self.request))
        except PeopleError as exc:
            raise from_people_error(exc) from exc
        except IntegrityError:
            # Never the database's text (it names constraints and values): what clashed, in SCIM.
            raise scim_errors.IntegrityError(
                f"the userName {data.username!r} is taken", scim_type="uniqueness"
            ) from None
        self._reload(user.pk)

    def handle_operations(self, operations: Any) -> None:
        self._state = apply_patch(USER_SHAPE, self.state(), operations)
        for attr in USER_SHAPE.required:
            if self._state.get(attr) is None:
                raise bad(f"{attr} is required")
        self.save()

    def delete(self) -> None:
        person_delete(user=self.obj, actor=actor_of(self.request))

    @classmethod
    def resource_type_dict(cls, request: Any = None) -> dict[str, Any]:
        # The endpoint is relative to the SCIM base URL (RFC 7643 section 6), not a site path.
        return {**super().resource_type_dict(request), "endpoint": "/Users"}


class GroupAdapter(SCIMGroup):
    """A directory group; its id is ``DirectoryGroup.scim_id``."""

    id_field = "scim_id"

    def __init__(self, obj: Any, request: Any = None) -> None:
        super().__init__(obj, request)
        self.obj: Any = obj
        self._state: dict[str, Any] | None = None

    @property
    def display_name(self) -> str:
        return str(self.obj.display_name)

    def _member(self, user: Any) -> dict[str, Any]:
        scim_id = user.person.scim_id
        return {
            "value": scim_id,
            "$ref": urljoin(
                base_location(self.request), reverse("scim:users", kwargs={"uuid": scim_id})
            ),
            "type": "User",
        }

    def state(self) -> dict[str, Any]:
        members = [
            self._member(user)
            for user in sorted(self.obj.members.all(), key=lambda u: u.pk)
            if hasattr(user, "person") and user.person.in_directory
        ]
        return {
            "displayName": self.obj.display_name,
            "externalId": self.obj.external_id or None,
            "members": members or None,
        }

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"schemas": [GROUP_URN], "id": self.id}
        doc.update({k: v for k, v in self.state().items() if v is not None})
        doc["meta"] = {
            "resourceType": "Group",
            "created": self.obj.created_at.isoformat(),
            "lastModified": self.obj.updated_at.isoformat(),
            "location": self.location,
        }
        return project(doc, self.request)

    def validate_dict(self, d: Any) -> None:
        self._state = representation_body(GROUP_SHAPE, d)

    def from_dict(self, d: Any) -> None:
        if self._state is None:
            self.validate_dict(d)

    def _members(self, state: dict[str, Any]) -> list[Any]:
        wanted = [str(m.get("value") or "") for m in state.get("members") or []]
        if any(not value for value in wanted):
            raise bad("every member needs a value (the id of a User)")
        users = {
            u.person.scim_id: u
            for u in get_user_model()
            .objects.select_related("person")
            .filter(person__scim_id__in=wanted, person__in_directory=True)
        }
        unknown = [value for value in wanted if value not in users]
        if unknown:
            raise bad(f"no User with the id {unknown[0]!r}")
        return [users[value] for value in dict.fromkeys(wanted)]

    def save(self) -> None:
        assert self._state is not None
        state = self._state
        members = self._members(state)
        actor = actor_of(self.request)
        try:
            if self.obj.pk is None:
                self.obj = directory_group_create(
                    display_name=state["displayName"],
                    external_id=state.get("externalId") or "",
                    members=members,
                    actor=actor,
                )
            else:
                directory_group_update(
                    group=self.obj,
                    display_name=state["displayName"],
                    external_id=state.get("externalId") or "",
                    members=members,
                    actor=actor,
                )
        except PeopleError as exc:
            raise from_people_error(exc) from exc
        except IntegrityError:
            raise scim_errors.IntegrityError(
                f"the group {state['displayName']!r} exists already", scim_type="uniqueness"
            ) from None
        self.obj = DirectoryGroup.objects.prefetch_related("members__person").get(pk=self.obj.pk)

    def handle_operations(self, operations: Any) -> None:
        self._state = apply_patch(GROUP_SHAPE, self.state(), operations)
        if not self._state.get("displayName"):
            raise bad("displayName is required")
        self.save()

    def delete(self) -> None:
        directory_group_delete(group=self.obj, actor=actor_of(self.request))

    @classmethod
    def resource_type_dict(cls, request: Any = None) -> dict[str, Any]:
        return {**super().resource_type_dict(request), "endpoint": "/Groups"}


def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Any other path under /scim/v2/: a SCIM error, 404."""
    return scim_error(404, f"no SCIM endpoint at {request.path}")
