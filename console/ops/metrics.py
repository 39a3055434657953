"""``/metrics``: the console's figures in Prometheus' text format (prometheus-client).

Two kinds of figure, each kept where it stays right when the web runs as several processes:

- **counted in the process** (the ``Counter``/``Histogram``/``Gauge`` objects below): request
  latency per route name, exchanges and live chunks ingested and refused by error code, live
  viewers, the replica router's choices. Under uvicorn or gunicorn with several workers, set
  ``PROMETHEUS_MULTIPROC_DIR`` to an empty directory of the instance (created afresh at each
  start; docker-compose.yml does): every worker writes its values there and a scrape, whichever
  worker answers it, sums them (prometheus-client's multiprocess mode; live viewers are summed
  over the workers alive). Without it each process counts alone, which is right for one process
  (``make run``, the tests).
- **read from the stores at scrape time** (``StoreCollector``): the audit sealer's lag and its
  unsealed rows, deletion requests per state and the oldest one's age, notifications per state,
  the Celery queue's length, the beat's heartbeat. They are the same whichever process answers,
  and cost a few indexed queries per scrape. A store that cannot be read makes its figures
  absent and ``console_scrape_error{part}`` 1, never the scrape fail.

No label holds a customer, a conversation or a path: routes are URL names, codes are the API's
error codes (checked against a pattern), states are fixed words.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import time
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, cast

import redis
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from rest_framework.exceptions import AuthenticationFailed

from audit.sealer import seal_lag
from conversations.api.auth import ServiceTokenAuthentication
from conversations.models import ServiceToken
from conversations.monitoring.alerts import notification_states
from retention.selectors import deletion_queue

from ..hardening import error_response
from . import beat

logger = logging.getLogger(__name__)

# --- counted in the process ---------------------------------------------------------------------

REQUEST_SECONDS = Histogram(
    "console_http_request_duration_seconds",
    "Time to answer a request (to the first byte of a streamed answer), per route name.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
RESPONSES = Counter(
    "console_http_responses", "Answers per route name and status.", ["route", "method", "status"]
)
EXCHANGES = Counter(
    "console_exchanges_ingested",
    "POST /api/v1/exchanges answered: stored, or replayed (the same Idempotency-Key again).",
    ["result"],
)
EXCHANGES_REFUSED = Counter(
    "console_exchanges_refused", "POST /api/v1/exchanges refused, per error code.", ["code"]
)
CHUNKS = Counter(
    "console_live_chunks_ingested",
    "POST /api/v1/live/chunks accepted, per outcome (published, held, duplicate, closed...).",
    ["status"],
)
CHUNKS_REFUSED = Counter(
    "console_live_chunks_refused", "POST /api/v1/live/chunks refused, per error code.", ["code"]
)
LIVE_VIEWERS = Gauge(
    "console_live_viewers",
    "Live streams (SSE) being watched now, over the web processes alive.",
    multiprocess_mode="livesum",
)
REPLICA_PAGES = Counter(
    "console_replica_pages",
    "Reading pages per database they were read from: replica, or the primary and why (fence: "
    "the replica had not replayed the last erasure or human write; lag; unavailable; failed: a "
    "read on the replica failed and the page was read again on the primary).",
    ["outcome"],
)

_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")
_OUTCOME = re.compile(r"[a-z][a-z_]{0,19}")


def _code(value: Any) -> str:
    return value if isinstance(value, str) and _CODE.fullmatch(value) else "other"


def count_api_answer(route: str, response: HttpResponse) -> None:
    """Ingest outcomes, read from the API's answer (its error shape names the code)."""
    if route not in ("api-exchange-create", "api-live-chunks"):
        return
    data = getattr(response, "data", None)
    data = data if isinstance(data, dict) else {}
    if response.status_code >= 400:
        refused = EXCHANGES_REFUSED if route == "api-exchange-create" else CHUNKS_REFUSED
        refused.labels(_code(data.get("error"))).inc()
    elif route == "api-exchange-create":
        EXCHANGES.labels("stored" if response.status_code == 201 else "replayed").inc()
    else:
        status = data.get("status")
        known = isinstance(status, str) and _OUTCOME.fullmatch(status)
        CHUNKS.labels(status if known else "other").inc()


# --- read from the stores at scrape time --------------------------------------------------------

OPEN_STATES = ("pending", "running", "blocked", "failed")


@cache
def _broker(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)


class StoreCollector:
    """The figures the stores hold, read when scraped."""

    def collect(self) -> Iterator[Metric]:
        errors = GaugeMetricFamily(
            "console_scrape_error",
            "1 when a store could not be read for this scrape (its figures are absent).",
            labels=["part"],
        )
        for part, read in (
            ("sealer", self._sealer),
            ("deletions", self._deletions),
            ("notifications", self._notifications),
            ("celery", self._celery),
            ("beat", self._beat),
        ):
            try:
                families = list(read())
            except (DatabaseError, redis.RedisError):
                logger.warning("metrics: %s could not be read", part, exc_info=True)
                errors.add_metric([part], 1)
                continue
            errors.add_metric([part], 0)
            yield from families
        yield errors

    def _sealer(self) -> Iterable[Metric]:
        lag = seal_lag(count=True)
        yield GaugeMetricFamily(
            "console_audit_sealer_lag_seconds",
            "How long the oldest committed audit row has waited for its seal (0: none waits).",
            value=lag.seconds,
        )
        yield GaugeMetricFamily(
            "console_audit_unsealed_rows",
            "Committed audit rows not sealed yet (counted up to a million).",
            value=lag.rows or 0,
        )

    def _deletions(self) -> Iterable[Metric]:
        states = deletion_queue()
        count = GaugeMetricFamily(
            "console_deletion_requests", "Deletion requests per state.", labels=["state"]
        )
        oldest = GaugeMetricFamily(
            "console_deletion_request_oldest_age_seconds",
            "Age of the oldest deletion request in each open state (0: none).",
            labels=["state"],
        )
        now = time.time()
        for state in states:
            count.add_metric([state.status], state.requests)
            if state.status in OPEN_STATES:
                at = state.oldest_requested_at
                oldest.add_metric([state.status], now - at.timestamp() if at else 0.0)
        yield count
        yield oldest

    def _notifications(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "console_notifications",
            "Alert notifications per channel and state (sent, pending, failed: given up).",
            labels=["channel", "state"],
        )
        found = notification_states()
        for channel in ("webhook", "email"):
            for state in ("sent", "pending", "failed"):
                family.add_metric([channel, state], found.get((channel, state), 0))
        yield family

    def _celery(self) -> Iterable[Metric]:
        queue = "celery"  # Celery's default queue: every task of the project goes there
        family = GaugeMetricFamily(
            "console_celery_queue_length", "Tasks waiting in the broker's queue.", labels=["queue"]
        )
        family.add_metric([queue], cast(int, _broker(settings.CELERY_BROKER_URL).llen(queue)))
        yield family

    def _beat(self) -> Iterable[Metric]:
        age = beat.heartbeat_age()
        if age is not None:
            yield GaugeMetricFamily(
                "console_beat_heartbeat_age_seconds",
                "Seconds since the Celery beat's last heartbeat.",
                value=age,
            )


# --- the scrape ---------------------------------------------------------------------------------


class _Scrape:
    def __init__(self, *sources: Any) -> None:
        self.sources = sources

    def collect(self) -> Iterator[Metric]:
        for source in self.sources:
            yield from source.collect()


def _multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def _forget_dead_processes(directory: str) -> None:
    """A worker that died (restarted by its server) leaves its live gauges' files: drop them, so
    ``console_live_viewers`` counts the workers alive only."""
    for path in Path(directory).glob("gauge_live*_*.db"):
        try:
            pid = int(path.stem.rsplit("_", 1)[1])
            os.kill(pid, 0)
        except ValueError:
            continue
        except ProcessLookupError:
            multiprocess.mark_process_dead(pid, directory)
        except PermissionError:
            continue  # alive, someone else's


def exposition() -> bytes:
    directory = _multiprocess_dir()
    if directory:
        _forget_dead_processes(directory)
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=directory)
        return generate_latest(_Scrape(registry, StoreCollector()))
    return generate_latest(_Scrape(REGISTRY, StoreCollector()))


# --- who may read it ----------------------------------------------------------------------------


def _allowed_address(address: str) -> bool:
    try:
        peer = ipaddress.ip_address(address)
    except ValueError:
        return False
    for entry in settings.METRICS_ALLOWED_IPS:
        try:
            if peer in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            logger.error("METRICS_ALLOWED_IPS: %r is not an address or a network", entry)
    return False


def metrics_view(request: HttpRequest) -> HttpResponse:
    """The scrape: for a service token of scope ``metrics``, or a peer address in
    ``METRICS_ALLOWED_IPS``; 401 without either, 403 for a token of another scope."""
    if request.method not in ("GET", "HEAD"):
        return error_response(405, "method_not_allowed", "GET /metrics")
    try:
        found = ServiceTokenAuthentication().authenticate(request)
    except AuthenticationFailed as exc:
        return error_response(401, "authentication_failed", str(exc.detail))
    if found is not None:
        token = found[0]
        if token.scope != ServiceToken.Scope.METRICS:
            detail = f"this token's scope ({token.scope}) does not open /metrics"
            return error_response(403, "permission_denied", detail)
    elif not _allowed_address(request.META.get("REMOTE_ADDR", "")):
        response = error_response(
            401,
            "not_authenticated",
            "a service token of scope metrics is needed (or a peer address in METRICS_ALLOWED_IPS)",
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    scrape = HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
    scrape["Cache-Control"] = "no-store"
    return scrape
