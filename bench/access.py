"""Subject access: the report of a customer with 1,000 conversations.

On a fresh bench database: 1,000 demo conversations (four provider formats, reasoning included,
stored through the ingest pipeline) of one customer and 2,000 of others; 100 of the customer's
exported (the ``export_conversation`` read, audited). Then ``subject_access_read`` for the customer
(JSON, rendered), ``--rounds`` times: every store counted, the reasoning measured (its messages
decrypted and read, no text kept), the audit log's reads, grants, links, holds, requests; the
audit row written.

Baseline, in the same run, alternated with the report: one plain SQL count over the same rows
(``SELECT count(*) FROM conversations_block JOIN conversations_conversation ... WHERE
customer_external_id = %s``), the floor of touching the customer's projections at all. Printed:
the report's median and worst seconds, its queries (the same for 10 and 1,000 conversations: the
tests pin it), the baseline's median, and ``report/baseline``. The design's mark is the report
under a second on this machine for 1,000 conversations; the ratio is the figure to track.

    .venv/bin/python bench/access.py [--conversations 1000] [--rounds 7] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    BenchError,
    median,
    report,
    run_benchmark,
    setup_django,
    store_bodies,
    truncate_conversations,
)

CUSTOMER = "bench-access-subject"
BASELINE = """
    SELECT count(*) FROM conversations_block b
    JOIN conversations_conversation c ON c.id = b.conversation_id
    WHERE c.customer_external_id = %s
"""


def _bodies(prefix: str, n: int, customer: Any, start: int) -> Iterator[dict[str, Any]]:
    from conversations.demo import demo_bodies

    numbers: dict[str, int] = {}
    for body in demo_bodies(n, start=start):
        k = numbers.setdefault(body["conversation"], len(numbers))
        body["conversation"] = f"{prefix}-{body['conversation']}"
        body["customer"] = customer(k) if callable(customer) else customer
        yield body


def _report_once() -> tuple[float, int, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from retention.access import render_json, subject_access_read

    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        result = subject_access_read(user=None, customer=CUSTOMER, purpose="bench", fmt="json")
        render_json(result)
        seconds = time.perf_counter() - started
    return seconds, len(captured), result


def _baseline_once() -> float:
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cur:
        cur.execute(BASELINE, [CUSTOMER])
        cur.fetchone()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="200 conversations, 3 rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations, args.rounds = 200, 3
    setup_django()
    truncate_conversations()
    from django.conf import settings as conf

    conf.DEBUG = False
    from conversations.models import Conversation
    from conversations.sharing.selectors import conversation_export_read

    print(f"storing {args.conversations:,} conversations of one customer, 2,000 of others")
    store_bodies(_bodies("subject", args.conversations, CUSTOMER, 0))
    store_bodies(_bodies("other", 2000, lambda k: f"bench-other-{k % 311}", 10_000))
    ids = list(
        Conversation.objects.filter(customer_external_id=CUSTOMER).values_list("pk", flat=True)
    )
    if len(ids) != args.conversations:
        raise BenchError(f"{len(ids)} conversations stored for the customer")
    for pk in ids[:100]:
        conversation_export_read(user=None, id=pk, fmt="md")

    _report_once()  # warm: caches, plans
    _baseline_once()
    timings, baselines = [], []
    queries = 0
    result = None
    for _ in range(args.rounds):
        seconds, queries, result = _report_once()
        timings.append(seconds)
        baselines.append(_baseline_once())
    assert result is not None
    blocks = next(s.rows for s in result.stores if s.key == "conversations.block")
    pieces = sum(result.reasoning_held.by_kind.values())
    report(
        [
            (
                f"subject access report ({args.conversations:,} conversations, {blocks:,} blocks, "
                f"{pieces:,} pieces of reasoning measured)",
                f"median {median(timings):.3f} s, worst {max(timings):.3f} s, {queries} queries",
            ),
            ("  baseline: one SQL count of the same blocks", f"median {median(baselines):.4f} s"),
            ("  ratio report/baseline", f"{median(timings) / median(baselines):.1f}"),
        ]
    )
    return 0


if __name__ == "__main__":
    run_benchmark(main)
