"""Retention: erasing a subject, sweeping expired conversations, and ingest while the clock sweeps.

What it measures, on a fresh bench database filled with demo exchanges (four provider formats,
stored through the ingest pipeline):

1. **Erase a subject with 100 conversations**: a deletion request for the customer, claimed and
   executed by the one erase path (tombstones, key destruction, one transaction per
   conversation, the verification scan over every registered table and Redis, the receipt).
   Baseline: a second customer with 100 conversations of the same shape, whose rows are removed
   by bare ``DELETE … WHERE conversation_id = ANY(…)`` statements (every registered table, one
   transaction) and its keys by one ``DELETE``: the floor of what removing those rows costs.
   Printed: seconds for each, and ``erase/raw`` (how many times the floor the erase path takes).
2. **Sweep N expired conversations** (10,000; ``--quick``: 1,000): their last activity is set
   past ``RETENTION_DEFAULT_DAYS`` and ``manage.py retention_tick --until-idle`` runs in a
   separate process (as the Celery worker would), ticking until idle. Printed: seconds and
   conversations/s, beside the baseline's raw delete rate per conversation.
3. **Ingest p99 during the sweep beside without it**: this process stores new exchanges one by
   one through ``conversation_ingest_exchange`` (the API's service: parse, guards, lock, encrypt,
   project, write; no HTTP) and times each. Without: before and after the sweep (``--exchanges``
   each); during: for as long as the sweep runs. Printed: p50/p99 ms of both and ``p99
   during/without``, the figure to track (1.0: the sweep does not slow ingest at all).

The machine's cores are shared by the sweep's process, this process and PostgreSQL: on a
two-core machine some slowdown during the sweep is expected from CPU alone.

    .venv/bin/python bench/retention.py [--expired 10000] [--exchanges 1000] [--quick]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    ROOT,
    BenchError,
    Stopwatch,
    percentile,
    rate,
    report,
    run_benchmark,
    setup_django,
    store_bodies,
    truncate_conversations,
)

SUBJECT_CONVERSATIONS = 100


def _bodies(prefix: str, conversations: int, customer: Any, start: int) -> Iterator[dict[str, Any]]:
    """Demo exchanges for ``conversations`` conversations named ``<prefix>-…``; ``customer``:
    a fixed id or a function of the conversation's number."""
    from conversations.demo import demo_bodies

    numbers: dict[str, int] = {}
    for body in demo_bodies(conversations, start=start):
        n = numbers.setdefault(body["conversation"], len(numbers))
        body["conversation"] = f"{prefix}-{body['conversation']}"
        body["customer"] = customer(n) if callable(customer) else customer
        yield body


def _ids(customer: str) -> list[int]:
    from conversations.models import Conversation

    return sorted(
        Conversation.objects.filter(customer_external_id=customer).values_list("pk", flat=True)
    )


def erase_subject(customer: str) -> float:
    """The one erase path on every conversation of ``customer``: seconds."""
    from retention.models import DeletionRequest
    from retention.services import (
        deletion_request_claim,
        deletion_request_execute,
        deletion_request_submit,
    )

    with Stopwatch() as sw:
        deletion_request_submit(customer=customer, reason="bench")
        request = deletion_request_claim()
        if request is None:
            raise BenchError("the deletion request was not claimed")
        request = deletion_request_execute(request=request)
    if request.status != DeletionRequest.Status.COMPLETED:
        raise BenchError(f"the erase ended {request.status}: {request.error}")
    if not request.receipt.verification["ok"]:
        raise BenchError(f"verification found rows left: {request.receipt.verification}")
    return sw.seconds


def raw_delete(ids: list[int]) -> float:
    """Bare DELETEs of the same rows (every registered table, one transaction; the keys apart)."""
    from django.db import transaction

    from retention import registry

    with Stopwatch() as sw:
        with transaction.atomic():
            for entry in registry.ERASED:
                qs = entry.rows(ids)
                qs._raw_delete(qs.db)
        keys = registry.KEYS.rows(ids)
        keys._raw_delete(keys.db)
    return sw.seconds


def _ingest_one(body: dict[str, Any]) -> float:
    from conversations.ingest.body import exchange_input
    from conversations.services import conversation_ingest_exchange

    started = time.perf_counter()
    conversation_ingest_exchange(data=exchange_input(body))
    return (time.perf_counter() - started) * 1000


def ingest_latencies(
    bodies: Iterator[dict[str, Any]], *, count: int | None = None, until: Any = None
) -> list[float]:
    """Milliseconds per exchange: ``count`` exchanges, or as long as ``until()`` is false."""
    latencies: list[float] = []
    for body in bodies:
        if count is not None and len(latencies) >= count:
            break
        if until is not None and until():
            break
        latencies.append(_ingest_one(body))
    return latencies


def expire(prefix: str) -> int:
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    past = timezone.now() - timezone.timedelta(days=settings.RETENTION_DEFAULT_DAYS + 1)
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE conversations_conversation SET last_activity_at = %s WHERE external_id LIKE %s",
            [past, f"{prefix}-%"],
        )
        return cur.rowcount


def sweep_process(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "manage.py", "retention_tick", "--until-idle"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--expired", type=int, default=10_000, help="conversations to sweep")
    parser.add_argument(
        "--exchanges", type=int, default=1000, help="ingest samples before and after the sweep"
    )
    parser.add_argument("--quick", action="store_true", help="1,000 expired, 200 samples")
    args = parser.parse_args(argv)
    if args.quick:
        args.expired, args.exchanges = 1000, 200

    env = setup_django()
    truncate_conversations()
    from conversations.models import Conversation

    print(f"storing 2 x {SUBJECT_CONVERSATIONS} subject conversations, {args.expired:,} to expire")
    store_bodies(_bodies("subject-a", SUBJECT_CONVERSATIONS, "bench-subject-a", 0))
    store_bodies(_bodies("subject-b", SUBJECT_CONVERSATIONS, "bench-subject-b", 0))
    store_bodies(_bodies("exp", args.expired, lambda n: f"bench-expired-{n % 997}", 1000))
    store_bodies(_bodies("live", 500, lambda n: f"bench-live-{n % 97}", 50_000))

    erase_seconds = erase_subject("bench-subject-a")
    baseline_ids = _ids("bench-subject-b")
    raw_seconds = raw_delete(baseline_ids)

    fresh = _bodies("ingest", 10**6, lambda n: f"bench-ingest-{n % 89}", 100_000)
    before = ingest_latencies(fresh, count=args.exchanges)
    if expire("exp") != args.expired:
        raise BenchError("not every conversation to expire was found")
    live = Conversation.objects.exclude(external_id__startswith="exp-").count()
    sweep = sweep_process(env)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(sweep.stdout or []), daemon=True)
    reader.start()
    with Stopwatch() as sw:
        during = ingest_latencies(fresh, until=lambda: sweep.poll() is not None)
        sweep.wait()
    reader.join()
    sweep_seconds = sw.seconds
    if sweep.returncode != 0:
        raise BenchError("the sweep failed:\n" + "".join(output))
    after = ingest_latencies(fresh, count=args.exchanges)
    left = Conversation.objects.filter(external_id__startswith="exp-").count()
    kept = Conversation.objects.exclude(external_id__startswith="exp-").count()
    if left or kept < live:
        raise BenchError(f"the sweep left {left} expired conversations, kept {kept} of {live}")
    without = before + after
    p99_without, p99_during = percentile(without, 99), percentile(during, 99)
    raw_per_conversation = raw_seconds / len(baseline_ids)

    report(
        [
            (
                f"erase a subject ({SUBJECT_CONVERSATIONS} conversations)",
                f"{erase_seconds:.2f} s ({erase_seconds / SUBJECT_CONVERSATIONS * 1000:.1f} ms"
                " per conversation)",
            ),
            ("  baseline: bare DELETEs of the same rows", f"{raw_seconds:.3f} s"),
            ("  ratio erase/raw", f"{erase_seconds / raw_seconds:.1f}"),
            (
                f"sweep {args.expired:,} expired conversations",
                f"{sweep_seconds:.1f} s ({rate(args.expired, sweep_seconds):.0f} conversations/s;"
                f" {''.join(output).count('requests=1')} ticks with work)",
            ),
            (
                "  baseline: bare DELETEs",
                f"{rate(1, raw_per_conversation):.0f} conversations/s",
            ),
            (
                "ingest without the sweep",
                f"p50 {percentile(without, 50):.1f} ms, p99 {p99_without:.1f} ms"
                f" ({len(without)} exchanges)",
            ),
            (
                "ingest during the sweep",
                f"p50 {percentile(during, 50):.1f} ms, p99 {p99_during:.1f} ms"
                f" ({len(during)} exchanges)",
            ),
            ("  ratio p99 during/without", f"{p99_during / p99_without:.2f}"),
        ]
    )
    return 0


if __name__ == "__main__":
    run_benchmark(main)
