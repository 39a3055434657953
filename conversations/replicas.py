"""Read replicas: page reads on a streaming replica, never a read that could show what is gone.

``DATABASE_REPLICA_URLS`` names streaming replicas of the main database's server (settings.py
makes them the aliases ``replica_0``, ``replica_1``...). ``ReplicaRouter`` (first in
``DATABASE_ROUTERS``) sends a read to a replica only inside ``replica_reads()``, the scope the
console opens for the GET of its reading pages (console/ops/middleware.py); everything else goes
where it went before:

- writes, and any read outside the scope, go to the primary (``default``); an object read from a
  replica is saved on the primary;
- the audit log and sessions are read on the primary even inside the scope (a session made by the
  sign-in that just happened must be found);
- data keys are never read from a replica: ``KeysRouter`` keeps them in the ``keys`` database on
  the primary, and ``keystore.keys`` reads them there with its own cursor. A replica of the
  primary's server holds a copy of the keys database too; nothing here ever opens it.

Keys on the primary are not enough on their own: the pages show projections (``Block`` rows, the
redacted visible text), which a lagging replica still holds after an erasure deleted them on the
primary. So a replica serves a request only when it is **fresh**, checked at the request's first
routed read and kept for the request:

1. it has replayed the WAL up to the **fence**: an LSN of the primary kept in Redis, raised by
   every erasure (``retention/services/erase.py``, once its rows' transaction has committed) and
   by every human write (a POST of a page, the admin: console/ops/middleware.py), so a page read
   after an erasure, a revoked grant or a changed role never sees the state before it;
2. its replay delay is under ``DATABASE_REPLICA_MAX_LAG_SECONDS`` (a replica stuck or far behind
   serves nothing, even where no fence was raised: the API's ingest does not raise it).

A replica that fails either test, or cannot be asked, or a fence that cannot be read (Redis down),
sends the request to the primary: the fallback is always the primary, never a stale answer. A
missing fence (Redis restarted) is set to the primary's current LSN before any replica is used.
The replica's replay position only grows, so a position seen once is kept per process as a lower
bound: most requests cost one Redis GET and no query on the replica.

A replica that stops answering costs nothing but its share of reads. When a read of a page on
it fails (connection refused or closed, the pool's timeout, a statement cancelled by a conflict
with recovery: any database error while the request reads a replica), ``replica_read_failed``
sets the replica aside for ``_DOWN_SECONDS``, forgets what was seen of it (no "fresh" verdict is
reused for it), and marks the request, which the console then reads again on the primary
(console/ops/middleware.py). A replica set aside is asked again only by a direct connection of
its own with short timeouts (``_probe``), never through its connection pool, so no page waits
for a replica that does not answer; and it serves pages again once its pool holds a connection.

The fence is raised by every erasure whatever the erasing process's configuration (a worker
without ``DATABASE_REPLICA_URLS`` raises it too): the web processes that read replicas compare
with it, so it must not depend on the erasing process knowing of them.
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import psycopg
import redis
from django.conf import settings
from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

PRIMARY = "default"
# Read on the primary even in a replica scope: the audit log (its readers are the compliance
# role, and the sealer's and verifier's reads must see everything committed) and sessions.
_PRIMARY_ONLY_APPS = frozenset({"audit", "sessions"})
_KEY_MODELS = frozenset({("conversations", "datakey")})  # KeysRouter's
# A replica that failed its check (down, refusing, promoted) is not asked again for this long.
_DOWN_SECONDS = 5.0

# The fence as 16 hex digits, so that Redis compares two of them as strings. It expires an hour
# after its last raise: set again from the primary's position then (never lower than any erasure
# before it), so a fence left from before a restore of the primary (whose positions start lower)
# does not keep every page on the primary for ever.
FENCE_SECONDS = 60 * 60
_RAISE = """
local current = redis.call('GET', KEYS[1])
if not current or current < ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return ARGV[1]
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return current
"""

_STATUS_SQL = """
SELECT pg_is_in_recovery(),
       (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint,
       CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0.0
            ELSE EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8
       END
"""
# Where the primary has inserted WAL up to: past the commit record of every transaction that has
# returned, whether or not its commit waited for the disk (synchronous_commit=off).
_PRIMARY_LSN_SQL = "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint"


def replicas() -> list[str]:
    return list(getattr(settings, "DATABASE_REPLICAS", []))


@dataclass
class Scope:
    """One request's replica reads: off until the console turns them on (``enabled``); the
    replica chosen (or the primary) is decided at the first routed read and kept."""

    enabled: bool = True
    decided: bool = False
    alias: str = PRIMARY
    # Why: "replica", or what sent the request to the primary ("fence", "lag", "unavailable").
    outcome: str = ""
    # A read on the replica failed: the request is read again on the primary.
    failed: bool = False


_scope: ContextVar[Scope | None] = ContextVar("console_replica_scope", default=None)


@contextmanager
def replica_reads(*, enabled: bool = True) -> Iterator[Scope]:
    """Reads in this block may be served by a fresh replica. The console's middleware opens it
    disabled for every request and enables it once the route is known to be a reading page."""
    scope = Scope(enabled=enabled)
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def current_scope() -> Scope | None:
    return _scope.get()


class ReplicaRouter:
    """First in ``DATABASE_ROUTERS``: answers for replica reads and for objects read from a
    replica, leaves everything else to the next router (``KeysRouter``) and Django."""

    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        label = (model._meta.app_label, model._meta.model_name)
        if label in _KEY_MODELS:
            return None
        scope = _scope.get()
        if scope is not None and scope.enabled and label[0] not in _PRIMARY_ONLY_APPS:
            return _decide(scope)
        return self._off_replica(hints)

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        return self._off_replica(hints)

    def _off_replica(self, hints: dict[str, Any]) -> str | None:
        # Django would follow an instance read from a replica back to it (related managers,
        # save()): writes, and reads outside the scope, go to the primary instead.
        instance = hints.get("instance")
        db = getattr(getattr(instance, "_state", None), "db", None)
        return PRIMARY if db is not None and db in replicas() else None

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        family = {PRIMARY, *replicas()}
        if obj1._state.db in family and obj2._state.db in family:
            return True  # the same rows, read on the primary or a copy of it
        return None

    def allow_migrate(
        self, db: str, app_label: str, model_name: str | None = None, **hints: Any
    ) -> bool | None:
        return False if db in replicas() else None


# --- freshness ---------------------------------------------------------------------------------


@dataclass
class _Seen:
    lsn: int = -1  # replayed at least this far (a lower bound: it only grows)
    lag: float = float("inf")  # the replay delay measured at ``at``
    at: float = 0.0  # time.monotonic() of the measure
    down_until: float = 0.0
    # Set aside after a failure: asked by ``_probe`` (not through the pool) until it answers and
    # its pool holds a connection again.
    aside: bool = False


_seen: dict[str, _Seen] = {}


def _decide(scope: Scope) -> str:
    if not scope.decided:
        scope.decided = True
        scope.alias, scope.outcome = _choose()
    return scope.alias


def _choose() -> tuple[str, str]:
    aliases = replicas()
    if not aliases:
        return PRIMARY, "none"
    fence = fence_get()
    if fence is None:
        return PRIMARY, "unavailable"
    outcome = "unavailable"
    for alias in random.sample(aliases, len(aliases)):
        verdict = _fresh(alias, fence)
        if verdict == "replica":
            return alias, "replica"
        if verdict != "unavailable":
            outcome = verdict
    return PRIMARY, outcome


def _fresh(alias: str, fence: int) -> str:
    """``replica`` when ``alias`` has replayed up to ``fence`` with a delay under the bound;
    else why not: ``fence``, ``lag`` or ``unavailable``."""
    now = time.monotonic()
    seen = _seen.setdefault(alias, _Seen())
    if seen.down_until > now:
        return "unavailable"
    max_lag = float(settings.DATABASE_REPLICA_MAX_LAG_SECONDS)
    if not seen.aside and seen.lsn >= fence and seen.lag + (now - seen.at) <= max_lag:
        return "replica"
    try:
        if seen.aside:
            in_recovery, lsn, lag = _probe(alias)
            if not _pool_ready(alias):
                seen.down_until = now + _DOWN_SECONDS / 5
                return "unavailable"
            seen.aside = False
        else:
            with connections[alias].cursor() as cur:
                cur.execute(_STATUS_SQL)
                in_recovery, lsn, lag = cur.fetchone()
    except (DatabaseError, psycopg.Error):
        logger.warning("replica %s cannot be asked for its replay position", alias, exc_info=True)
        _set_aside(alias)
        return "unavailable"
    if not in_recovery or lsn is None:
        # A promoted replica follows the primary no longer; a server that is no replica at all
        # was named by mistake.
        logger.warning("%s is not a replica in recovery: not used for reads", alias)
        seen.down_until = now + _DOWN_SECONDS
        return "unavailable"
    seen.lsn = max(seen.lsn, int(lsn))
    seen.lag = float("inf") if lag is None else float(lag)
    seen.at = now
    if seen.lsn < fence:
        return "fence"
    if seen.lag > max_lag:
        return "lag"
    return "replica"


def _probe(alias: str) -> tuple[bool, int | None, float | None]:
    """The replica's status over a connection of its own (not its pool), with short timeouts:
    a replica set aside is asked without making a page wait on its pool."""
    s = connections[alias].settings_dict
    with psycopg.connect(
        host=s["HOST"] or None,
        port=s["PORT"] or None,
        user=s["USER"] or None,
        password=s["PASSWORD"] or None,
        dbname=s["NAME"],
        connect_timeout=1,
        options="-c statement_timeout=1000",
        autocommit=True,
    ) as conn:
        row = conn.execute(_STATUS_SQL).fetchone()
    assert row is not None
    return bool(row[0]), row[1], row[2]


def _pool_ready(alias: str) -> bool:
    """Without a pool: yes. With one: it holds a connection now (after an outage it reconnects
    on its own schedule; until then a page would wait for it)."""
    pool = getattr(connections[alias], "pool", None)
    if pool is None or pool.closed:  # none, or not opened yet: its first page opens it
        return True
    return int(pool.get_stats().get("pool_available", 0)) > 0


def _set_aside(alias: str) -> None:
    seen = _seen.setdefault(alias, _Seen())
    seen.down_until = time.monotonic() + _DOWN_SECONDS
    seen.aside = True
    seen.at, seen.lag = 0.0, float("inf")  # no verdict of before is reused


def replica_read_failed(exc: BaseException | None) -> bool:
    """A database error while this request read its replica (connection refused or closed, a
    pool timeout, a statement cancelled by a conflict with recovery): the replica is set aside,
    its connection closed, and the request marked ``failed`` for the console to read it again on
    the primary. True when it was such a read."""
    scope = _scope.get()
    if scope is None or not scope.decided or scope.alias == PRIMARY or scope.failed:
        return False
    if not isinstance(exc, DatabaseError | psycopg.Error):
        return False
    logger.warning("replica %s failed a read: the page is read on the primary", scope.alias)
    _set_aside(scope.alias)
    with contextlib.suppress(Exception):
        connections[scope.alias].close()
    scope.failed = True
    return True


# --- the fence ---------------------------------------------------------------------------------


@cache
def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)


def _fence_key() -> str:
    return f"{settings.OPS_KEY_PREFIX}:replica-fence"


def _primary_lsn() -> int:
    with connections[PRIMARY].cursor() as cur:
        cur.execute(_PRIMARY_LSN_SQL)
        return int(cur.fetchone()[0])


def fence_get() -> int | None:
    """The fence: an LSN every replica must have replayed before it serves a page. None when
    Redis cannot be asked (no replica is used then). Missing (Redis lost it): set to the
    primary's current position, which is past every erasure that came before."""
    client = _redis(settings.REDIS_URL)
    try:
        value = client.get(_fence_key())
        if value is None:
            client.set(_fence_key(), f"{_primary_lsn():016x}", nx=True, ex=FENCE_SECONDS)
            value = client.get(_fence_key())
    except (redis.RedisError, DatabaseError):
        logger.warning("the replicas' fence cannot be read: pages read the primary", exc_info=True)
        return None
    return int(cast(bytes, value), 16) if value is not None else None


def replica_fence_raise() -> None:
    """Raise the fence to the primary's current WAL position: from now on a page is read on a
    replica only once it has replayed everything committed so far. Called after an erasure's
    transaction commits and after every human write, whether or not this process reads replicas
    itself: the web processes that do compare with it (an erasure in a worker configured without
    ``DATABASE_REPLICA_URLS`` once left erased conversations readable on a lagging replica).
    Never raises: a fence that could not be raised is logged, and a replica further behind than
    ``DATABASE_REPLICA_MAX_LAG_SECONDS`` serves nothing anyway."""
    try:
        lsn = _primary_lsn()
        _redis(settings.REDIS_URL).eval(_RAISE, 1, _fence_key(), f"{lsn:016x}", str(FENCE_SECONDS))
    except (redis.RedisError, DatabaseError):
        logger.error("the replicas' fence could not be raised", exc_info=True)
