"""A person's display settings: the time zone their pages show times in.

The zone is, in order: the one they chose on the settings page (``UserPreference``), else the
one their browser reports (``static/console/console.js`` keeps it in the ``console_tz`` cookie),
else the server's ``TIME_ZONE``. ``TimeZoneMiddleware`` activates it for the request and says
where it came from, so every page can name the zone its times are in.

The chosen zone is read at login and kept in the session (a page costs no query for it; a
session older than this code reads it once); changing it here updates the session that changed
it, and other sessions on their next login.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

import audit

from .models import UserPreference

COOKIE = "console_tz"
SESSION_KEY = "console_time_zone"


@lru_cache(maxsize=1)
def zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def valid_zone(name: Any) -> str | None:
    return name if isinstance(name, str) and name in zones() else None


@transaction.atomic(durable=True)
def user_preference_update(*, user: Any, time_zone: str) -> UserPreference:
    """Set (or, with "", clear: follow the browser) the zone ``user``'s pages use. Audited
    (``preference.changed``). Raises ValueError for a zone that does not exist."""
    if time_zone and valid_zone(time_zone) is None:
        raise ValueError(f"unknown time zone {time_zone!r}")
    preference, _ = UserPreference.objects.select_for_update().get_or_create(user=user)
    if preference.time_zone != time_zone:
        preference.time_zone = time_zone
        preference.save(update_fields=["time_zone", "updated_at"])
        audit.record(
            "preference.changed", actor=user, preference="time_zone", value=time_zone or None
        )
    return preference


def chosen_zone(request: HttpRequest) -> str:
    """The zone the signed-in user chose ("" for none), from the session once read."""
    cached = request.session.get(SESSION_KEY)
    if isinstance(cached, str):
        return cached
    user: Any = request.user
    chosen = (
        UserPreference.objects.filter(user=user).values_list("time_zone", flat=True).first()
    ) or ""
    request.session[SESSION_KEY] = chosen
    return chosen


def remember_zone(request: HttpRequest, zone: str) -> None:
    request.session[SESSION_KEY] = zone


def prime_on_login(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """``user_logged_in``: read the chosen zone into the new session while login writes it
    anyway, so no page pays a query or a session write for it later (connected in apps.py, like
    Django's own ``update_last_login``)."""
    if request is not None and hasattr(request, "session"):
        chosen = UserPreference.objects.filter(user=user).values_list("time_zone", flat=True)
        request.session[SESSION_KEY] = chosen.first() or ""


class TimeZoneMiddleware:
    """Activates the request's zone; ``request.time_zone`` and ``request.time_zone_source``
    ("your setting", "your browser", "the server's default") say which it is."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone, source = None, "the server's default"
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and hasattr(request, "session"):
            zone = valid_zone(chosen_zone(request))
            if zone:
                source = "your setting"
        if zone is None and (zone := valid_zone(request.COOKIES.get(COOKIE))):
            source = "your browser"
        zone = zone or settings.TIME_ZONE
        request.time_zone = zone  # type: ignore[attr-defined]
        request.time_zone_source = source  # type: ignore[attr-defined]
        timezone.activate(zoneinfo.ZoneInfo(zone))
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
