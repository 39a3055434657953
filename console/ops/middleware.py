"""``OpsMiddleware``, first in ``MIDDLEWARE``: the operators' paths, request ids, request metrics
and the replica scope of the reading pages.

1. ``/healthz``, ``/readyz`` and ``/metrics`` are answered here, before ``SecurityMiddleware``
   and ``CommonMiddleware``: a load balancer's probe or a Prometheus scrape addresses the process
   by its own address (not in ``ALLOWED_HOSTS``) and over plain HTTP (``SECURE_SSL_REDIRECT``).
   No session, no user, no template.
2. Every request gets an id: the ``X-Request-ID`` a proxy sent (1-64 characters of
   ``[A-Za-z0-9._:-]``) or a fresh one, on every log record written meanwhile and on the answer.
3. Every answer is timed and counted per route *name* (``conversation-detail``, never the path,
   which holds ids and share tokens) and per method (a method it does not know is ``other``:
   labels are fixed words, so no client can grow the scrape), and the ingest endpoints' outcomes
   are counted from their answers (``metrics.count_api_answer``).
4. With read replicas configured: the GET of a reading page (``READING_PAGES``) runs in
   ``replica_reads()``, so the router may serve it from a fresh replica; a human write (any other
   method, on any route but the chat backend's ingest) raises the replicas' fence once answered,
   so the next page read waits for a replica that has replayed it. A page whose read on the
   replica failed (the replica stopped answering, or cancelled a statement for a conflict with
   recovery: ``replica_read_failed``, told by Django's ``got_request_exception``) is read again,
   once, on the primary: the person sees the page, not a 500.
"""

from __future__ import annotations

import logging
import re
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.core.signals import got_request_exception
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from conversations.replicas import (
    replica_fence_raise,
    replica_read_failed,
    replica_reads,
    replicas,
)

from . import health, logs, metrics

logger = logging.getLogger("console.request")

ENDPOINTS: dict[str, tuple[str, Callable[[HttpRequest], HttpResponse]]] = {
    "/healthz": ("healthz", health.healthz),
    "/readyz": ("readyz", health.readyz),
    "/metrics": ("metrics", metrics.metrics_view),
}
# The pages whose GET may be read on a replica: they only read (and write their audit row, on the
# primary). The API is not among them: the chat backend reads back what it has just written.
READING_PAGES = frozenset(
    {
        "home",
        "conversation-detail",
        "conversation-call",
        "conversation-export",
        "live-now",
        "share-page",
        "signals",
        "signals-model",
        "signals-alert",
        "signals-readiness",
    }
)
# Writes that raise no fence: the chat backend's, thousands a second, adding data rather than
# taking any away (an erasure raises its own).
INGEST_ROUTES = frozenset({"api-exchange-create", "api-live-chunks", "api-conversation-events"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The methods the metrics and the log name; any other (a client may send any token, in any case,
# of any length, and uvicorn passes it on) is counted as "other", so no client can add series.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def _request_id(request: HttpRequest) -> str:
    given = request.headers.get("X-Request-ID", "")
    return given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


def method_label(request: HttpRequest) -> str:
    """The request's method as a label: one of ``KNOWN_METHODS`` or ``other``."""
    method = request.method or ""
    return method if method in KNOWN_METHODS else "other"


def _route_of(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    return match.view_name if match is not None else "unmatched"


def _reading_page(request: HttpRequest) -> bool:
    if request.method not in ("GET", "HEAD"):
        return False
    try:
        return resolve(request.path_info).view_name in READING_PAGES
    except Resolver404:
        return False


class OpsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = _request_id(request)
        token = logs.request_id.set(request_id)
        started = time.perf_counter()
        try:
            endpoint = ENDPOINTS.get(request.path_info)
            if endpoint is not None:
                route, view = endpoint
                response = view(request)
            else:
                response, route = self._page(request)
            seconds = time.perf_counter() - started
            method = method_label(request)
            metrics.REQUEST_SECONDS.labels(route, method).observe(seconds)
            metrics.RESPONSES.labels(route, method, str(response.status_code)).inc()
            metrics.count_api_answer(route, response)
            response["X-Request-ID"] = request_id
            logger.info(
                "%s %s %s",
                method,
                route,
                response.status_code,
                extra={
                    "method": method,
                    "route": route,
                    "status": response.status_code,
                    "duration_ms": round(seconds * 1000, 1),
                },
            )
            return response
        finally:
            logs.request_id.reset(token)

    def _page(self, request: HttpRequest) -> tuple[HttpResponse, str]:
        if not replicas():
            response = self.get_response(request)
            return response, _route_of(request)
        with replica_reads(enabled=_reading_page(request)) as scope:
            response = self.get_response(request)
        if scope.failed:
            # A read on the replica failed (the request's error response is dropped): the same
            # GET again, every read on the primary.
            response.close()
            metrics.REPLICA_PAGES.labels("failed").inc()
            with replica_reads(enabled=False):
                response = self.get_response(request)
            return response, _route_of(request)
        route = _route_of(request)
        if scope.decided:
            metrics.REPLICA_PAGES.labels(scope.outcome).inc()
        if (
            request.method not in SAFE_METHODS
            and route not in INGEST_ROUTES
            and response.status_code < 400
        ):
            replica_fence_raise()
        return response, route


def _replica_read_failed(sender: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
    """Django converts an exception raised below ``OpsMiddleware`` into a 500 response and sends
    this signal while handling it: a database error of a replica read marks the request."""
    replica_read_failed(sys.exc_info()[1])


got_request_exception.connect(_replica_read_failed, dispatch_uid="console.ops.replica_read_failed")
