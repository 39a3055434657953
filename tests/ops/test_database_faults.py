"""Database faults, end to end, on servers of the test's own: a PostgreSQL 15 primary and its
streaming replica (bench/pgcluster.py: initdb, pg_basebackup -R, free loopback ports; the shared
server is never touched), stopped and started by the cases of tests/ops/database_faults_case.py,
which run in a pytest process of their own whose main database is that primary and whose
DATABASE_REPLICA_URLS names that replica: once with persistent connections, once with the
connection pools the ASGI server uses."""

from __future__ import annotations

import os

import pytest

from bench import pgcluster
from tests.ops.replication import run_cases

CASES = "tests/ops/database_faults_case.py"


def _spec(cluster: pgcluster.Cluster) -> str:
    return os.pathsep.join([str(cluster.data), str(cluster.port), str(cluster.log)])


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["false", "true"], ids=["persistent", "pooled"])
def test_database_faults(pool: str) -> None:
    why = pgcluster.available()
    assert why is None, why
    with pgcluster.primary_and_replica(settings=pgcluster.FAST) as (primary, replica):
        done = run_cases(
            CASES,
            primary,
            replica,
            "console_faults",
            DATABASE_POOL=pool,
            FAULTS_PRIMARY=_spec(primary),
            FAULTS_REPLICA=_spec(replica),
        )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "3 passed" in done.stdout, done.stdout[-3000:]
