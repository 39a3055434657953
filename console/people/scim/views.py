"""django-scim2's discovery views, answering lists with ``totalResults`` and unknown ids with a
SCIM error, as RFC 7644 shapes them (routed by ``urls.py``)."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django_scim import constants
from django_scim import views as scim_views

from .auth import scim_error as _error


def _listing(resources: list[dict[str, Any]]) -> HttpResponse:
    body = {
        "schemas": [constants.SchemaURI.LIST_RESPONSE],
        "totalResults": len(resources),
        "itemsPerPage": len(resources),
        "startIndex": 1,
        "Resources": resources,
    }
    return HttpResponse(json.dumps(body), content_type=constants.SCIM_CONTENT_TYPE)


def _one(doc: dict[str, Any]) -> HttpResponse:
    return HttpResponse(json.dumps(doc), content_type=constants.SCIM_CONTENT_TYPE)


class ResourceTypes(scim_views.ResourceTypesView):
    """``/ResourceTypes``: django-scim2's, with ``totalResults`` and a SCIM 404."""

    def get(self, request: HttpRequest, uuid: str | None = None, *args: Any, **kwargs: Any) -> Any:
        by_id = self.type_dict_by_type_id(request)
        if uuid:
            doc = by_id.get(uuid)
            return _one(doc) if doc else _error(404, f"no resource type {uuid!r}")
        return _listing(sorted(by_id.values(), key=lambda d: str(d.get("id"))))


class Schemas(scim_views.SchemasView):
    """``/Schemas``: django-scim2's, with ``totalResults`` and a SCIM 404."""

    def get(self, request: HttpRequest, uuid: str | None = None, *args: Any, **kwargs: Any) -> Any:
        if uuid:
            doc = self.schemas_by_uri.get(uuid)
            return _one(doc) if doc else _error(404, f"no schema {uuid!r}")
        return _listing(sorted(self.schemas_by_uri.values(), key=lambda d: str(d.get("id"))))


class NotImplementedHere(scim_views.SCIMView):
    """What the console does not do (searching every resource type at once, /Me, /Bulk): a SCIM
    error, 501 (RFC 7644 section 3.12)."""

    implemented = False

    def status_501(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _error(501, f"{request.path} is not implemented by this service provider")
