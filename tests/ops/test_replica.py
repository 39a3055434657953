"""Read replicas, end to end: a PostgreSQL 15 primary and its streaming replica made for the test
(bench/pgcluster.py: initdb, pg_basebackup -R, on free loopback ports; the shared server is never
touched), and the cases of tests/ops/replica_case.py run in a pytest process of its own whose main
database is that primary and whose DATABASE_REPLICA_URLS names that replica."""

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
CASES = "tests/ops/replica_case.py"


@pytest.mark.slow
def test_the_router_against_a_streaming_replica(settings: Any) -> None:
    why = pgcluster.available()
    assert why is None, why
    prefix = f"replica-case-{uuid.uuid4().hex[:8]}"
    with pgcluster.primary_and_replica(settings=pgcluster.FAST) as (primary, replica):
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"KEYS_DATABASE_URL", "DATABASE_POOL", "PROMETHEUS_MULTIPROC_DIR"}
            and not k.startswith("PYTEST_")  # an xdist worker's own: the child runs alone
        }
        env.update(
            DATABASE_URL=primary.url("console_replica"),
            DATABASE_REPLICA_URLS=replica.url("console_replica"),
            REDIS_URL=settings.REDIS_URL,
            # Its own keys in Redis: the fence of this primary, not of another test's.
            CACHE_KEY_PREFIX=prefix,
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
    assert "4 passed" in done.stdout, done.stdout[-3000:]
