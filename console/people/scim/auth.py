"""Who may call SCIM: a service token of scope ``scim``. django-scim2 imports this check while it
defines its views, so it imports nothing of the package's other modules."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django_scim import constants
from django_scim.middleware import SCIMAuthCheckMiddleware
from rest_framework import exceptions as drf_exceptions

from conversations.api.auth import ServiceTokenAuthentication
from conversations.models import ServiceToken


def scim_error(status: int, detail: str, scim_type: str | None = None) -> HttpResponse:
    """A SCIM error response (RFC 7644 section 3.12: the status as a string)."""
    body: dict[str, Any] = {"schemas": [constants.SchemaURI.ERROR], "detail": detail}
    body["status"] = str(status)
    if scim_type:
        body["scimType"] = scim_type
    return HttpResponse(json.dumps(body), content_type=constants.SCIM_CONTENT_TYPE, status=status)


class ScimTokenCheck(SCIMAuthCheckMiddleware):
    """A service token of scope ``scim`` (401 without a valid one, 403 for another scope). The
    token is the actor of every audit row the request writes."""

    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        try:
            found = ServiceTokenAuthentication().authenticate(request)
        except drf_exceptions.AuthenticationFailed as exc:
            return self._unauthorized(str(exc.detail))
        if found is None:
            return self._unauthorized("send Authorization: Bearer <a service token of scope scim>")
        token = found[0]
        if token.scope != ServiceToken.Scope.SCIM:
            return scim_error(403, f"this token's scope ({token.scope}) does not open SCIM")
        request.scim_token = token  # type: ignore[attr-defined]
        return None

    def _unauthorized(self, detail: str) -> HttpResponse:
        response = scim_error(401, detail)
        response["WWW-Authenticate"] = 'Bearer realm="scim"'
        return response


def actor_of(request: Any) -> Any:
    return getattr(request, "scim_token", None)
