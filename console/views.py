"""Pages of the console. Presentation only: permissions, selectors and services decide.

Access: ``conversations.permissions`` says who sees which queue; a conversation one may not see
is a 404, like a missing one. Every page that shows conversations writes its audit row in the
transaction of the read (``audit.record``).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

import audit
from audit.selectors import AuditFilters, audit_events
from conversations.models import Conversation
from conversations.permissions import (
    access_conversation,
    can_read_conversations,
    is_compliance,
    visible_conversations,
)
from conversations.reviews import review_grant_live
from conversations.selectors import FLAGS, conversation_list, conversation_page

from .forms import AuditFilterForm, ConversationFilterForm


def _require_reader(request: HttpRequest) -> None:
    if not can_read_conversations(request.user):
        raise Http404


@login_required
@transaction.atomic
def home(request: HttpRequest) -> HttpResponse:
    if not can_read_conversations(request.user) and is_compliance(request.user):
        return redirect("audit-log")  # compliance staff start at the audit log
    _require_reader(request)
    form = ConversationFilterForm(request.GET)
    rows: list[Conversation] = []
    next_cursor: str | None = None
    if form.is_valid():
        filters = form.filters()
        rows, next_cursor = conversation_list(visible_conversations(request.user), filters)
        # The log names which filters were used, never their values (customer ids are external).
        used = sorted(name for name in form.changed_data if name not in ("q", "after"))
        if filters.q:
            audit.record(
                "conversation.searched",
                actor=request.user,
                query_hash=audit.query_hash(filters.q),
                filters=used,
                results=len(rows),
                page="list",
            )
        else:
            audit.record(
                "conversation.listed",
                actor=request.user,
                filters=used,
                results=len(rows),
                page="list",
            )
    next_query = None
    if next_cursor:
        params = request.GET.copy()
        params["after"] = next_cursor
        next_query = params.urlencode()
    return render(
        request,
        "console/home.html",
        {"form": form, "conversations": rows, "next_query": next_query, "flags": FLAGS},
    )


@login_required
@transaction.atomic
def conversation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    _require_reader(request)
    conversation = access_conversation(request.user, pk)
    page = conversation_page(
        conversation,
        can_see_restricted=request.user.has_perm("conversations.view_restricted_fields"),
    )
    audit.record(
        "conversation.viewed", actor=request.user, conversation_id=conversation.pk, page="detail"
    )
    can_review = review_grant_live(user=request.user, conversation_id=conversation.pk) is not None
    return render(request, "console/conversation.html", {"page": page, "can_review": can_review})


def require_auditor(request: HttpRequest) -> None:
    """Compliance pages are 404 to everyone but compliance staff and admins."""
    if not is_compliance(request.user):
        raise Http404


@login_required
@transaction.atomic
def audit_log(request: HttpRequest) -> HttpResponse:
    """Compliance staff browse the audit log, newest first, with filters; 100 rows a page."""
    require_auditor(request)
    form = AuditFilterForm(request.GET)
    rows: list[Any] = []
    older: str | None = None
    if form.is_valid():
        data = form.cleaned_data
        tz = timezone.get_current_timezone()
        actor = None
        if data["actor"]:
            users = get_user_model().objects.filter(username=data["actor"])
            actor = users.values_list("pk", flat=True).first() or -1  # unknown: no rows
        filters = AuditFilters(
            code=data["code"] or None,
            actor_id=actor,
            conversation_id=data["conversation"],
            subject=data["subject"] or None,
            since=datetime.combine(data["since"], time.min, tz) if data["since"] else None,
            until=(
                datetime.combine(data["until"] + timedelta(days=1), time.min, tz)
                if data["until"]
                else None
            ),
        )
        qs = audit_events(filters)
        if data["before"]:
            qs = qs.filter(pk__lt=data["before"])
        rows = list(qs[:101])
        if len(rows) > 100:
            rows = rows[:100]
            params = request.GET.copy()
            params["before"] = str(rows[-1].pk)
            older = params.urlencode()
        used = sorted(name for name in form.changed_data if name != "before")
        audit.record(
            "audit.viewed", actor=request.user, page="list", filters=used, results=len(rows)
        )
    return render(request, "console/audit.html", {"form": form, "rows": rows, "older": older})
