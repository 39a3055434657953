"""Shared set-up of the benchmarks: the bench database, Django, timing and reporting helpers.

The benchmarks truncate the conversation tables, so they run against a database of their own:
``DATABASE_URL`` when it is set, else ``console_bench`` on the local server. A database whose
name does not contain ``bench`` is refused (the development and test database ``console`` in
particular). The bench database is dropped and created afresh at every run, then migrated
through ``call_command`` (a benchmark may keep a database it seeded earlier: ``--reuse``).

Every figure a benchmark prints is a ratio against a baseline measured in the same run, on the
same machine and the same rows: absolute numbers vary too much between machines to be a target.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/console_bench"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"


def run_benchmark(main: Callable[[], int]) -> None:
    """A benchmark's ``__main__``: exits with ``main()``'s status, or 2 with the message of the
    BenchError that stopped it (a refused database, a server that did not start)."""
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"{Path(sys.argv[0]).name}: {exc}", file=sys.stderr)
        sys.exit(2)


class BenchError(Exception):
    """The benchmark cannot run (wrong database, server not reachable, failed requests)."""


def bench_environment() -> dict[str, str]:
    """``DATABASE_URL`` and ``REDIS_URL`` for the bench; the database must be a bench one."""
    database_url = os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL
    redis_url = os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL
    name = database_name(database_url)
    if "bench" not in name:
        raise BenchError(
            f"refusing database {name!r}: the benchmarks truncate tables, so they only run on a "
            f"database whose name contains 'bench' (unset DATABASE_URL for {DEFAULT_DATABASE_URL})"
        )
    return {"DATABASE_URL": database_url, "REDIS_URL": redis_url}


def database_name(url: str) -> str:
    return str(conninfo_to_dict(url).get("dbname") or "")


def create_database(url: str) -> None:
    """(Re)create the database named in ``url`` on its server, empty.

    Every run starts from a fresh database: no bloat left by an earlier run, and no stale schema
    when a migration was edited in place during development (``migrate`` would not see it).
    """
    name = sql.Identifier(database_name(url))
    with psycopg.connect(url, dbname="postgres", autocommit=True) as conn:
        # FORCE: a server left running by an interrupted benchmark may still hold connections.
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(name))


def keys_database_url(url: str) -> str:
    """The data keys' database (console/settings.py): "<bench database>_keys" on the same server."""
    return make_conninfo(url, dbname=database_name(url) + "_keys")


def setup_django(
    settings_module: str = "console.settings", *, create: bool = True
) -> dict[str, str]:
    """Point Django at the bench database and Redis, create it afresh (unless ``create`` is
    false: a kept database, see ``--reuse`` in console.py) and migrate it.

    Returns the environment (``DATABASE_URL``, ``REDIS_URL``) for subprocesses such as gunicorn.
    """
    env = bench_environment()
    if create:
        create_database(env["DATABASE_URL"])
        create_database(keys_database_url(env["DATABASE_URL"]))
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    call_command("migrate", database="keys", verbosity=0, interactive=False)
    return env


def truncate_conversations() -> None:
    """Empty the conversation store (and whatever references it) and restart its sequences."""
    from django.apps import apps
    from django.db import connection, connections, router

    by_alias: dict[str, list[str]] = {}
    for model in apps.get_app_config("conversations").get_models():
        by_alias.setdefault(router.db_for_write(model) or "default", []).append(
            model._meta.db_table
        )
    for alias, tables in by_alias.items():
        with connections[alias].cursor() as cur:
            quoted = ", ".join(connection.ops.quote_name(t) for t in tables)
            cur.execute(f"TRUNCATE {quoted} RESTART IDENTITY CASCADE")


def store_bodies(bodies: Iterable[dict[str, Any]], *, batch: int = 500) -> int:
    """Store exchange bodies through the ingest pipeline
    (``conversations.ingest.pipeline.ingest_batch``), ``batch`` at a time, without the JSONL round
    trip; returns the exchanges stored. A refused body is an error."""
    from conversations.ingest.body import exchange_input
    from conversations.ingest.parse import exchange_parse
    from conversations.ingest.pipeline import ingest_batch

    stored = 0
    pending = iter(bodies)
    while chunk := list(itertools.islice(pending, batch)):
        items = []
        for line, body in enumerate(chunk):
            data = exchange_input(body)
            items.append((line, data, exchange_parse(data)))
        result = ingest_batch(items)
        if result.rejected:
            raise BenchError(f"exchanges refused: {result.rejected[:3]}")
        stored += result.exchanges
    return stored


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.seconds``: wall-clock time of the block."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.seconds = time.perf_counter() - self._start


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between the closest ranks."""
    if not values:
        raise ValueError("percentile of nothing")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def report(rows: Sequence[tuple[str, str]]) -> None:
    """Print ``label  value`` lines, labels aligned."""
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


def verdict(ratio: float, target: float) -> str:
    return f"{ratio:.3f} (target >= {target:.2f}: {'met' if ratio >= target else 'NOT met'})"
