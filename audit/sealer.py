"""The sealer: chains committed audit rows, exactly once, in an order it records, and signs each
batch with a digest.

``record()`` appends rows without a lock shared by writers, so rows commit in any order: a page
whose transaction began first may commit after rows with higher ids. The sealer must never skip
such a row, and never seal one twice.

How a batch is sealed (one transaction, ``seal_batch``):

1. Only one sealer works at a time: ``pg_try_advisory_xact_lock`` on a key that only sealers take
   (a second sealer, e.g. a doubled beat, finds it taken and returns). No request ever waits on it.
2. The horizon: the oldest transaction of *this* database that is still running, taken from the
   statement's own snapshot (``pg_current_snapshot()``: its ``xmax`` and in-progress ``xip``
   list). Every row whose ``xid`` is below the horizon was written by a transaction that has
   finished: it is committed and visible, or it was rolled back and never will be. A transaction
   still running cannot add a row below the horizon, because its own ``xid`` is at or above it.
   In-progress transactions of other databases on the same server (the keys database, another
   project) and of autovacuum are left out when ``pg_stat_activity`` shows them, so a long
   transaction elsewhere does not hold up the log; an in-progress transaction it cannot place
   counts as this database's (it only delays sealing).
3. The rows after the frontier (the last sealed row's ``(xid, id)``, kept in the last digest) and
   below the horizon, in ``(xid, id)`` order, up to ``batch_size``: each gets the next position,
   its ``event_hash``, and a seal hash chained to the one before.
4. A digest closes the batch: its positions, the last seal's hash, the new frontier, the previous
   digest's hash, its own hash, and an HMAC signature of that hash (``hashing.digest_signature``).
5. Once the batch has committed, its digest head is appended to the witness outside the database
   (``AUDIT_WITNESS``, witness.py), so that a log cut short or emptied by the database's owner no
   longer verifies.

A crash anywhere in a batch rolls the whole batch back: its seals and its digest are written in
one transaction, and ``AuditSeal.event_id`` is unique, so the next run seals the same rows once.

Run by the beat entry ``audit-seal`` (console/celery.py, every ``AUDIT_SEAL_INTERVAL_SECONDS``)
and by ``manage.py seal_audit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connections, router, transaction
from django.db.backends.utils import CursorWrapper

from .hashing import EVENT_FIELDS, GENESIS, digest_hash, digest_signature, event_hash, seal_hash
from .models import DIGEST_TABLE, TABLE, AuditDigest, AuditEvent, AuditSeal
from .witness import witness_append

__all__ = ["SealLag", "SealReport", "horizon", "seal_batch", "seal_lag", "seal_pending"]

# pg_try_advisory_xact_lock key: b"auditsea" as a bigint. Taken by sealers only.
SEAL_LOCK_KEY = 0x6175646974736561
BATCH_SIZE = 5000

# One statement, one snapshot: xmax, the in-progress xids, and the xids pg_stat_activity says
# cannot write an audit row: other databases' sessions, and autovacuum (its ANALYZE takes a
# transaction id to update the statistics, and would hold the log back for as long as it runs).
_HORIZON_SQL = """
SELECT pg_snapshot_xmax(s)::text::bigint,
       ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(s) AS x),
       ARRAY(SELECT backend_xid::text::bigint FROM pg_stat_activity
             WHERE backend_xid IS NOT NULL
               AND (datname IS DISTINCT FROM current_database()
                    OR backend_type = 'autovacuum worker'))
FROM pg_current_snapshot() AS s
"""

_PENDING_SQL = (
    f"SELECT {', '.join(EVENT_FIELDS)} FROM {TABLE} "  # noqa: S608 (constants)
    "WHERE (xid, id) > (%s, %s) AND xid < %s ORDER BY xid, id LIMIT %s"
)

_LAST_DIGEST_SQL = (
    f"SELECT last_position, hash, frontier_xid, frontier_event_id FROM {DIGEST_TABLE} "  # noqa: S608
    "ORDER BY id DESC LIMIT 1"
)

_NEXT_DIGEST_SQL = (
    f"SELECT nextval(pg_get_serial_sequence('{DIGEST_TABLE}', 'id')), clock_timestamp()"
)


# How far ``seal_lag`` looks past the frontier: when more rows than this wait, the sealer is far
# behind whatever their exact count or age, and the answer must stay cheap (/readyz asks often).
LAG_SCAN_ROWS = 10_000
LAG_COUNT_CAP = 1_000_000

_LAG_OLDEST_SQL = (
    "SELECT EXTRACT(EPOCH FROM clock_timestamp() - min(at))::float8 FROM ("  # noqa: S608
    f"SELECT at FROM {TABLE} WHERE (xid, id) > (%s, %s) ORDER BY xid, id LIMIT %s) AS waiting"
)
_LAG_COUNT_SQL = (
    "SELECT count(*) FROM ("  # noqa: S608
    f"SELECT 1 FROM {TABLE} WHERE (xid, id) > (%s, %s) ORDER BY xid, id LIMIT %s) AS waiting"
)


@dataclass(frozen=True)
class SealLag:
    """Committed audit rows the sealer has not chained yet: how long the oldest has waited
    (among the first ``LAG_SCAN_ROWS`` in sealing order; 0 when none waits) and, when counted,
    how many (up to ``LAG_COUNT_CAP``)."""

    seconds: float
    rows: int | None = None


def seal_lag(*, count: bool = False) -> SealLag:
    """The sealer's lag, from the frontier of the last digest: two index scans, no lock."""
    with connections[_alias()].cursor() as cursor:
        cursor.execute(_LAST_DIGEST_SQL)
        last = cursor.fetchone()
        frontier = (last[2], last[3]) if last else (-1, -1)
        cursor.execute(_LAG_OLDEST_SQL, [*frontier, LAG_SCAN_ROWS])
        oldest = cursor.fetchone()[0]
        rows = None
        if count:
            cursor.execute(_LAG_COUNT_SQL, [*frontier, LAG_COUNT_CAP])
            rows = int(cursor.fetchone()[0])
    return SealLag(seconds=max(0.0, float(oldest or 0.0)), rows=rows)


@dataclass(frozen=True)
class SealReport:
    rows: int = 0
    batches: int = 0
    busy: bool = False  # another sealer held the lock


def _alias() -> str:
    return router.db_for_write(AuditEvent) or "default"


def horizon(cursor: CursorWrapper) -> int:
    """The xid below which every transaction of this database has finished (see the module
    docstring). ``cursor``: a cursor on the audit log's database, at the start of a transaction.
    """
    cursor.execute(_HORIZON_SQL)
    xmax, in_progress, elsewhere = cursor.fetchone()
    foreign = {x & 0xFFFFFFFF for x in elsewhere}
    local = [x for x in in_progress if (x & 0xFFFFFFFF) not in foreign]
    return min([xmax, *local])


def seal_batch(*, batch_size: int = BATCH_SIZE) -> SealReport:
    """Seal up to ``batch_size`` rows in one transaction. ``rows`` is 0 when nothing was ready.
    Once it has committed, the batch's digest head is appended to the witness (witness.py)."""
    alias = _alias()
    report, head = _seal_batch(alias, batch_size)
    if head is not None:
        witness_append(database=connections[alias].settings_dict["NAME"], **head)
    return report


def _seal_batch(alias: str, batch_size: int) -> tuple[SealReport, dict[str, Any] | None]:
    with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [SEAL_LOCK_KEY])
        if not cursor.fetchone()[0]:
            return SealReport(busy=True), None
        below = horizon(cursor)
        cursor.execute(_LAST_DIGEST_SQL)
        last = cursor.fetchone()
        position, prev_digest, frontier_xid, frontier_id = last or (0, GENESIS, -1, -1)
        cursor.execute(_PENDING_SQL, [frontier_xid, frontier_id, below, batch_size])
        rows = [dict(zip(EVENT_FIELDS, values, strict=True)) for values in cursor.fetchall()]
        if not rows:
            return SealReport(), None
        cursor.execute(_NEXT_DIGEST_SQL)
        digest_id, sealed_at = cursor.fetchone()
        prev_seal = (
            AuditSeal.objects.using(alias)
            .filter(position=position)
            .values_list("hash", flat=True)
            .first()
        ) or GENESIS
        first_position = position + 1
        seals = []
        for row in rows:
            position += 1
            h = event_hash(row)
            link = seal_hash(position=position, event_hash=h, prev_hash=prev_seal)
            seals.append(
                AuditSeal(
                    position=position,
                    event_id=row["id"],
                    event_hash=h,
                    prev_hash=prev_seal,
                    hash=link,
                    digest_id=digest_id,
                )
            )
            prev_seal = link
        AuditSeal.objects.using(alias).bulk_create(seals, batch_size=1000)
        digest = {
            "id": digest_id,
            "sealed_at": sealed_at,
            "first_position": first_position,
            "last_position": position,
            "rows": len(seals),
            "last_seal_hash": prev_seal,
            "frontier_xid": rows[-1]["xid"],
            "frontier_event_id": rows[-1]["id"],
            "prev_hash": prev_digest,
        }
        own = digest_hash(digest)
        AuditDigest.objects.using(alias).create(**digest, hash=own, signature=digest_signature(own))
    return SealReport(rows=len(seals), batches=1), {"digest": digest, "own_hash": own}


def seal_pending(*, batch_size: int = BATCH_SIZE, max_batches: int | None = None) -> SealReport:
    """Seal everything that is ready, batch after batch (each its own transaction)."""
    rows = batches = 0
    while max_batches is None or batches < max_batches:
        report = seal_batch(batch_size=batch_size)
        if report.busy:
            return SealReport(rows=rows, batches=batches, busy=True)
        rows += report.rows
        batches += report.batches
        if report.rows < batch_size:
            break
    return SealReport(rows=rows, batches=batches)
