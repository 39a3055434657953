"""Database faults, end to end, on servers of the test's own: a PostgreSQL 15 primary and its
streaming replica (bench/pgcluster.py: initdb, pg_basebackup -R, free loopback ports; the shared
server is never touched), stopped and started by the cases of tests/ops/database_faults_case.py,
which run in a pytest process of their own whose main database is that primary and whose
DATABASE_REPLICA_URLS names that replica: once with persistent connections, once with the
connection pools the ASGI server uses."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from bench import pgcluster

ROOT = Path(__file__).resolve().parents[2]
CASES = "tests/ops/database_faults_case.py"


def _spec(cluster: pgcluster.Cluster) -> str:
    return os.pathsep.join([str(cluster.data), str(cluster.port), str(cluster.log)])


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["false", "true"], ids=["persistent", "pooled"])
def test_database_faults(settings: Any, pool: str) -> None:
    why = pgcluster.available()
    assert why is None, why
    prefix = f"faults-case-{uuid.uuid4().hex[:8]}"
    with pgcluster.primary_and_replica(settings=pgcluster.FAST) as (primary, replica):
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"KEYS_DATABASE_URL", "DATABASE_POOL", "PROMETHEUS_MULTIPROC_DIR"}
            and not k.startswith("PYTEST_")  # an xdist worker's own: the child runs alone
        }
        env.update(
            DATABASE_URL=primary.url("console_faults"),
            DATABASE_REPLICA_URLS=replica.url("console_faults"),
            DATABASE_POOL=pool,
            REDIS_URL=settings.REDIS_URL,
            CACHE_KEY_PREFIX=prefix,  # its own fence in Redis
            FAULTS_PRIMARY=_spec(primary),
            FAULTS_REPLICA=_spec(replica),
        )
        try:
            done = subprocess.run(
                [sys.executable, "-m", "pytest", CASES, "-q", "-n", "0", "-p", "no:cacheprovider"],
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
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "3 passed" in done.stdout, done.stdout[-3000:]
