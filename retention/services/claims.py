"""Whose a running deletion request is: a PostgreSQL session-level advisory lock, held by the
worker executing it for as long as it works and released with its connection.

A claim is also written on the row (``claimed_at``, ``claim_token``), renewed per chunk; but a
date cannot tell a dead worker from a slow one, so that claim alone had to wait
``RETENTION_CLAIM_STALE_SECONDS`` before another tick could take over. The lock can: a worker
that is SIGKILLed, or loses its machine or its database connection, loses its session, and the
server releases the lock at once. So the next tick resumes a running request whose lock nobody
holds (every step of an erase is idempotent, and the claim token keeps a worker that comes back
from completing it twice). ``RETENTION_CLAIM_STALE_SECONDS`` is left for a worker that is alive
but stuck, and as the back-off after a failed attempt (which releases its claim token).

The lock needs a session that outlives the transaction: behind PgBouncer, the clock's workers
need session pooling (transaction pooling would hand the lock to another client's session).
"""

from __future__ import annotations

from django.db import connection

# pg_try_advisory_lock(int4, int4): this namespace ("retr") and the request's id.
_NAMESPACE = 0x72657472

# Whether any session holds it, and whether this one does (a session-level lock is re-entrant:
# this module takes it at most once per session, so one unlock gives it back).
_HELD_SQL = """
SELECT count(*) > 0, count(*) FILTER (WHERE pid = pg_backend_pid()) > 0 FROM pg_locks
WHERE locktype = 'advisory' AND granted AND objsubid = 2
  AND classid::bigint = %s AND objid::bigint = %s
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


def _key(pk: int) -> list[int]:
    return [_NAMESPACE, pk & 0x7FFFFFFF]


def _held(pk: int) -> tuple[bool, bool]:
    with connection.cursor() as cursor:
        cursor.execute(_HELD_SQL, _key(pk))
        anyone, mine = cursor.fetchone()
    return bool(anyone), bool(mine)


def claim_lock_held(pk: int) -> bool:
    """Whether any session (this one included) holds the request's lock: a live worker."""
    return _held(pk)[0]


def claim_lock_take(pk: int) -> bool:
    """Take the request's lock for this session (until released, or the session ends)."""
    if _held(pk)[1]:
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", _key(pk))
        return bool(cursor.fetchone()[0])


def claim_lock_release(pk: int) -> None:
    """Give this session's lock back (nothing when this session does not hold it)."""
    if _held(pk)[1]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", _key(pk))
