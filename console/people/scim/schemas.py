"""What the console publishes about its SCIM service (the schemas, the service provider's
configuration) and which rows SCIM may see."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django_scim import constants
from django_scim.models import SCIMServiceProviderConfig
from django_scim.schemas import ALL as LIBRARY_SCHEMAS

from ..models import DirectoryGroup

USER_URN = constants.SchemaURI.USER
GROUP_URN = constants.SchemaURI.GROUP
MAX_RESULTS = 200


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
