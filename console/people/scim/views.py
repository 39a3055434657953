"""Every SCIM endpoint's view (routed by ``urls.py``): django-scim2's, each behind ``Guarded``,
the one place where a request's body is read and parsed and where what went wrong becomes a SCIM
error; and its discovery views, answering lists with ``totalResults`` and unknown ids with a SCIM
error, as RFC 7644 shapes them."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import View
from django_scim import constants
from django_scim import exceptions as scim_errors
from django_scim import views as scim_views
from django_scim.settings import scim_settings

from conversations.api.errors import ApiError
from conversations.api.parsers import decode_json_body

from .auth import scim_error as _error

logger = logging.getLogger(__name__)


class Guarded:
    """What every SCIM endpoint shares, in front of django-scim2's views: the token check, then
    the handler, with every failure a SCIM error (RFC 7644 section 3.12) in 4xx where the
    request was at fault, never a database's or a parser's own text:

    - a body over ``SCIM_MAX_BODY_BYTES``: 413;
    - a body that is not UTF-8, not JSON, nested past what the decoder can recurse into, an
      integer too long to read, a string PostgreSQL cannot keep, or not a JSON object: 400
      ``invalidSyntax`` (``load_body``, through the API's own strict decoder);
    - a filter nested too deep: 400 ``invalidFilter``;
    - anything else: 500 with a fixed sentence (logged with its traceback)."""

    implemented: bool

    @method_decorator(csrf_exempt)
    @method_decorator(scim_settings.AUTH_CHECK_MIDDLEWARE)
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not self.implemented:
            return self.status_501(request, *args, **kwargs)  # type: ignore[attr-defined]
        limit = settings.SCIM_MAX_BODY_BYTES
        declared = request.META.get("CONTENT_LENGTH") or ""
        if declared.isdigit() and int(declared) > limit:
            return _error(413, f"the body is larger than {limit} bytes", "invalidValue")
        try:
            # django-scim2's own dispatch (skipped) would turn any failure into a 500.
            return View.dispatch(self, request, *args, **kwargs)  # type: ignore[arg-type]
        except scim_errors.SCIMException as exc:
            return _error(int(exc.status), str(exc.detail), exc.scim_type)
        except RequestDataTooBig:
            return _error(413, f"the body is larger than {limit} bytes", "invalidValue")
        except RecursionError:
            return _error(400, "the request is nested too deep", "invalidSyntax")
        except Exception:
            logger.exception("SCIM: %s %s failed", request.method, request.path)
            return _error(500, "the service provider could not complete the request")

    def load_body(self, body: bytes) -> dict[str, Any]:
        if len(body) > settings.SCIM_MAX_BODY_BYTES:
            raise scim_errors.BadRequestError(
                f"the body is larger than {settings.SCIM_MAX_BODY_BYTES} bytes",
                status=413,
                scim_type="invalidValue",
            )
        if not body.strip():
            return {}
        try:
            data = decode_json_body(body)
        except ApiError as exc:
            raise scim_errors.BadRequestError(exc.message, scim_type="invalidSyntax") from None
        if not isinstance(data, dict):
            raise scim_errors.BadRequestError(
                "the body must be a JSON object", scim_type="invalidSyntax"
            )
        return data


class Users(Guarded, scim_views.UsersView):
    pass


class Groups(Guarded, scim_views.GroupsView):
    pass


class UsersSearch(Guarded, scim_views.UserSearchView):
    pass


class GroupsSearch(Guarded, scim_views.GroupSearchView):
    pass


class ServiceProviderConfig(Guarded, scim_views.ServiceProviderConfigView):
    pass


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


class ResourceTypes(Guarded, scim_views.ResourceTypesView):
    """``/ResourceTypes``: django-scim2's, with ``totalResults`` and a SCIM 404."""

    def get(self, request: HttpRequest, uuid: str | None = None, *args: Any, **kwargs: Any) -> Any:
        by_id = self.type_dict_by_type_id(request)
        if uuid:
            doc = by_id.get(uuid)
            return _one(doc) if doc else _error(404, f"no resource type {uuid!r}")
        return _listing(sorted(by_id.values(), key=lambda d: str(d.get("id"))))


class Schemas(Guarded, scim_views.SchemasView):
    """``/Schemas``: django-scim2's, with ``totalResults`` and a SCIM 404."""

    def get(self, request: HttpRequest, uuid: str | None = None, *args: Any, **kwargs: Any) -> Any:
        if uuid:
            doc = self.schemas_by_uri.get(uuid)
            return _one(doc) if doc else _error(404, f"no schema {uuid!r}")
        return _listing(sorted(self.schemas_by_uri.values(), key=lambda d: str(d.get("id"))))


class NotImplementedHere(Guarded, scim_views.SCIMView):
    """What the console does not do (searching every resource type at once, /Me, /Bulk): a SCIM
    error, 501 (RFC 7644 section 3.12)."""

    implemented = False

    def status_501(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _error(501, f"{request.path} is not implemented by this service provider")
