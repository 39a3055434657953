"""PostgreSQL clusters of our own on this machine: a primary and its streaming replica.

``bench/replica.py`` and the replica tests (tests/ops/test_replica.py) need a primary that allows
replication and a replica fed by it; the machine's shared server is neither ours to reconfigure
nor to replicate. So they make both here: ``initdb`` a primary on a free loopback port (trust
authentication, replication allowed from loopback), ``pg_basebackup -R`` a replica from it and
start that on another port. Everything lives in one temporary directory, removed on exit.

The server binaries come from ``PG_BIN`` (default ``/usr/lib/postgresql/15/bin``). PostgreSQL
refuses to run as root: as root the servers run as the ``postgres`` user (``runuser``).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench.ingest_api import free_port

PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
# For tests: no durability, a cluster lives for one run.
FAST = ("fsync=off",)


class ClusterError(Exception):
    pass


def available() -> str | None:
    """None when clusters can be made here; else why not."""
    for tool in ("initdb", "pg_ctl", "pg_basebackup"):
        if not (PG_BIN / tool).exists():
            return f"{PG_BIN / tool} not found (set PG_BIN)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the servers as"
    return None


def tree_cpu_seconds(root: int) -> float:
    """CPU time (user + system) used so far by process ``root`` and its children: those alive
    now, and those that ended and were waited for (``root``'s ``cutime``/``cstime``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == root:
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        elif ppid == root:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def _as_server_user(argv: Sequence[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return list(argv)


def _run(argv: Sequence[str], *, timeout: float = 120) -> None:
    done = subprocess.run(
        _as_server_user(argv), capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise ClusterError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")


@dataclass
class Cluster:
    name: str
    data: Path
    port: int
    log: Path

    def url(self, dbname: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def connect(self, dbname: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(self.url(dbname), autocommit=True)

    def start(self) -> None:
        _run([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "start"])

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(ClusterError, subprocess.TimeoutExpired):
                _run([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"])

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])

    def cpu_seconds(self) -> float:
        """CPU time used so far by the server's processes (the postmaster and its backends)."""
        return tree_cpu_seconds(self.postmaster_pid())

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with self.connect() as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise ClusterError(f"{self.name} did not accept connections") from None
                time.sleep(0.2)


def _conf(data: Path, settings: Sequence[str]) -> None:
    with (data / "postgresql.auto.conf").open("a") as conf:
        for line in settings:
            key, _, value = line.partition("=")
            conf.write(f"{key.strip()} = '{value.strip()}'\n")


@contextlib.contextmanager
def primary_and_replica(
    *, settings: Sequence[str] = (), prefix: str = "console-pg-"
) -> Iterator[tuple[Cluster, Cluster]]:
    """A primary and a streaming replica of it, started; stopped and removed on exit."""
    why = available()
    if why:
        raise ClusterError(why)
    root = Path(tempfile.mkdtemp(prefix=prefix))
    if os.geteuid() == 0:
        server = pwd.getpwnam("postgres")
        os.chown(root, server.pw_uid, server.pw_gid)
    primary = Cluster("primary", root / "primary", free_port(), root / "primary.log")
    replica = Cluster("replica", root / "replica", free_port(), root / "replica.log")
    try:
        _run(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(primary.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
            ]
        )
        common = [
            "listen_addresses=127.0.0.1",
            f"unix_socket_directories={root}",
            "max_connections=200",
            *settings,
        ]
        _conf(primary.data, [f"port={primary.port}", "wal_level=replica", *common])
        primary.start()
        primary.wait_ready()
        _run(
            [
                str(PG_BIN / "pg_basebackup"),
                "-h",
                "127.0.0.1",
                "-p",
                str(primary.port),
                "-U",
                "postgres",
                "-D",
                str(replica.data),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
            ],
            timeout=300,
        )
        _conf(replica.data, [f"port={replica.port}", "hot_standby=on"])
        replica.start()
        replica.wait_ready()
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()
        shutil.rmtree(root, ignore_errors=True)


def caught_up(primary: Cluster, replica: Cluster, *, timeout: float = 60.0) -> None:
    """Wait until the replica has replayed everything the primary had written when called."""
    with primary.connect() as conn:
        target = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
    deadline = time.monotonic() + timeout
    with replica.connect() as conn:
        while True:
            row = conn.execute(
                "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [str(target)]
            ).fetchone()
            if row and row[0]:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"the replica did not replay up to {target}")
            time.sleep(0.05)
