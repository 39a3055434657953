"""Quantiles from the rollups' DDSketch bins against the exact values of the same exchanges.

10,000 exchanges are generated (a long tail of output tokens and latencies, over two days and
two snapshots), stored as rows in bulk and summed into the rollups by the rollup path itself
(``rollups_rebuild``: the ``contribution`` of each row, the upsert that merges the sketches);
the report then reads 48 hours x 2 snapshots of rows and merges their sketches.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection

from conversations.models import Conversation, Exchange
from conversations.monitoring import sketches
from conversations.monitoring.readiness import EXACT_UP_TO, reasoning_readiness
from conversations.monitoring.rollups import rollups_rebuild
from conversations.monitoring.selectors import Sums, rollups_summed

pytestmark = pytest.mark.django_db
EXCHANGES = 10_000
ALIAS = "claude-sonnet-4-5"
SNAPSHOTS = ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20251101")


def nearest_rank(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def copy_rows(prototype: Exchange, varying: list[dict[str, Any]]) -> None:
    """Insert one row per ``varying`` (the fields that differ from ``prototype``'s) with one
    ``COPY``: a ``bulk_create`` of 10,000 wide rows spends seconds building its query. Each value
    as Django prepares it for the database."""
    fields = [f for f in Exchange._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    base = {
        f.attname: f.get_db_prep_save(getattr(prototype, f.attname), connection) for f in fields
    }
    connection.ensure_connection()
    with (
        connection.connection.cursor() as cur,
        cur.copy(f"COPY {Exchange._meta.db_table} ({columns}) FROM STDIN") as copy,
    ):
        for row in varying:
            values = base | row
            copy.write_row([values[f.attname] for f in fields])


def generate(exchanges: int = EXCHANGES) -> tuple[list[int], list[int]]:
    """Store ``exchanges`` exchanges over two days; their output tokens and latencies."""
    rng = random.Random(25)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    conversations = Conversation.objects.bulk_create(
        Conversation(
            external_id=f"q-{i}",
            customer_external_id=f"cus-{i}",
            queue="billing",
            last_activity_at=start,
        )
        for i in range(100)
    )
    prototype = Exchange(
        conversation=conversations[0],
        ordinal=1,
        settings_ciphertext=b"",
        format="anthropic",
        requested_model=ALIAS,
        stop_reason="end_turn",
        input_tokens=100,
        created_at=start,
    )
    outputs, latencies, rows = [], [], []
    for n in range(exchanges):
        # Most answers short, a long tail (a log-normal: the p99 is ten times the median).
        output = int(rng.lognormvariate(6.0, 1.0))
        latency = int(rng.lognormvariate(7.0, 0.6))
        outputs.append(output)
        latencies.append(latency)
        rows.append(
            {
                "conversation_id": conversations[n % 100].pk,
                "ordinal": n // 100 + 1,
                "started_at": start + timedelta(minutes=n * 48 * 60 // exchanges),
                "response_model": SNAPSHOTS[n % 2],
                "output_tokens": output,
                "latency_ms": latency,
                "tool_call_count": n % 7,
            }
        )
    copy_rows(prototype, rows)
    assert rollups_rebuild() == exchanges
    return outputs, latencies


def test_the_reports_quantiles_are_within_one_percent_of_exact() -> None:
    outputs, latencies = generate()
    report = reasoning_readiness(model=ALIAS)
    assert report.exchanges == EXCHANGES > EXACT_UP_TO
    assert (report.quantiles, report.relative_error) == ("sketch", sketches.BOUND)
    assert report.precision == "within 1 % of exact (DDSketch)"
    for q, found in ((50, report.p50), (90, report.p90), (99, report.p99)):
        exact = nearest_rank(outputs, q)
        assert found is not None
        assert abs(found - exact) <= 0.01 * exact, (q, found, exact)
    # The advice reads the true tail: the p99 with headroom, not the median's.
    assert report.recommended_max_tokens is not None
    assert report.recommended_max_tokens >= nearest_rank(outputs, 99) * 1.25 * 0.99
    # The model page and the alerts read the same sketches, merged over hours and snapshots.
    total = Sums.merged(rollups_summed(group_by=("served_model",)))
    assert total["exchanges"] == EXCHANGES
    for q in (50, 95, 99):
        exact = nearest_rank(latencies, q)
        found = total.pct("latency", q)
        assert found is not None and abs(found - exact) <= 0.01 * exact, (q, found, exact)
    # Tool calls (0..6 per exchange) are small whole numbers: read exactly.
    calls = [n % 7 for n in range(EXCHANGES)]
    assert total.pct("tool_calls", 90) == nearest_rank(calls, 90)


def test_a_sketch_merged_is_the_sketch_of_the_union_and_subtracts_exactly() -> None:
    rng = random.Random(7)
    a = [int(rng.expovariate(1 / 500)) for _ in range(3000)]
    b = [int(rng.expovariate(1 / 50)) for _ in range(3000)]
    merged = sketches.of(a)
    sketches.add(merged, sketches.of(b))
    assert merged == sketches.of(a + b)
    for q in (1, 50, 90, 99, 100):
        exact = nearest_rank(a + b, q)
        assert abs((sketches.quantile(merged, q) or 0) - exact) <= sketches.ALPHA * exact + 0.5
    sketches.add(merged, sketches.of(b), -1)
    assert merged == sketches.of(a)
    # Whole numbers below 100 each have a bin of their own: exact.
    small = list(range(100))
    assert [sketches.quantile(sketches.of(small), q) for q in (1, 50, 100)] == [0, 49, 99]
    assert sketches.quantile({}, 50) is None


def test_few_exchanges_are_read_exactly() -> None:
    outputs, _ = generate(600)
    report = reasoning_readiness(model=ALIAS)
    assert report.exchanges == 600 <= EXACT_UP_TO
    assert (report.quantiles, report.relative_error) == ("exact", 0.0)
    assert (report.p50, report.p90, report.p99) == tuple(
        nearest_rank(outputs, q) for q in (50, 90, 99)
    )
