"""The embedded servers of ``make run`` and ``make test`` (console/devservers.py): what a test run
starts, it stops; what a developer started stays. Real processes stand in for the servers (each
server is stopped by the pid its pid file names), so nothing here starts PostgreSQL or Redis."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from console import devservers


@pytest.fixture
def var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(devservers, "VAR", tmp_path)
    monkeypatch.setattr(devservers, "PGDATA", tmp_path / "pgdata")
    monkeypatch.setattr(devservers, "REDIS_DIR", tmp_path / "redis")
    monkeypatch.setattr(devservers, "ENV_FILE", tmp_path / "embedded.env")
    (tmp_path / "pgdata").mkdir()
    (tmp_path / "redis").mkdir()
    (tmp_path / "embedded.env").write_text("DATABASE_URL=x\nREDIS_URL=y\n")
    return tmp_path


@pytest.fixture
def servers(var: Path) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """A stand-in process per server, named by the pid file ``stop`` signals."""
    procs = {}
    for server, pid_file in (
        ("postgres", var / "pgdata" / "postmaster.pid"),
        ("redis", var / "redis" / "redis.pid"),
    ):
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        pid_file.write_text(f"{proc.pid}\n")
        procs[server] = proc
    yield procs
    for proc in procs.values():
        proc.kill()
        proc.wait()


def _ended(proc: subprocess.Popen[bytes]) -> bool:
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_a_test_run_stops_the_servers_it_started(
    var: Path, servers: dict[str, subprocess.Popen[bytes]]
) -> None:
    devservers._claim("postgres", "test", started=True)
    devservers._claim("redis", "test", started=True)
    assert devservers._postgres_running()

    assert devservers.release("test") == ["postgres", "redis"]
    assert _ended(servers["postgres"]) and _ended(servers["redis"])
    assert not (var / "postgres.owner").exists() and not (var / "redis.owner").exists()
    assert not (var / "embedded.env").exists()


def test_a_server_found_running_or_taken_over_by_a_developer_outlives_the_suite(
    var: Path, servers: dict[str, subprocess.Popen[bytes]]
) -> None:
    # PostgreSQL was running before the suite (nobody's to stop); Redis was started by the test
    # run, then a developer's `make services` took it over.
    devservers._claim("postgres", "test", started=False)
    devservers._claim("redis", "test", started=True)
    devservers._claim("redis", devservers.DEVELOPER, started=False)

    assert devservers.release("test") == []
    assert servers["postgres"].poll() is None and servers["redis"].poll() is None
    assert (var / "redis.owner").read_text() == devservers.DEVELOPER
    assert (var / "embedded.env").exists()
