"""What the end-to-end tests of a primary and its streaming replica share: the parent runs the
cases in a pytest process of their own against a pair made for it (``run_cases``); the cases
wait for the replica to replay what the primary wrote (``caught_up``, ``fresh_replica``) or hold
it behind (``pause_replay``, ``resume_replay``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import redis
from django.conf import settings
from django.db import connections

from bench import pgcluster
from conversations.replicas import replica_fence_raise

ROOT = Path(__file__).resolve().parents[2]


def run_cases(
    cases: str,
    primary: pgcluster.Cluster,
    replica: pgcluster.Cluster,
    name: str,
    **env_extra: str,
) -> subprocess.CompletedProcess[str]:
    """``cases`` run alone in a pytest process whose main database is ``primary``'s ``name`` and
    whose DATABASE_REPLICA_URLS names ``replica``'s, with keys of its own in Redis (the fence of
    this primary, not of another test's), removed afterwards."""
    prefix = f"{name}-{uuid.uuid4().hex[:8]}"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"KEYS_DATABASE_URL", "DATABASE_POOL", "PROMETHEUS_MULTIPROC_DIR"}
        and not k.startswith("PYTEST_")  # an xdist worker's own: the child runs alone
    }
    env.update(
        DATABASE_URL=primary.url(name),
        DATABASE_REPLICA_URLS=replica.url(name),
        REDIS_URL=settings.REDIS_URL,
        CACHE_KEY_PREFIX=prefix,
        **env_extra,
    )
    try:
        return subprocess.run(
            [sys.executable, "-m", "pytest", cases, "-q", "-n", "0", "-p", "no:cacheprovider"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    finally:
        client = redis.Redis.from_url(settings.REDIS_URL)
        for key in client.scan_iter(f"{prefix}:*"):
            client.delete(key)
        client.close()


def server(alias: str, dbname: str = "postgres") -> dict[str, Any]:
    """psycopg's connection arguments for the server of the database ``alias``."""
    s = connections[alias].settings_dict
    return {"host": s["HOST"], "port": s["PORT"], "user": s["USER"], "dbname": dbname}


def caught_up(timeout: float = 60.0) -> None:
    """The replica has replayed everything the primary has written so far."""
    replica = settings.DATABASE_REPLICAS[0]
    with psycopg.connect(**server("default"), autocommit=True) as conn:
        target = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
    deadline = time.monotonic() + timeout
    with psycopg.connect(**server(replica), autocommit=True) as conn:
        while not conn.execute(
            "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [str(target)]
        ).fetchone()[0]:  # type: ignore[index]
            assert time.monotonic() < deadline, "the replica did not catch up"
            time.sleep(0.05)


def fresh_replica() -> None:
    """A fence at the primary's position now, and a replica that has replayed it."""
    replica_fence_raise()
    caught_up()


def pause_replay() -> None:
    """The replica stops replaying (``pg_wal_replay_pause()``) and has stopped on return."""
    with psycopg.connect(**server(settings.DATABASE_REPLICAS[0]), autocommit=True) as conn:
        conn.execute("SELECT pg_wal_replay_pause()")
        deadline = time.monotonic() + 30
        while conn.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()[0] != "paused":  # type: ignore[index]
            assert time.monotonic() < deadline, "replay did not pause"
            time.sleep(0.02)


def resume_replay() -> None:
    with psycopg.connect(**server(settings.DATABASE_REPLICAS[0]), autocommit=True) as conn:
        conn.execute("SELECT pg_wal_replay_resume()")
