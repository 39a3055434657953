"""Which sessions each person holds: recorded at sign-in, dropped at sign-out, ended all at once
by ``services.sessions_end`` when a person is deactivated or deleted. Rows of sessions that
expired on their own are pruned at that person's next sign-in."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from .models import PersonSession


def session_signed_in(sender: Any, request: HttpRequest, user: Any, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    if session is None or user is None or user.pk is None:
        return
    if session.session_key is None:
        session.save()
    engine = import_module(settings.SESSION_ENGINE)
    for old in PersonSession.objects.filter(user=user).exclude(session_key=session.session_key):
        if not engine.SessionStore().exists(old.session_key):
            old.delete()
    PersonSession.objects.get_or_create(session_key=session.session_key, defaults={"user": user})


def session_signed_out(sender: Any, request: HttpRequest, user: Any, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    if session is not None and session.session_key:
        PersonSession.objects.filter(session_key=session.session_key).delete()
