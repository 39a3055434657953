"""The project's URLs plus the benchmarks' baselines, on the same server (``bench.settings``).

- ``POST /bench/raw`` (``bench/ingest_api.py``): the least an ingest endpoint could do through
  the same server, middleware and database: one INSERT of the request body as it came
  (autocommit: one commit, like the API's one transaction), then 201. ``bench/ingest_api.py``
  creates its table before starting the server.
- ``GET /bench/unaudited/`` and ``GET /bench/unaudited/conversations/<pk>/``
  (``bench/console_load.py``): the console's list and conversation pages served **unaudited**:
  the very views of ``console.views``, with ``audit.record`` replaced for the request by a no-op
  (a sync worker serves one request at a time, so no audited request runs meanwhile). Same
  access checks, audited selectors, selectors, template and transaction; no audit row. What the
  audited pages cost on top of these is the price of the audit log on the request path, and the
  twin follows every change to the pages by construction.
- ``GET /bench/floor/`` (``bench/console.py``): the least any audited console page does, with
  none of a page's own reads: the login check (session, user), the reader check (the user's
  groups), one audit row in its own transaction, and ``base.html`` rendered. What a page costs
  above it is the page's own; what it costs against a page's SQL is the floor of ``page/SQL``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth.decorators import login_required
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

import audit
from console import views
from conversations.permissions import require_reader

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


class _NoRow:
    pk = 0


@contextmanager
def _unaudited() -> Iterator[None]:
    real = audit.record
    audit.record = lambda *args, **kwargs: _NoRow()  # type: ignore[assignment,return-value]
    try:
        yield
    finally:
        audit.record = real


@require_GET
def unaudited_home(request: HttpRequest) -> HttpResponse:
    with _unaudited():
        return views.home(request)


@require_GET
def unaudited_conversation(request: HttpRequest, pk: int) -> HttpResponse:
    with _unaudited():
        return views.conversation_detail(request, pk)


@login_required
@require_GET
def floor(request: HttpRequest) -> HttpResponse:
    require_reader(request.user)
    with transaction.atomic():
        audit.record("conversation.listed", actor=request.user, filters=[], results=0, page="list")
    return render(request, "base.html", {})


urlpatterns = [
    path("bench/floor/", floor, name="bench-floor"),
    path("bench/raw", raw_insert, name="bench-raw"),
    path("bench/unaudited/", unaudited_home, name="bench-unaudited-home"),
    path(
        "bench/unaudited/conversations/<int:pk>/",
        unaudited_conversation,
        name="bench-unaudited-conversation",
    ),
    path("", include("console.urls")),
]
