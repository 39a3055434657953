"""Pages of the console. Presentation only: each page's data comes from one read service
(``conversations.reads``, ``retention.reads``), which checks access (404 for a page one may not
see, like a missing one), reads, and writes the audit row in its own transaction; the view
validates the query string, calls it, and renders what it returned after that transaction has
committed. No view here opens a transaction or writes to the audit log itself.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from conversations.permissions import (
    can_read_conversations,
    is_compliance,
    require_compliance,
    require_reader,
)
from conversations.reads import conversation_list_read, conversation_read
from conversations.selectors import FLAGS
from retention.reads import audit_log_read

from .forms import AuditFilterForm, ConversationFilterForm


def _with(request: HttpRequest, **params: str) -> str:
    """The current query string with ``params`` replaced: a pager's link."""
    query = request.GET.copy()
    for name, value in params.items():
        query[name] = value
    return query.urlencode()


@login_required
def home(request: HttpRequest) -> HttpResponse:
    if not can_read_conversations(request.user) and is_compliance(request.user):
        return redirect("audit-log")  # compliance staff start at the audit log
    form = ConversationFilterForm(request.GET)
    context: dict[str, Any] = {"form": form, "conversations": [], "flags": FLAGS}
    if not form.is_valid():
        require_reader(request.user)  # the form's errors only to those who may see the page
        return render(request, "console/home.html", context)
    used = [name for name in form.changed_data if name not in ("q", "after")]
    listing = conversation_list_read(user=request.user, filters=form.filters(), used=used)
    context["conversations"] = listing.rows
    if listing.next_cursor:
        context["next_query"] = _with(request, after=listing.next_cursor)
    return render(request, "console/home.html", context)


@login_required
def conversation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    view = conversation_read(user=request.user, id=pk)
    return render(
        request, "console/conversation.html", {"page": view.page, "can_review": view.can_review}
    )


def _day_start(day: date | None, *, shift: int = 0) -> datetime | None:
    """The start of ``day`` (plus ``shift`` days) in the current time zone."""
    if day is None:
        return None
    return datetime.combine(day + timedelta(days=shift), time.min, timezone.get_current_timezone())


@login_required
def audit_log(request: HttpRequest) -> HttpResponse:
    """Compliance staff browse the audit log, newest first, with filters; 100 rows a page."""
    form = AuditFilterForm(request.GET)
    context: dict[str, Any] = {"form": form, "rows": []}
    if not form.is_valid():
        require_compliance(request.user)
        return render(request, "console/audit.html", context)
    data = form.cleaned_data
    log = audit_log_read(
        user=request.user,
        code=data["code"] or None,
        actor_username=data["actor"] or None,
        conversation_id=data["conversation"],
        subject=data["subject"] or None,
        since=_day_start(data["since"]),
        until=_day_start(data["until"], shift=1),
        before=data["before"],
        used=[name for name in form.changed_data if name != "before"],
    )
    context["rows"] = log.rows
    if log.older_than is not None:
        context["older"] = _with(request, before=str(log.older_than))
    return render(request, "console/audit.html", context)
