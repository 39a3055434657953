"""``/healthz`` and ``/readyz``: cheap, unauthenticated, and holding no data (names and states).

``/healthz`` answers 200 as long as the process can answer: no database, no Redis (a liveness
probe that restarts the process must not restart it for a database outage).

``/readyz`` runs the checks ``READY_CHECKS`` names, in the order of ``CHECKS``, and answers 200
when all pass, else 503 with the failing ones named (``failing``) and each check's state. A check
whose dependency failed says ``unknown`` (the beat's heartbeat is in Redis, the sealer's lag in
the database) and is not counted twice. By default only what this process needs to serve is in
(``database``, ``keys``, ``redis``): the beat's heartbeat and the sealer's lag are other
processes' health, watched through ``/metrics`` and its alerts, so one stopped clock cannot take
every web process out of the load balancer. An operator who wants them to gate traffic names
them in ``READY_CHECKS`` (docs/operations.md weighs the two).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import redis
from django.conf import settings
from django.db import DatabaseError, connections
from django.http import HttpRequest, JsonResponse

from audit.sealer import seal_lag
from conversations.keystore.routers import KEYS_DB

from . import beat

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[], str | None]  # None: fine; else a short reason, with no data in it
    needs: str | None = None  # a check whose failure makes this one unknown


def _database(alias: str) -> Callable[[], str | None]:
    def run() -> str | None:
        try:
            with connections[alias].cursor() as cur:
                cur.execute("SELECT 1")
        except DatabaseError:
            logger.warning("readiness: database %s unreachable", alias, exc_info=True)
            return "unreachable"
        return None

    return run


@cache
def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)


def _redis_ping() -> str | None:
    try:
        _redis(settings.REDIS_URL).ping()
    except redis.RedisError:
        logger.warning("readiness: Redis unreachable", exc_info=True)
        return "unreachable"
    return None


def _beat() -> str | None:
    try:
        age = beat.heartbeat_age()
    except redis.RedisError:
        return "unreachable"
    if age is None:
        return "no heartbeat"
    if age > settings.READY_BEAT_MAX_AGE_SECONDS:
        return f"last heartbeat {age:.0f} s ago"
    return None


def _sealer() -> str | None:
    try:
        lag = seal_lag()
    except DatabaseError:
        return "unreachable"
    if lag.seconds > settings.READY_SEALER_MAX_LAG_SECONDS:
        return f"behind: a committed audit row has waited {lag.seconds:.0f} s for its seal"
    return None


CHECKS: tuple[Check, ...] = (
    Check("database", _database("default")),
    Check("keys", _database(KEYS_DB)),
    Check("redis", _redis_ping),
    Check("beat", _beat, needs="redis"),
    Check("sealer", _sealer, needs="database"),
)


def readiness() -> tuple[bool, dict[str, str], list[str]]:
    """Whether every configured check passes; each check's state; the failing ones."""
    wanted = set(settings.READY_CHECKS)
    states: dict[str, str] = {}
    failing: list[str] = []
    for check in CHECKS:
        if check.name not in wanted:
            continue
        if check.needs is not None and check.needs in failing:
            states[check.name] = "unknown"
            continue
        reason = check.run()
        states[check.name] = "ok" if reason is None else reason
        if reason is not None:
            failing.append(check.name)
    return not failing, states, failing


def _json(body: dict[str, object], status: int) -> JsonResponse:
    response = JsonResponse(body, status=status)
    response["Cache-Control"] = "no-store"
    return response


def healthz(request: HttpRequest) -> JsonResponse:
    return _json({"status": "ok"}, 200)


def readyz(request: HttpRequest) -> JsonResponse:
    ready, states, failing = readiness()
    if ready:
        return _json({"status": "ready", "checks": states}, 200)
    return _json({"status": "unavailable", "failing": failing, "checks": states}, 503)
