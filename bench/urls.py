"""The project's URLs plus the benchmarks' baselines, on the same server (``bench.settings``).

- ``POST /bench/raw`` (``bench/ingest_api.py``): the least an ingest endpoint could do through
  the same server, middleware and database: one INSERT of the request body as it came
  (autocommit: one commit, like the API's one transaction), then 201. ``bench/ingest_api.py``
  creates its table before starting the server.
- ``GET /bench/unaudited/`` and ``GET /bench/unaudited/conversations/<pk>/``
  (``bench/console_load.py``): the console's list and conversation pages served **unaudited**:
  the same access checks, the same selectors, the same template and context, but no audit row
  and no transaction (autocommit: each query commits on its own). What the audited pages cost on
  top of these is the price of the audit log on the request path.

The twin's data comes from two functions, ``list_context`` and ``conversation_context``: the
one place to change when the pages' read services land (``conversations/reads.py``): call
``conversation_list_read(...)`` / ``conversation_read(user=..., id=...)`` there with the audit
row turned off, and the twin keeps following what the audited pages read.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from console.forms import ConversationFilterForm
from conversations.permissions import (
    access_conversation,
    can_read_conversations,
    visible_conversations,
)
from conversations.reviews import review_grant_live
from conversations.selectors import FLAGS, conversation_list, conversation_page

RAW_TABLE = "bench_raw"


@csrf_exempt
@require_POST
def raw_insert(request: HttpRequest) -> HttpResponse:
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {RAW_TABLE} (body) VALUES (%s)",  # noqa: S608 (a constant)
            [request.body.decode("utf-8")],
        )
    return HttpResponse(status=201)


# --- the unaudited twin of the reading pages ----------------------------------------------------


def list_context(user: Any, query: QueryDict) -> dict[str, Any]:
    """What ``console/home.html`` renders for ``query``, read as ``console.views.home`` reads it
    (the visible conversations, the form's filters, ``conversation_list``), without its audit
    row. The swap point for ``conversation_list_read``."""
    form = ConversationFilterForm(query)
    rows: list[Any] = []
    next_query = None
    if form.is_valid():
        rows, next_cursor = conversation_list(visible_conversations(user), form.filters())
        if next_cursor:
            params = query.copy()
            params["after"] = next_cursor
            next_query = params.urlencode()
    return {"form": form, "conversations": rows, "next_query": next_query, "flags": FLAGS}


def conversation_context(user: Any, pk: int) -> dict[str, Any]:
    """What ``console/conversation.html`` renders, read as ``console.views.conversation_detail``
    reads it (404 for a conversation the user may not see), without its audit row. The swap
    point for ``conversation_read``."""
    conversation = access_conversation(user, pk)
    page = conversation_page(
        conversation, can_see_restricted=user.has_perm("conversations.view_restricted_fields")
    )
    can_review = review_grant_live(user=user, conversation_id=conversation.pk) is not None
    return {"page": page, "can_review": can_review}


@login_required
@require_GET
def unaudited_home(request: HttpRequest) -> HttpResponse:
    if not can_read_conversations(request.user):
        raise Http404
    return render(request, "console/home.html", list_context(request.user, request.GET))


@login_required
@require_GET
def unaudited_conversation(request: HttpRequest, pk: int) -> HttpResponse:
    if not can_read_conversations(request.user):
        raise Http404
    return render(request, "console/conversation.html", conversation_context(request.user, pk))


urlpatterns = [
    path("bench/raw", raw_insert, name="bench-raw"),
    path("bench/unaudited/", unaudited_home, name="bench-unaudited-home"),
    path(
        "bench/unaudited/conversations/<int:pk>/",
        unaudited_conversation,
        name="bench-unaudited-conversation",
    ),
    path("", include("console.urls")),
]
