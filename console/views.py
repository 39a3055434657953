"""Pages of the console. Presentation only: permissions, selectors and services decide.

Access: ``conversations.permissions`` says who sees which queue; a conversation one may not see
is a 404, like a missing one. Every page that shows conversations writes its audit row in the
transaction of the read (``audit.record``).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

import audit
from conversations.models import Conversation
from conversations.permissions import (
    access_conversation,
    can_read_conversations,
    visible_conversations,
)
from conversations.selectors import FLAGS, conversation_list, conversation_page

from .forms import ConversationFilterForm


def _require_reader(request: HttpRequest) -> None:
    if not can_read_conversations(request.user):
        raise Http404


@login_required
@transaction.atomic
def home(request: HttpRequest) -> HttpResponse:
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
    return render(request, "console/conversation.html", {"page": page})
