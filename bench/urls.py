"""The project's URLs plus the API benchmark's baseline: ``POST /bench/raw``.

The baseline does the least an ingest endpoint could do through the same server, middleware and
database: one INSERT of the request body as it came (autocommit: one commit, like the API's one
transaction), then 201. ``bench/ingest_api.py`` creates its table before starting the server.
"""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

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


urlpatterns = [
    path("bench/raw", raw_insert, name="bench-raw"),
    path("", include("console.urls")),
]
