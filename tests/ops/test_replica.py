"""Read replicas, end to end: a PostgreSQL 15 primary and its streaming replica made for the test
(bench/pgcluster.py: initdb, pg_basebackup -R, on free loopback ports; the shared server is never
touched), and the cases of tests/ops/replica_case.py run in a pytest process of its own whose main
database is that primary and whose DATABASE_REPLICA_URLS names that replica."""

from __future__ import annotations

import pytest

from bench import pgcluster
from tests.ops.replication import run_cases

CASES = "tests/ops/replica_case.py"


@pytest.mark.slow
def test_the_router_against_a_streaming_replica() -> None:
    why = pgcluster.available()
    assert why is None, why
    with pgcluster.primary_and_replica(settings=pgcluster.FAST) as (primary, replica):
        done = run_cases(CASES, primary, replica, "console_replica")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "4 passed" in done.stdout, done.stdout[-3000:]
