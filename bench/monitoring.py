"""Monitoring at scale: the model page and ``monitoring_tick`` over rollups standing for 10M
exchanges, each beside the raw SQL of the rollup rows it reads; ingest with rollups on vs off.

What it measures:

1. **Ingest, rollups on vs off**, in the same run: demo exchanges stored through the ingest
   pipeline (``bench.common.store_bodies``), alternating runs with the rollups' upsert in place
   and with it (and the building of its rows) stubbed out, the conversation tables truncated
   before each run. ``ratio = on / off`` in exchanges per second (target: at least 0.9).
2. **Seeded rollups**: hourly rows for 30 days x 4 queues x 3 snapshots (2 aliases asking)
   x 8 shards, their counts summing to ``--exchanges`` (10M by default), with histograms, written by
   one ``INSERT ... SELECT``; and a sample of real exchanges (from step 1) in the last hour, so the
   alerts have conversations behind them.
3. **The model page** (``model_page_read`` and its template, as a reader of one queue) for a
   snapshot over 30 days: p95 of ``--repeat`` reads, beside the p95 of the raw SQL that fetches
   the rollup rows it sums (``SELECT * FROM ... WHERE snapshot, queue, hour``).
4. **monitoring_tick** (the two shipped rules and five more, every metric): p95 beside the raw SQL
   of the rollup rows of the widest window.
5. **Quantiles, sketch vs exact**, on the sample's real exchanges: output-token p50/p90/p99
   read from the rollups' DDSketch bins (``monitoring/sketches.py``) beside ``percentile_disc`` over
   the rows themselves: each one's relative error (the bound is 1 %), and the p95 time of each
   read, as a ratio.

How to read it: the ratios say what the page and the tick cost over reading their rows; both stay
flat however many exchanges the rollups stand for (rows grow with hours x keys, not exchanges).

    .venv/bin/python bench/monitoring.py [--exchanges 10000000] [--sample 2000] [--quick]
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    BenchError,
    Stopwatch,
    median,
    percentile,
    rate,
    report,
    setup_django,
    store_bodies,
    truncate_conversations,
    verdict,
)

TARGET = 0.9
QUEUES = ["billing", "shipping", "returns", "technical"]
SNAPSHOTS = [
    ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
    ("gpt-5", "gpt-5-2025-08-07"),
    ("claude-opus-4-1", "claude-opus-4-1-20250805"),
]


def ingest_run(bodies: list[dict[str, Any]], *, rollups: bool) -> float:
    """Exchanges per second storing ``bodies`` into empty tables, rollups on or off."""
    import conversations.ingest.pipeline as pipeline

    truncate_conversations()
    real_add = pipeline.rollups_add
    if not rollups:
        pipeline.rollups_add = lambda *a, **k: None  # type: ignore[assignment]
    try:
        with Stopwatch() as sw:
            stored = store_bodies(bodies)
    finally:
        pipeline.rollups_add = real_add
    return rate(stored, sw.seconds)


SEED = """
INSERT INTO {table} (hour, queue, requested_model, served_model, shard, exchanges, conversations,
    finishes, truncated, truncated_reasoning_tokens, truncated_output_tokens, refusals,
    input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, reasoning_tokens,
    with_reasoning, output_hist, reasoning_hist, latency_hist, tool_calls, tool_calls_hist,
    repeated_tool_calls, looping, tool_results, tool_errors, rewritten,
    rewrite_tool_loop_reasoning, rewrite_edited, rewrite_reordered, rewrite_reserialised,
    output_sketch, latency_sketch, tool_calls_sketch)
SELECT h, q, m.requested, m.served, s, %(per)s, %(per)s / 4,
    ARRAY[%(per)s - %(per)s / 20 - %(per)s / 50, %(per)s / 50, %(per)s / 20, 0, 0]::bigint[],
    %(per)s / 50, %(per)s * 10, %(per)s * 20, 0,
    %(per)s * 900, %(per)s * 400, %(per)s * 50, %(per)s * 350, %(per)s * 150,
    %(per)s / 2,
    ARRAY(SELECT (CASE WHEN i BETWEEN 10 AND 24 THEN %(per)s / 15 ELSE 0 END)
          + (CASE WHEN s IS NULL THEN 1 ELSE 0 END) FROM generate_series(1, 64) i)::bigint[],
    ARRAY(SELECT CASE WHEN i BETWEEN 8 AND 20 THEN %(per)s / 26 ELSE 0 END
          FROM generate_series(1, 64) i)::bigint[],
    ARRAY(SELECT CASE WHEN i BETWEEN 17 AND 27 THEN %(per)s / 11 ELSE 0 END
          FROM generate_series(1, 64) i)::bigint[],
    %(per)s / 2,
    ARRAY(SELECT CASE WHEN i = 1 THEN %(per)s / 2 WHEN i = 2 THEN %(per)s / 2 ELSE 0 END
          FROM generate_series(1, 64) i)::bigint[],
    %(per)s / 100, %(per)s / 100, %(per)s / 2, %(per)s / 80, %(per)s / 40, 0, %(per)s / 40, 0, 0,
    %(output_sketch)s::jsonb, %(latency_sketch)s::jsonb, %(tool_calls_sketch)s::jsonb
FROM generate_series(%(start)s::timestamptz, %(end)s::timestamptz, interval '1 hour') h,
     unnest(%(queues)s::text[]) q,
     (SELECT * FROM unnest(%(requested)s::text[], %(served)s::text[]) AS t(requested, served)) m,
     generate_series(0, 7) s
ON CONFLICT (hour, queue, requested_model, served_model, shard) DO NOTHING
"""


def _spread(low: int, high: int, per: int) -> str:
    """A sketch of ``per`` values spread evenly over [low, high] in log scale (JSON)."""
    import json
    import math

    from conversations.monitoring import sketches

    values = [round(math.exp(math.log(low) + (math.log(high / low)) * i / per)) for i in range(per)]
    return json.dumps(sketches.of(values))


def seed_rollups(exchanges: int) -> int:
    from django.db import connection
    from django.utils import timezone

    from conversations.models import Rollup
    from conversations.monitoring.rollups import hour_of

    end = hour_of(timezone.now()) - timedelta(hours=1)  # the sample owns the current hour
    start = end - timedelta(days=30)
    hours = int((end - start).total_seconds() // 3600) + 1
    rows = hours * len(QUEUES) * len(SNAPSHOTS) * 8
    per = max(exchanges // rows, 1)
    with connection.cursor() as cur:
        cur.execute(
            SEED.format(table=Rollup._meta.db_table),
            {
                "per": per,
                "start": start,
                "end": end,
                "queues": QUEUES,
                "requested": [r for r, _ in SNAPSHOTS],
                "served": [s for _, s in SNAPSHOTS],
                # What the histograms above stand for, as bins (per row, as many values).
                "output_sketch": _spread(23, 2900, per),
                "latency_sketch": _spread(256, 11585, per),
                "tool_calls_sketch": json.dumps({"z": per - per // 2, "0": per // 2}),
            },
        )
        cur.execute("ANALYZE " + Rollup._meta.db_table)
    return Rollup.objects.count()


def timed(fn: Any, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        with Stopwatch() as sw:
            fn()
        out.append(sw.seconds * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exchanges", type=int, default=10_000_000)
    parser.add_argument("--sample", type=int, default=2000, help="real exchanges ingested")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--ingest-runs", type=int, default=3, help="alternations on/off")
    parser.add_argument("--quick", action="store_true", help="500 exchanges, 1M in rollups")
    args = parser.parse_args(argv)
    if args.quick:
        args.exchanges, args.sample, args.repeat, args.ingest_runs = 1_000_000, 500, 20, 2

    setup_django()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.template.loader import render_to_string
    from django.utils import timezone

    from conversations.demo import demo_bodies
    from conversations.models import AlertRule, Queue, Rollup
    from conversations.monitoring.alerts import monitoring_tick
    from conversations.monitoring.rollups import hour_of, rollups_compact
    from conversations.monitoring.selectors.audited import model_page_read

    bodies = list(itertools.islice(demo_bodies(args.sample), args.sample))
    for body in bodies:
        body.setdefault("labels", {})["queue"] = QUEUES[hash(body["conversation"]) % len(QUEUES)]
        body.pop("started_at", None)  # in the current hour, for the alerts' window
    on, off = [], []
    for _ in range(args.ingest_runs):
        off.append(ingest_run(bodies, rollups=False))
        on.append(ingest_run(bodies, rollups=True))  # the last run's rows stay: the sample
    on_rate, off_rate = median(on), median(off)

    # 5. Quantiles of the sample, sketch vs exact: before the seeding, the rollups hold only the
    # sample's exchanges.
    from conversations.models import Exchange
    from conversations.monitoring.selectors import Sums, rollups_summed

    sampled = Exchange.objects.count()
    exact_sql = (
        "SELECT percentile_disc(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY output_tokens) "  # noqa: S608
        f"FROM {Exchange._meta.db_table} WHERE output_tokens IS NOT NULL"
    )

    def from_sketch() -> list[int | None]:
        total = Sums.merged(rollups_summed())
        return [total.pct("output", q) for q in (50, 90, 99)]

    def exact() -> list[int]:
        with connection.cursor() as cur:
            cur.execute(exact_sql)
            row = cur.fetchone()
            assert row is not None
            return list(row[0])

    sketched, exactly = from_sketch(), exact()
    errors = [
        f"p{q} {s:,} vs {e:,} ({(s - e) / e * 100:+.2f} %)"
        for q, s, e in zip((50, 90, 99), sketched, exactly, strict=True)
        if s is not None and e
    ]
    sketch_ms, exact_ms = timed(from_sketch, args.repeat), timed(exact, args.repeat)

    seeded = seed_rollups(args.exchanges)
    stood_for = sum(Rollup.objects.values_list("exchanges", flat=True))
    # Steady state: the ticks have merged the shards of every hour but the current ones.
    with Stopwatch() as compact:
        rollups_compact(before=hour_of(timezone.now()), after=timezone.now() - timedelta(days=31))
    rows = Rollup.objects.count()
    call_command("setup_roles", stdout=io.StringIO())
    for name in QUEUES:
        Queue.objects.get_or_create(name=name)
    admin = get_user_model().objects.create_superuser("bench-admin", password="x")
    queue, (alias, snapshot) = QUEUES[0], SNAPSHOTS[0]
    for metric in ("tool_calls_per_turn", "tool_error_rate", "refusal_rate", "rewrite_rate",
                   "latency_p95"):  # fmt: skip
        AlertRule.objects.create(
            name=f"bench {metric}", metric=metric, threshold=0.5, window_minutes=24 * 60
        )

    def page() -> None:
        view = model_page_read(user=admin, snapshot=snapshot, queue=queue)
        render_to_string("console/monitoring/model.html", {"view": view})

    since = timezone.now() - timedelta(days=30)

    def raw_page() -> None:
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT * FROM {Rollup._meta.db_table} "  # noqa: S608
                "WHERE served_model = %s AND queue = %s AND hour >= %s",
                [snapshot, queue, since],
            )
            cur.fetchall()

    window = timezone.now() - timedelta(hours=25)

    def raw_tick() -> None:
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT * FROM {Rollup._meta.db_table} WHERE hour >= %s",  # noqa: S608
                [window],
            )
            cur.fetchall()

    page()
    first = monitoring_tick()
    page_ms, raw_page_ms = timed(page, args.repeat), timed(raw_page, args.repeat)
    tick_ms, raw_tick_ms = timed(monitoring_tick, args.repeat), timed(raw_tick, args.repeat)
    timings = {"page": page_ms, "raw_page": raw_page_ms, "tick": tick_ms, "raw_tick": raw_tick_ms}
    p95 = {k: percentile(v, 95) for k, v in timings.items()}
    report(
        [
            ("ingest exchanges/s, rollups off", f"{off_rate:,.0f} (median of {len(off)})"),
            ("ingest exchanges/s, rollups on", f"{on_rate:,.0f} (median of {len(on)})"),
            ("ratio on/off", verdict(on_rate / off_rate, TARGET)),
            ("rollup rows seeded", f"{seeded:,} standing for {stood_for:,} exchanges"),
            ("after compaction", f"{rows:,} rows ({compact.seconds:.1f} s) + the sample"),
            ("model page p95", f"{p95['page']:.1f} ms ({alias} -> {snapshot}, {queue}, 30 days)"),
            ("raw SQL of its rows p95", f"{p95['raw_page']:.1f} ms"),
            ("ratio page/raw SQL", f"{p95['page'] / p95['raw_page']:.2f}"),
            (
                "monitoring_tick p95",
                f"{p95['tick']:.1f} ms ({first.evaluated} rules; first tick fired {first.fired})",
            ),
            ("raw SQL of its rows p95", f"{p95['raw_tick']:.1f} ms (the widest window, 25 h)"),
            ("ratio tick/raw SQL", f"{p95['tick'] / p95['raw_tick']:.2f}"),
            (
                "quantiles: sketch vs exact",
                f"{'; '.join(errors)} ({sampled:,} exchanges; bound 1 %)",
            ),
            (
                "sketch read p95 / exact p95",
                f"{percentile(sketch_ms, 95):.1f} ms / {percentile(exact_ms, 95):.1f} ms: ratio "
                f"{percentile(sketch_ms, 95) / percentile(exact_ms, 95):.2f}",
            ),
        ]
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
