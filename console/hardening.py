"""The site's guards against hostile input and for pages that carry transcripts.

- ``HostileInputMiddleware``: a NUL in the path or in a query string (a name or a value) is a 400
  before any view runs (PostgreSQL text cannot hold one, so a filter on it would be a 500: the
  admin's ``?queue=%00``, the API's ``/conversations/a%00b/messages``). Under ``/api/`` the 400
  has the API's error shape.
- ``api_not_found``: every path under ``/api/`` that no view answers (an unknown path, a trailing
  slash, a malformed id) is a JSON 404 in the error shape, not the HTML page.
- ``SlidingSessionMiddleware``: a signed-in session's 8 hours start again with use.
- ``NoStoreMiddleware``: ``Cache-Control: no-store, private`` on every page of a signed-in user
  (they show conversation data: transcripts, the list, the audit log, the admin) and on every API
  answer, so neither a browser nor a proxy keeps a copy.
- ``client_address``: the one address a request is counted by (the login throttle, the share
  pages' rate limit): the TCP peer, unless the peer is a proxy ``FORWARDED_ALLOW_IPS`` names.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Callable
from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.handlers.cache import AxesCacheHandler
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.views.decorators.csrf import csrf_exempt

from conversations import bounds
from conversations.cache_errors import CACHE_ERRORS

from .people.oidc import login_context

API_PREFIX = "/api/"


def error_response(
    status: int, error: str, detail: str, field: str | None = None, at: str | None = None
) -> JsonResponse:
    return JsonResponse({"error": error, "detail": detail, "field": field, "at": at}, status=status)


def _nul_in_query(request: HttpRequest) -> str | None:
    """The name of the first query parameter holding a NUL (in its name or a value)."""
    for name, values in request.GET.lists():
        for value in [name, *values]:
            try:
                bounds.check_text(value)
            except bounds.OutOfBounds:
                return name.replace("\x00", "\\u0000")
    return None


class HostileInputMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        api = request.path.startswith(API_PREFIX)
        if "\x00" in request.path:
            if api:
                return error_response(
                    400, "invalid_string", "the path contains a NUL character", "path", "$"
                )
            return HttpResponse("The path contains a NUL character.", status=400)
        name = _nul_in_query(request)
        if name is not None:
            detail = f"the query parameter {name!r} contains a NUL character"
            if api:
                return error_response(400, "invalid_string", detail, name)
            return HttpResponse(detail, status=400, content_type="text/plain")
        return self.get_response(request)


@csrf_exempt  # a POST to no endpoint is a 404, not the CSRF page
def api_not_found(request: HttpRequest) -> JsonResponse:
    """The answer for a path under /api/ that no view takes (any method)."""
    return error_response(404, "not_found", f"no API endpoint at {request.path}")


class NoStoreMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if request.path.startswith(settings.STATIC_URL or "/static/"):
            return response
        if request.path.startswith(API_PREFIX) or (user is not None and user.is_authenticated):
            patch_cache_control(response, no_store=True, private=True)
        return response


def _trusted(address: str) -> bool:
    allowed = settings.FORWARDED_ALLOW_IPS
    return "*" in allowed or address in allowed


def _address(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value.strip().strip("[]")))
    except ValueError:
        return None


def client_address(request: HttpRequest) -> str:
    """The client's address: the TCP peer (``REMOTE_ADDR``); when the peer is a proxy that
    ``FORWARDED_ALLOW_IPS`` names, the right-most ``X-Forwarded-For`` hop that is not such a
    proxy (what the proxy saw; hops further left are whatever the client wrote). The same rule
    uvicorn applies with ``--forwarded-allow-ips`` (console/ops/serve.py), so under uvicorn,
    which has already replaced the peer, and under gunicorn, which has not, the answer is the
    same; with the setting empty (the default), ``X-Forwarded-For`` counts for nothing."""
    peer = request.META.get("REMOTE_ADDR", "") or ""
    if not settings.FORWARDED_ALLOW_IPS or not _trusted(peer):
        return peer
    hops = [h for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            return peer  # a hop that is not an address: the header is not to be believed
        if not _trusted(address):
            return address
    return _address(hops[0]) or peer if hops else peer


class ThrottledLoginBackend(AxesStandaloneBackend):
    """django-axes' check before the password backends. A call without a request (the test
    client's ``login``, a shell) has no address to count by and is left to the next backend."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


LOCKED_OUT = (
    "Too many failed sign-ins. Sign-in is paused for this account from your address; "
    "try again later, or ask an administrator."
)


def locked_out(
    request: HttpRequest, credentials: Any = None, *args: Any, **kwargs: Any
) -> HttpResponse:
    """The lock-out answer (django-axes' AXES_LOCKOUT_CALLABLE): the sign-in page with one
    sentence, 429. It is the same for a username that exists and one that does not (axes counts
    failures by the name typed, whether or not anyone has it), and the password is not checked."""
    context = {**login_context(request), "locked": LOCKED_OUT, "next": ""}
    return render(request, "registration/login.html", context, status=429)


RENEWED = "_renewed_at"


class SlidingSessionMiddleware:
    """A session that slides: a signed-in user's session is renewed (saved again, so its expiry
    and the cookie's start from now: ``SESSION_COOKIE_AGE``, 8 hours) once at least
    ``SESSION_RENEW_SECONDS`` have passed since the last renewal. Like
    ``SESSION_SAVE_EVERY_REQUEST``, without a session write on every page (the pages' pinned query
    counts, bench/console_load.py): an idle console signs out 8 hours after its last use, give or
    take those seconds."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if request.path.startswith(API_PREFIX) or user is None or not user.is_authenticated:
            return response
        session = getattr(request, "session", None)
        if session is None or session.is_empty():
            return response
        now = int(time.time())
        renewed = session.get(RENEWED)
        # A session from before this rule has no mark: renewed (once) now.
        if not isinstance(renewed, int) or now - renewed >= settings.SESSION_RENEW_SECONDS:
            session[RENEWED] = now
        return response


def mark_renewed(sender: Any, request: HttpRequest, user: Any, **kwargs: Any) -> None:
    """At login (user_logged_in): the session was just made, its 8 hours start now."""
    session = getattr(request, "session", None)
    if session is not None:
        session[RENEWED] = int(time.time())


log = logging.getLogger(__name__)


class RedisTolerantAxesHandler(AxesCacheHandler):
    """django-axes counting failed sign-ins in the cache, as before, except that a cache that
    does not answer (Redis down) no longer makes every sign-in a 500: while it is down, failures
    cannot be counted (logged, and the sign-in goes on against the database's passwords), and a
    successful sign-in has no count to reset. The cache is an optimisation everywhere else too
    (conversations/cache_errors.py)."""

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        try:
            return int(super().get_failures(request, credentials))
        except CACHE_ERRORS:
            log.warning("login throttling: the cache does not answer; failures not counted")
            return 0

    def user_login_failed(
        self, sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any
    ) -> None:
        try:
            super().user_login_failed(sender, credentials, request, **kwargs)
        except CACHE_ERRORS:
            log.warning("login throttling: the cache does not answer; a failure not counted")

    def user_logged_in(self, sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
        try:
            super().user_logged_in(sender, request, user, **kwargs)
        except CACHE_ERRORS:
            log.warning("login throttling: the cache does not answer; no count to reset")
