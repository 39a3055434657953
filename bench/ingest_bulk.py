"""Bulk ingest (``manage.py ingest``) against a raw PostgreSQL COPY of the same rows.

What it measures: N exchanges from ``conversations.demo.demo_bodies`` (four provider formats,
tool calls, reasoning) are written as JSONL to a temporary file, the conversation tables are
truncated, and ``call_command("ingest", path, "--no-progress")`` is timed end to end: reading,
validating and parsing every line, planning, and writing (one transaction and one COPY per table
per batch). The baseline is then measured on the rows that ingest wrote: they are read back and
COPY'd (psycopg 3 ``cursor.copy``, one transaction) into plain tables with the same columns and
types and only a primary key, the median of ``--repeat`` runs.

How to read the output: ``ingest rows/s`` counts message and block rows (the rows both sides
write) over the whole ingest time; ``COPY rows/s`` the same rows over the COPY time;
``ratio = ingest / COPY`` is the figure to track (target: at least 0.25). Absolute rates depend on
the machine; the ratio much less. ``--profile`` runs the ingest under cProfile and prints where
the time goes (the rates it prints are then slowed by the profiler).

    .venv/bin/python bench/ingest_bulk.py [--exchanges 20000] [--quick] [--profile]

``--per-format`` ingests each registered format's demo exchanges alone, in one run, and prints
each format's stored bytes per second over the reference format's (``--reference``, Anthropic
Messages by default): a new format's exchanges should be stored within 10 % of it (exit 1 when
one is not).

    .venv/bin/python bench/ingest_bulk.py --per-format --exchanges 2000 --repeat 3
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import json
import os
import pstats
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    BenchError,
    Stopwatch,
    median,
    rate,
    report,
    run_benchmark,
    setup_django,
    truncate_conversations,
    verdict,
)

TARGET = 0.25


@dataclass(frozen=True)
class IngestRun:
    seconds: float
    exchanges: int
    messages: int
    blocks: int
    payload_bytes: int


def write_bodies(path: Path, exchanges: int, fmt: str | None = None) -> int:
    """The first ``exchanges`` demo bodies (of format ``fmt`` only, when given) as JSONL;
    returns the file's size in bytes."""
    from conversations.demo import demo_bodies
    from conversations.formats import names

    # demo_bodies(n) yields at least one exchange per conversation: n conversations are enough
    # (n times the formats when only one format's are kept: the demo rotates through them).
    bodies = demo_bodies(exchanges * (len(names()) if fmt else 1))
    if fmt is not None:
        bodies = (b for b in bodies if b["format"] == fmt)
    with path.open("w", encoding="utf-8") as out:
        for body in itertools.islice(bodies, exchanges):
            out.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
            out.write("\n")
    return path.stat().st_size


def run_ingest(path: Path, batch_size: int, profile: bool, workers: int = 1) -> IngestRun:
    """``manage.py ingest`` on the file, timed (and profiled when asked); what it stored."""
    from django.core.management import CommandError, call_command

    from conversations.models import Block, Exchange, Message

    out, err = io.StringIO(), io.StringIO()
    args = [str(path), "--no-progress", "--batch-size", str(batch_size)]
    args += ["--workers", str(workers)]
    profiler = cProfile.Profile() if profile else None
    try:
        with Stopwatch() as sw:
            if profiler is not None:
                profiler.runcall(call_command, "ingest", *args, stdout=out, stderr=err)
            else:
                call_command("ingest", *args, stdout=out, stderr=err)
    except CommandError as exc:
        raise BenchError(f"ingest failed: {exc}\n{err.getvalue()[:2000]}") from exc
    if profiler is not None:
        print_profile(profiler)
    payload = sum(
        len(sealed) for sealed in Message.objects.values_list("raw_ciphertext", flat=True)
    )
    return IngestRun(
        sw.seconds,
        Exchange.objects.count(),
        Message.objects.count(),
        Block.objects.count(),
        payload,
    )


def print_profile(profiler: cProfile.Profile) -> None:
    for key, title in (("tottime", "own time"), ("cumulative", "cumulative time")):
        print(f"\n--- profile of the ingest, top 40 by {title} ---")
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.strip_dirs().sort_stats(key).print_stats(40)


@dataclass(frozen=True)
class CopyTable:
    source: str  # the table ingest wrote
    target: str  # its plain copy: same columns and types, a primary key and nothing else
    columns: list[str]
    rows: list[tuple[Any, ...]]
    generated: frozenset[str] = frozenset()  # columns PostgreSQL computes (the search vector)


def read_back() -> list[CopyTable]:
    """The message and block rows ingest wrote, every column, as the COPY would send them."""
    from django.db import connection

    from conversations.models import Block, Message

    tables = []
    for model in (Message, Block):
        fields = model._meta.concrete_fields
        columns = [f.column for f in fields if f.column is not None]
        # JSON columns are read back as text, as the ingest's COPY sends them.
        json_columns = {f.column for f in fields if f.get_internal_type() == "JSONField"}
        generated = frozenset(f.column for f in fields if f.generated and f.column)
        select = ", ".join(f"{c}::text" if c in json_columns else c for c in columns)
        source = model._meta.db_table
        with connection.cursor() as cur:
            cur.execute(f"SELECT {select} FROM {source} ORDER BY id")  # noqa: S608
            rows = cur.fetchall()
        tables.append(
            CopyTable(source, f"bench_copy_{model._meta.model_name}", columns, rows, generated)
        )
    return tables


def copy_baseline(tables: list[CopyTable], repeat: int, *, schema: bool = False) -> list[float]:
    """Seconds to COPY the rows into fresh tables in one transaction, once per repeat: plain
    tables (the baseline), or with ``schema`` tables like the real ones (their indexes, check
    constraints and generated search column, which PostgreSQL then computes; no foreign keys):
    what the schema alone costs, whatever the Python in front of it."""
    import psycopg

    like = "INCLUDING ALL" if schema else ""
    timings = []
    with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
        for _ in range(repeat):
            with conn.transaction():
                for t in tables:
                    conn.execute(f"DROP TABLE IF EXISTS {t.target}")
                    # LIKE copies columns, types and NOT NULLs; INCLUDING ALL also the indexes,
                    # defaults, checks and generation expressions (never foreign keys).
                    conn.execute(f"CREATE TABLE {t.target} (LIKE {t.source} {like})")
                    if not schema:
                        conn.execute(f"ALTER TABLE {t.target} ADD PRIMARY KEY (id)")
            with Stopwatch() as sw, conn.transaction(), conn.cursor() as cur:
                for t in tables:
                    keep = [i for i, c in enumerate(t.columns) if not (schema and c in t.generated)]
                    columns = ", ".join(t.columns[i] for i in keep)
                    with cur.copy(f"COPY {t.target} ({columns}) FROM STDIN") as copy:
                        for row in t.rows:
                            copy.write_row([row[i] for i in keep] if schema else row)
            timings.append(sw.seconds)
        with conn.transaction():
            for t in tables:
                conn.execute(f"DROP TABLE IF EXISTS {t.target}")
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exchanges", type=int, default=20_000, help="exchanges to ingest")
    parser.add_argument("--batch-size", type=int, default=500, help="the ingest's --batch-size")
    parser.add_argument("--repeat", type=int, default=3, help="COPY baseline runs (median)")
    parser.add_argument("--quick", action="store_true", help="2,000 exchanges, one COPY run")
    parser.add_argument("--profile", action="store_true", help="cProfile the ingest")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="the ingest's --workers (default: this machine's cores)",
    )
    parser.add_argument(
        "--per-format",
        action="store_true",
        help="each format's demo exchanges alone: bytes stored per second, as a ratio to the "
        "--reference format's (target: within 10 %%)",
    )
    parser.add_argument("--reference", default="anthropic.messages", help="with --per-format")
    args = parser.parse_args(argv)
    if args.quick:
        args.exchanges, args.repeat = 2_000, 1

    setup_django()
    if args.per_format:
        return per_format(args)
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        path = Path(tmp) / "exchanges.jsonl"
        file_bytes = write_bodies(path, args.exchanges)
        truncate_conversations()
        if args.profile:
            args.workers = 1  # cProfile sees this process only
        run = run_ingest(path, args.batch_size, args.profile, args.workers)
    if run.exchanges != args.exchanges:
        raise BenchError(f"ingest stored {run.exchanges} of {args.exchanges} exchanges")
    tables = read_back()
    copy_seconds = median(copy_baseline(tables, args.repeat))
    schema_seconds = median(copy_baseline(tables, args.repeat, schema=True))
    truncate_conversations()

    rows = run.messages + run.blocks
    ingest_rate, copy_rate = rate(rows, run.seconds), rate(rows, copy_seconds)
    report(
        [
            ("exchanges", f"{run.exchanges} ({file_bytes / 1e6:.1f} MB of JSONL)"),
            ("ingest workers", f"{args.workers} ({os.cpu_count()} cores)"),
            (
                "rows",
                f"{run.messages} messages ({run.payload_bytes / 1e6:.1f} MB raw), "
                f"{run.blocks} blocks",
            ),
            ("ingest time", f"{run.seconds:.2f} s" + (" (under cProfile)" if args.profile else "")),
            ("exchanges/s", f"{rate(run.exchanges, run.seconds):,.0f}"),
            ("message rows/s", f"{rate(run.messages, run.seconds):,.0f}"),
            ("block rows/s", f"{rate(run.blocks, run.seconds):,.0f}"),
            ("ingest rows/s", f"{ingest_rate:,.0f}"),
            ("COPY time", f"{copy_seconds:.2f} s (median of {args.repeat})"),
            ("COPY rows/s", f"{copy_rate:,.0f}"),
            ("ratio ingest/COPY", verdict(ingest_rate / copy_rate, TARGET)),
            (
                "for reference: COPY into the real schema",
                f"{rate(rows, schema_seconds):,.0f} rows/s ({schema_seconds:.2f} s; indexes and "
                "generated search column, no foreign keys): "
                f"{rate(rows, schema_seconds) / copy_rate:.3f} of COPY",
            ),
        ]
    )
    return 0


def per_format(args: argparse.Namespace) -> int:
    """Each registered format's demo exchanges ingested alone, in one run: the message bytes
    stored per second (the sealed raw messages: exchanges of different sizes and encodings, a
    base64 eventstream or JSON, compared by what they store), and each format's rate over the
    reference format's."""
    from conversations.formats import names

    rates: dict[str, tuple[float, IngestRun, int]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        paths = {fmt: Path(tmp) / f"{fmt}.jsonl" for fmt in names()}
        sizes = {fmt: write_bodies(path, args.exchanges, fmt) for fmt, path in paths.items()}
        seconds: dict[str, list[float]] = {fmt: [] for fmt in paths}
        runs: dict[str, IngestRun] = {}
        # Round by round, every format in turn: a machine's load falls on all of them alike.
        for _ in range(args.repeat):
            for fmt, path in paths.items():
                truncate_conversations()
                runs[fmt] = run_ingest(path, args.batch_size, False, args.workers)
                seconds[fmt].append(runs[fmt].seconds)
        for fmt, run in runs.items():
            # The fastest round: what the machine's other load took least from (the rounds
            # interleave the formats, so each had the same chances).
            run = IngestRun(
                min(seconds[fmt]), run.exchanges, run.messages, run.blocks, run.payload_bytes
            )
            rates[fmt] = (rate(run.payload_bytes, run.seconds), run, sizes[fmt])
    truncate_conversations()
    reference = rates[args.reference][0]
    rows = []
    for fmt, (bytes_rate, run, size) in rates.items():
        rows.append(
            (
                fmt,
                f"{run.exchanges} exchanges ({size / 1e6:.2f} MB of JSONL, "
                f"{run.payload_bytes / 1e6:.2f} MB of messages stored) in {run.seconds:.2f} s "
                f"(fastest of {args.repeat}): {bytes_rate / 1e6:.2f} MB/s stored, "
                f"{rate(run.exchanges, run.seconds):,.0f} exchanges/s; ratio to "
                f"{args.reference}: {verdict(bytes_rate / reference, 0.9)}",
            )
        )
    report(rows)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
