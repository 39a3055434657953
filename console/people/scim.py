"""SCIM 2.0 provisioning at ``/scim/v2/`` on django-scim2, for a service token of scope ``scim``.

django-scim2 serves the protocol: routes, list paging, filters (``scim_filters.py``), the PATCH
operation loop, the discovery endpoints and the error shape. This module is the console's side:

- who may call (``scim_auth.ScimTokenCheck``: ``Authorization: Bearer <token of scope scim>``);
- what a User and a Group are here (``UserAdapter``, ``GroupAdapter``) and the schemas published
  for them (``schemas()``): exactly the attributes the console keeps and gives back as sent;
- every write goes through one service of ``services.py`` (one audit row per request, whatever
  the number of PATCH operations in it): a PATCH is applied to the resource's representation
  first, then saved whole like a PUT.

Only accounts the identity provider manages are visible (``Person.in_directory``): a local
account (the break-glass admin) is out of SCIM's reach, and a user name it holds is a conflict.
Attributes the console does not keep (titles, addresses, the enterprise extension) are ignored,
as the identity providers expect.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django_scim import constants
from django_scim import exceptions as scim_errors
from django_scim.adapters import SCIMGroup, SCIMUser
from django_scim.models import SCIMServiceProviderConfig
from django_scim.schemas import ALL as LIBRARY_SCHEMAS

from .models import DirectoryGroup, Person
from .scim_auth import scim_error as _error
from .services import (
    Directory,
    PeopleError,
    directory_group_create,
    directory_group_delete,
    directory_group_update,
    person_delete,
    person_provision,
    person_update,
)

USER_URN = constants.SchemaURI.USER
GROUP_URN = constants.SchemaURI.GROUP
MAX_RESULTS = 200


def actor_of(request: Any) -> Any:
    """The token the request came with (``scim_auth.ScimTokenCheck``): the audit rows' actor."""
    return getattr(request, "scim_token", None)


# --- discovery ----------------------------------------------------------------------------------


def base_location(request: Any = None, *args: Any, **kwargs: Any) -> str:
    """Resource locations are absolute URLs on the host the request came to."""
    if request is None:
        return ""
    return f"{request.scheme}://{request.get_host()}"


def _library_schema(schema_id: str) -> dict[str, Any]:
    return copy.deepcopy(next(s for s in LIBRARY_SCHEMAS if s["id"] == schema_id))


def _attribute(schema: dict[str, Any], name: str, subs: tuple[str, ...] = ()) -> dict[str, Any]:
    attribute = copy.deepcopy(next(a for a in schema["attributes"] if a["name"] == name))
    if subs:
        attribute["subAttributes"] = [a for a in attribute["subAttributes"] if a["name"] in subs]
    return attribute


def _user_schema() -> dict[str, Any]:
    core = _library_schema(USER_URN)
    active = _attribute(core, "active")
    # The console must know whether a person may sign in: every create and replace says so.
    active["required"] = True
    active["description"] = "Whether the person may sign in to the console. REQUIRED."
    attributes = [
        _attribute(core, "userName"),
        _attribute(core, "name", ("formatted", "familyName", "givenName")),
        _attribute(core, "displayName"),
        _attribute(core, "emails", ("value", "type", "primary")),
        active,
        _attribute(core, "groups", ("value", "$ref", "display", "type")),
    ]
    groups = attributes[-1]
    for sub in groups["subAttributes"]:
        if sub["name"] == "$ref":
            sub["referenceTypes"] = ["Group"]
    return {
        **core,
        "description": "A person who may sign in to the console",
        "attributes": attributes,
        "meta": {"resourceType": "Schema", "location": f"/scim/v2/Schemas/{USER_URN}"},
    }


def _group_schema() -> dict[str, Any]:
    core = _library_schema(GROUP_URN)
    name = _attribute(core, "displayName")
    name["required"] = True
    name["uniqueness"] = "server"
    members = _attribute(core, "members", ("value", "$ref", "type"))
    for sub in members["subAttributes"]:
        if sub["name"] == "$ref":
            sub["referenceTypes"] = ["User"]
        if sub["name"] == "type":
            sub["canonicalValues"] = ["User"]
    return {
        **core,
        "description": "A group of the identity provider; OIDC_ROLE_MAP gives its members roles",
        "attributes": [name, members],
        "meta": {"resourceType": "Schema", "location": f"/scim/v2/Schemas/{GROUP_URN}"},
    }


def _discovery_schemas() -> list[dict[str, Any]]:
    kept = []
    for schema_id in (
        constants.SchemaURI.SERVICE_PROVIDER_CONFIG,
        constants.SchemaURI.RESOURCE_TYPE,
        "urn:ietf:params:scim:schemas:core:2.0:Schema",
    ):
        schema = _library_schema(schema_id)
        schema["meta"] = {"resourceType": "Schema", "location": f"/scim/v2/Schemas/{schema_id}"}
        kept.append(schema)
    return kept


SCHEMAS = [
    {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Schema"], **schema}
    for schema in (_user_schema(), _group_schema(), *_discovery_schemas())
]


def schemas() -> list[dict[str, Any]]:
    return SCHEMAS


class ServiceProviderConfig(SCIMServiceProviderConfig):
    def to_dict(self) -> dict[str, Any]:
        config = super().to_dict()
        config.update(
            patch={"supported": True},
            bulk={"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
            filter={"supported": True, "maxResults": MAX_RESULTS},
            changePassword={"supported": False},
            sort={"supported": False},
            etag={"supported": False},
        )
        return config


def extra_filter_kwargs(model: Any) -> Callable[..., dict[str, Any]]:
    """What SCIM may see: accounts the identity provider manages; every directory group."""

    def kwargs(request: Any, *args: Any, **kw: Any) -> dict[str, Any]:
        if model is get_user_model():
            return {"person__in_directory": True}
        return {}

    return kwargs


def queryset_post_processor(model: Any) -> Callable[..., Any]:
    def tuned(request: Any, queryset: Any, *args: Any, **kwargs: Any) -> Any:
        if model is get_user_model():
            return queryset.select_related("person").prefetch_related("directory_groups")
        if model is DirectoryGroup:
            return queryset.prefetch_related("members__person")
        return queryset

    return tuned


# --- representations ------------------------------------------------------------------------------

_URN_PREFIX = re.compile(r"^urn:ietf:params:scim:schemas:core:2\.0:(user|group):", re.IGNORECASE)
_PATH = re.compile(r"^(?P<attr>[A-Za-z$][\w$]*)(?:\[(?P<filter>[^\]]*)\])?(?:\.(?P<sub>[\w$]+))?$")
_FILTER = re.compile(
    r'^\s*(?P<attr>[\w$]+)\s+eq\s+(?:"(?P<text>(?:[^"\\]|\\.)*)"|(?P<bare>true|false|null))\s*$',
    re.IGNORECASE,
)


def _bad(detail: str, scim_type: str = "invalidValue") -> scim_errors.BadRequestError:
    return scim_errors.BadRequestError(detail, scim_type=scim_type)


def _from_people_error(exc: PeopleError) -> scim_errors.SCIMException:
    if exc.conflict:
        return scim_errors.IntegrityError(exc.detail, scim_type="uniqueness")
    return _bad(exc.detail)


class Shape:
    """What a resource type keeps: its attributes (canonical spelling), which are complex
    (with their sub-attributes), multi-valued, required, read-only."""

    def __init__(
        self,
        *,
        simple: dict[str, type],
        complex_: dict[str, dict[str, type]],
        multi: frozenset[str],
        required: frozenset[str],
        read_only: frozenset[str],
    ) -> None:
        self.simple = simple
        self.complex = complex_
        self.multi = multi
        self.required = required
        self.read_only = read_only
        names = [*simple, *complex_, *read_only]
        self.canonical = {name.lower(): name for name in names}

    def name(self, raw: str) -> str | None:
        return self.canonical.get(_URN_PREFIX.sub("", raw).lower())

    def sub(self, attr: str, raw: str) -> str | None:
        subs = self.complex.get(attr, {})
        return next((s for s in subs if s.lower() == raw.lower()), None)

    def clean_value(self, attr: str, value: Any, at: str) -> Any:
        """A value for ``attr`` checked against its type; None stays None (unassigned)."""
        if value is None:
            return None
        if attr in self.simple:
            kind = self.simple[attr]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise _bad(f"{at} must be a {kind.__name__}")
            return value
        subs = self.complex[attr]
        if attr in self.multi:
            items = value if isinstance(value, list) else [value]
            cleaned = [
                self._clean_item(attr, subs, item, f"{at}[{i}]") for i, item in enumerate(items)
            ]
            cleaned = [item for item in cleaned if item]
            if sum(1 for item in cleaned if item.get("primary") is True) > 1:
                raise _bad(f"{at}: at most one value may be primary")
            return cleaned or None
        item = self._clean_item(attr, subs, value, at)
        return item or None

    def _clean_item(self, attr: str, subs: dict[str, type], item: Any, at: str) -> dict[str, Any]:
        if not isinstance(item, dict):
            raise _bad(f"{at} must be an object")
        cleaned: dict[str, Any] = {}
        for raw, value in item.items():
            sub = next((s for s in subs if s.lower() == str(raw).lower()), None)
            if sub is None or value is None:
                continue  # a sub-attribute the console does not keep
            kind = subs[sub]
            if not isinstance(value, kind):
                raise _bad(f"{at}.{sub} must be a {kind.__name__}")
            cleaned[sub] = value
        return cleaned


def _parse_filter(text: str) -> tuple[str, Any]:
    match = _FILTER.match(text)
    if match is None:
        raise _bad(f"unsupported filter {text!r}: only 'sub eq \"value\"'", "invalidFilter")
    if match.group("bare") is not None:
        bare = match.group("bare").lower()
        return match.group("attr"), {"true": True, "false": False, "null": None}[bare]
    return match.group("attr"), json.loads(f'"{match.group("text")}"')


def apply_patch(shape: Shape, state: dict[str, Any], operations: Any) -> dict[str, Any]:
    """The representation after the operations (RFC 7644 section 3.5.2), on a copy."""
    if not isinstance(operations, list) or not operations:
        raise _bad("a PATCH needs a non-empty Operations list")
    state = copy.deepcopy(state)
    for index, operation in enumerate(operations):
        if not isinstance(operation, dict):
            raise _bad(f"Operations[{index}] must be an object")
        op = str(operation.get("op", "")).lower()
        if op not in constants.VALID_PATCH_OPS:
            raise _bad(f"Operations[{index}].op must be add, remove or replace")
        path = operation.get("path")
        value = operation.get("value")
        if path is None or path == "":
            if op == "remove":
                raise _bad(f"Operations[{index}]: remove needs a path", "noTarget")
            if not isinstance(value, dict):
                raise _bad(f"Operations[{index}]: without a path, value must be an object")
            for key, item in value.items():
                _apply(shape, state, op, str(key), item)
        elif isinstance(path, str):
            _apply(shape, state, op, path, value)
        else:
            raise _bad(f"Operations[{index}].path must be a string", "invalidPath")
    return state


def _apply(shape: Shape, state: dict[str, Any], op: str, path: str, value: Any) -> None:
    match = _PATH.match(_URN_PREFIX.sub("", path.strip()))
    if match is None:
        raise _bad(f"unsupported path {path!r}", "invalidPath")
    attr = shape.name(match.group("attr"))
    if attr is None:
        return  # an attribute the console does not keep: ignored
    if attr in shape.read_only:
        raise _bad(f"{attr} is read-only", "mutability")
    flt, raw_sub = match.group("filter"), match.group("sub")
    sub = None
    if raw_sub is not None:
        sub = shape.sub(attr, raw_sub)
        if sub is None:
            return  # a sub-attribute the console does not keep
    if attr in shape.simple:
        if flt is not None or sub is not None:
            raise _bad(f"{path!r}: {attr} has no sub-attributes", "invalidPath")
        if op == "remove":
            if attr in shape.required:
                raise _bad(f"{attr} is required and cannot be removed", "mutability")
            state[attr] = None
        else:
            state[attr] = shape.clean_value(attr, value, attr)
        return
    if attr not in shape.multi:
        current = dict(state.get(attr) or {})
        if flt is not None:
            raise _bad(f"{path!r}: {attr} is not multi-valued", "invalidPath")
        if sub is not None:
            if op == "remove":
                current.pop(sub, None)
            else:
                current.update(shape.clean_value(attr, {sub: value}, path) or {})
        elif op == "remove":
            current = {}
        else:
            if not isinstance(value, dict):
                raise _bad(f"{attr} must be an object")
            current.update(shape.clean_value(attr, value, attr) or {})
        state[attr] = current or None
        return
    items: list[dict[str, Any]] = list(state.get(attr) or [])
    if flt is None:
        if sub is not None:
            raise _bad(f"{path!r}: name which {attr} value with a filter", "invalidPath")
        if op == "remove":
            if value is None:
                state[attr] = None
                return
            gone = shape.clean_value(attr, value, attr) or []
            gone_values = {item.get("value") for item in gone}
            kept = [item for item in items if item.get("value") not in gone_values]
            state[attr] = kept or None
            return
        new = shape.clean_value(attr, value, attr) or []
        if op == "replace":
            items = new
        else:
            if any(item.get("primary") is True for item in new):
                items = [
                    {**item, "primary": False} if "primary" in item else item for item in items
                ]
            items += [item for item in new if item not in items]
        if sum(1 for item in items if item.get("primary") is True) > 1:
            raise _bad(f"{attr}: at most one value may be primary")
        state[attr] = items or None
        return
    key, wanted = _parse_filter(flt)
    key_sub = shape.sub(attr, key)
    matched = [i for i, item in enumerate(items) if key_sub and item.get(key_sub) == wanted]
    if op == "remove":
        if sub is None:
            items = [item for i, item in enumerate(items) if i not in matched]
        else:
            for i in matched:
                items[i] = {k: v for k, v in items[i].items() if k != sub}
        state[attr] = [item for item in items if item] or None
        return
    if not matched:
        raise _bad(f"no {attr} value matches {flt!r}", "noTarget")
    for i in matched:
        update = {sub: value} if sub is not None else value
        if not isinstance(update, dict):
            raise _bad(f"{path!r}: value must be an object")
        items[i] = {**items[i], **(shape.clean_value(attr, update, path) or [{}])[0]}
    state[attr] = items


def _representation_body(shape: Shape, body: Any) -> dict[str, Any]:
    """The state a POST or PUT body describes (attributes the console does not keep dropped)."""
    if not isinstance(body, dict):
        raise _bad("the body must be a JSON object")
    state: dict[str, Any] = {}
    for raw, value in body.items():
        attr = shape.name(str(raw))
        if attr is None or attr in shape.read_only:
            continue  # id, meta, groups, schemas, attributes the console does not keep
        state[attr] = shape.clean_value(attr, value, attr)
    for attr in shape.required:
        if state.get(attr) is None:
            raise _bad(f"{attr} is required")
    return state


def _project(doc: dict[str, Any], request: Any) -> dict[str, Any]:
    """``attributes`` / ``excludedAttributes`` (RFC 7644 section 3.9): id and schemas always."""
    params = _projection_params(request)
    if params is None:
        return doc
    attributes, excluded = params
    always = {"id", "schemas"}
    if attributes:
        out: dict[str, Any] = {}
        for key, value in doc.items():
            wanted = [a for a in attributes if a.split(".")[0].lower() == key.lower()]
            if key in always or any("." not in a for a in wanted):
                out[key] = value
            elif wanted and isinstance(value, dict):
                subs = {a.split(".", 1)[1].lower() for a in wanted}
                kept = {k: v for k, v in value.items() if k.lower() in subs}
                if kept:
                    out[key] = kept
        return out
    if excluded:
        gone = {a.lower() for a in excluded if "." not in a}
        return {k: v for k, v in doc.items() if k in always or k.lower() not in gone}
    return doc


def _projection_params(request: Any) -> tuple[list[str], list[str]] | None:
    if request is None:
        return None
    attributes = request.GET.get("attributes", "")
    excluded = request.GET.get("excludedAttributes", "")
    if request.method == "POST" and request.path.endswith("/.search"):
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = {}
        if isinstance(body, dict):
            attributes = ",".join(body.get("attributes") or []) or attributes
            excluded = ",".join(body.get("excludedAttributes") or []) or excluded

    def split(text: str) -> list[str]:
        return [_URN_PREFIX.sub("", a.strip()) for a in text.split(",") if a.strip()]

    a, e = split(attributes), split(excluded)
    return (a, e) if a or e else None


USER_SHAPE = Shape(
    simple={"userName": str, "displayName": str, "externalId": str, "active": bool},
    complex_={
        "name": {"formatted": str, "familyName": str, "givenName": str},
        "emails": {"value": str, "type": str, "primary": bool},
    },
    multi=frozenset({"emails"}),
    required=frozenset({"userName", "active"}),
    read_only=frozenset({"id", "meta", "groups", "schemas"}),
)

GROUP_SHAPE = Shape(
    simple={"displayName": str, "externalId": str},
    complex_={"members": {"value": str, "$ref": str, "type": str}},
    multi=frozenset({"members"}),
    required=frozenset({"displayName"}),
    read_only=frozenset({"id", "meta", "schemas"}),
)


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
        return _project(doc, self.request)

    def validate_dict(self, d: Any) -> None:
        self._state = _representation_body(USER_SHAPE, d)

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
            raise _from_people_error(exc) from exc
        self._reload(user.pk)

    def handle_operations(self, operations: Any) -> None:
        self._state = apply_patch(USER_SHAPE, self.state(), operations)
        for attr in USER_SHAPE.required:
            if self._state.get(attr) is None:
                raise _bad(f"{attr} is required")
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
        return _project(doc, self.request)

    def validate_dict(self, d: Any) -> None:
        self._state = _representation_body(GROUP_SHAPE, d)

    def from_dict(self, d: Any) -> None:
        if self._state is None:
            self.validate_dict(d)

    def _members(self, state: dict[str, Any]) -> list[Any]:
        wanted = [str(m.get("value") or "") for m in state.get("members") or []]
        if any(not value for value in wanted):
            raise _bad("every member needs a value (the id of a User)")
        users = {
            u.person.scim_id: u
            for u in get_user_model()
            .objects.select_related("person")
            .filter(person__scim_id__in=wanted, person__in_directory=True)
        }
        unknown = [value for value in wanted if value not in users]
        if unknown:
            raise _bad(f"no User with the id {unknown[0]!r}")
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
            raise _from_people_error(exc) from exc
        self.obj = DirectoryGroup.objects.prefetch_related("members__person").get(pk=self.obj.pk)

    def handle_operations(self, operations: Any) -> None:
        self._state = apply_patch(GROUP_SHAPE, self.state(), operations)
        if not self._state.get("displayName"):
            raise _bad("displayName is required")
        self.save()

    def delete(self) -> None:
        directory_group_delete(group=self.obj, actor=actor_of(self.request))

    @classmethod
    def resource_type_dict(cls, request: Any = None) -> dict[str, Any]:
        return {**super().resource_type_dict(request), "endpoint": "/Groups"}


def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Any other path under /scim/v2/: a SCIM error, 404."""
    return _error(404, f"no SCIM endpoint at {request.path}")


__all__ = ["GroupAdapter", "Person", "ServiceProviderConfig", "UserAdapter", "not_found", "schemas"]
