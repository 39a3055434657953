"""One error shape for the API: ``{"error": code, "detail": text, "field": name, "at": path}``.

Raise ``ApiError`` anywhere below a view; DRF's own exceptions (authentication, 404, 405, 415...)
and serializer validation errors are converted to the same shape here. So is a database that
cannot answer for now (a restart, a failover, a pool that cannot get a connection, a transaction
cancelled by a conflict: Django's ``OperationalError`` and ``InterfaceError``): a 503
``unavailable`` with ``Retry-After``, which the chat backend's clients retry (every 503 here
carries it). Nothing else is caught: an unexpected exception is a bug, and a test (the Hypothesis
fuzz of the ingest endpoint) must find it.
"""

from __future__ import annotations

from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response


class ApiError(exceptions.APIException):
    def __init__(
        self,
        detail: str,
        *,
        code: str,
        field: str | None = None,
        at: str | None = None,
        status_code: int = status.HTTP_400_BAD_REQUEST,
    ) -> None:
        super().__init__(detail=detail, code=code)
        self.status_code = status_code
        self.error = code
        self.message = detail
        self.field = field
        self.at = at

    @property
    def body(self) -> dict[str, str | None]:
        return {"error": self.error, "detail": self.message, "field": self.field, "at": self.at}


def check_query(query: Any, allowed: frozenset[str] = frozenset()) -> None:
    """Query parameters are as strict as bodies: one the operation does not define is a 400
    naming it (``field``; no JSON path: it is not in a body)."""
    for name in query:
        if name not in allowed:
            takes = ", ".join(sorted(allowed)) or "none"
            raise ApiError(
                f"unknown query parameter (this operation takes: {takes})",
                code="unknown_field",
                field=name,
            )


def first_validation_error(detail: Any, path: list[str | int]) -> tuple[str, str, str, str]:
    """(code, message, field, JSON path) of the first error in a DRF ValidationError tree."""
    if isinstance(detail, dict):
        key = next(iter(detail))
        return first_validation_error(detail[key], [*path, key])
    if isinstance(detail, list):
        for i, item in enumerate(detail):
            if item:
                # a list of ErrorDetail for one field, or a list of per-item errors
                if isinstance(item, exceptions.ErrorDetail):
                    return first_validation_error(item, path)
                return first_validation_error(item, [*path, i])
    at = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    field = next((str(p) for p in path if isinstance(p, str)), None) or "body"
    if field == "non_field_errors":
        field, at = "body", "$"
    code = getattr(detail, "code", "invalid") or "invalid"
    return str(code), str(detail), field, at


# How long a client is asked to wait before it sends again what a 503 refused (a database
# restart takes about a second; the clients back off further on repeated 503s).
RETRY_AFTER_SECONDS = 1


def _retry_later(response: Response) -> Response:
    if response.status_code == status.HTTP_503_SERVICE_UNAVAILABLE:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApiError):
        return _retry_later(Response(exc.body, status=exc.status_code))
    if isinstance(exc, (OperationalError, InterfaceError)):
        down = {
            "error": "unavailable",
            "detail": "the database cannot be reached for now (a restart?): nothing was stored; "
            "send it again after Retry-After",
            "field": None,
            "at": None,
        }
        return _retry_later(Response(down, status=status.HTTP_503_SERVICE_UNAVAILABLE))
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, exceptions.ValidationError):
        code, detail, field, at = first_validation_error(exc.detail, [])
        return Response(
            {"error": code, "detail": detail, "field": field, "at": at},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
        headers = {}
        status_code: int = exc.status_code
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            headers["WWW-Authenticate"] = 'Bearer realm="api"'
            status_code = status.HTTP_401_UNAUTHORIZED
        body: dict[str, str | None] = {
            "error": code,
            "detail": str(exc.detail),
            "field": None,
            "at": None,
        }
        if isinstance(exc, exceptions.UnsupportedMediaType):
            body.update(field="Content-Type")
        return Response(body, status=status_code, headers=headers)
    return None
