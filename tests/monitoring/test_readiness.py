"""The readiness report against percentiles computed from the stored exchanges themselves."""

from __future__ import annotations

import io
import json
import math
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.core.management import call_command

from conversations.models import Conversation, Exchange, ModelPrice
from conversations.monitoring import buckets
from conversations.monitoring.alerts import model_price_save
from conversations.monitoring.readiness import recommend
from conversations.services import conversation_record_event
from tests.monitoring.helpers import store, text, thinking, user

pytestmark = pytest.mark.django_db
SNAPSHOT = "claude-sonnet-4-5-20250929"


def seed() -> None:
    # A long tail: most answers short, a few very long (the median would size max_tokens wrong).
    for i in range(200):
        out = 80 + (i * 37) % 400 if i % 40 else 3000 + i * 7
        reasoning = out // 2 if i % 2 else None
        store(
            f"r-{i}",
            [user("q")],
            [thinking(), text("a")] if reasoning else [text("a")],
            output=out,
            reasoning=reasoning,
        )
    model_price_save(
        price=ModelPrice(
            model=SNAPSHOT,
            input=Decimal(3),
            cache_read=Decimal("0.3"),
            cache_write=Decimal("3.75"),
            output=Decimal(15),
        )
    )
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for c in Conversation.objects.all():
        n = int(c.external_id.split("-")[1])
        # Reasoning conversations (odd) resolve more often than the others.
        if (n % 2 and n % 3) or n % 5 == 0:
            conversation_record_event(conversation=c, type="resolved", at=at, value=None)


def test_p99_and_recommendation_match_the_exchanges_themselves() -> None:
    seed()
    out = io.StringIO()
    call_command("reasoning_readiness", "--model", SNAPSHOT, "--json", stdout=out)
    report = json.loads(out.getvalue())
    stored = list(Exchange.objects.values_list("output_tokens", flat=True))
    exact = buckets.exact_percentile(stored, 99)
    assert exact is not None
    # 200 exchanges: few enough to be read from the rows themselves, exactly.
    assert (report["quantiles"], report["relative_error"]) == ("exact", 0.0)
    assert report["p99"] == exact
    assert report["recommended_max_tokens"] == recommend(report["p99"], None)
    assert report["recommended_max_tokens"] >= exact * 1.25
    assert report["recommended_max_tokens"] % 256 == 0
    median = buckets.exact_percentile(stored, 50)
    assert median is not None and report["recommended_max_tokens"] > 4 * median
    for q in (50, 90):
        assert report[f"p{q}"] == buckets.exact_percentile(stored, q)
    assert report["exchanges"] == 200
    reasoning = sum(
        Exchange.objects.exclude(reasoning_tokens=None).values_list("reasoning_tokens", flat=True)
    )
    assert math.isclose(report["hidden_share"], reasoning / sum(stored))
    arms = {a["name"]: a for a in report["arms"]}
    assert arms["with reasoning"]["exchanges"] == 100
    assert arms["without reasoning"]["exchanges"] == 100
    on, off = arms["with reasoning"], arms["without reasoning"]
    assert on["outcomes"]["resolved"] > off["outcomes"]["resolved"]
    assert report["price_per_resolution_point"] is not None
    expected = (on["price_per_conversation"] - off["price_per_conversation"]) / (
        (on["outcomes"]["resolved"] - off["outcomes"]["resolved"]) * 100
    )
    assert math.isclose(report["price_per_resolution_point"], expected)
    # claude-sonnet-4-5 was asked for and a dated snapshot answered: an alias.
    assert any("'claude-sonnet-4-5' is an alias" in w for w in report["alias_warnings"])


def test_the_budget_floors_the_recommendation() -> None:
    assert recommend(500, 4000) == math.ceil((4000 + 1024) / 256) * 256
    assert recommend(None, 4000) is None


def test_text_output() -> None:
    seed()
    out = io.StringIO()
    call_command("reasoning_readiness", stdout=out)
    text_out = out.getvalue()
    assert "recommended max_tokens" in text_out and "WARNING" in text_out
    # 200 exchanges: read exactly, and the report says so.
    assert "(exact, from the exchanges themselves)" in text_out
