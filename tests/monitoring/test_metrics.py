"""Every alert metric of the registry (``signals/metrics.py``) against a hand-built set of
exchanges: its value from the rollups, its words, the exchanges behind a breach (read from the
rows, so found while the rollups lag), and the tick firing on it; then every format's finish
values walked through its finish table into the truncation and refusal alerts.

Rows are written directly (the fields the signals read), then summed by the rollup path itself
(``rollups_rebuild``): no server, no provider, not slow.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from conversations.formats import formats
from conversations.formats.profile import FINISH_ORDER, Finish
from conversations.models import Alert, AlertRule, Conversation, Exchange, Rollup
from conversations.monitoring import sketches
from conversations.monitoring.alerts import monitoring_tick
from conversations.monitoring.metrics import METRICS, behind, shown
from conversations.monitoring.rewrites import SEEN
from conversations.monitoring.rollups import hour_of, rollups_rebuild
from conversations.monitoring.selectors import rollups_summed
from tests.conversations.formats.test_profiles import BUILDERS

pytestmark = pytest.mark.django_db
SNAPSHOT = "snap-A"

# The hand-built set: one row per exchange in scope (queue billing, SNAPSHOT, this hour).
ROWS: list[dict[str, Any]] = [
    {"truncated": True, "output_tokens": 1000, "reasoning_tokens": 800, "latency_ms": 4000},
    {"truncated": True, "output_tokens": 1000, "reasoning_tokens": 600, "latency_ms": 3000},
    {"refusal": True, "latency_ms": 200},
    {"tool_call_count": 3, "repeated_tool_calls": 2, "tool_results": 2, "tool_errors": 1},
    {"tool_call_count": 1, "tool_results": 3, "tool_errors": 0, "latency_ms": 900},
    {"tool_call_count": 5, "repeated_tool_calls": 1, "tool_results": 1, "tool_errors": 1},
    {"rewrite_kind": "reserialised", "latency_ms": 1200},
    {"rewrite_kind": "tool_loop_reasoning", "latency_ms": 700},
    {"latency_ms": 500},
    {"latency_ms": 650},
]
N = len(ROWS)


def _get(row: dict[str, Any], field: str) -> Any:
    return row.get(field, {"rewrite_kind": "", "truncated": False, "refusal": False}.get(field, 0))


def _latencies() -> list[int]:
    return sorted(r["latency_ms"] for r in ROWS if "latency_ms" in r)


def _p95() -> int:
    values = _latencies()
    return values[math.ceil(0.95 * len(values)) - 1]


# Per metric: (its value computed here from ROWS, the threshold to try, which rows are behind a
# breach, the value in words). A metric of the registry without a case here fails the walk.
Case = tuple[float, float, Callable[[dict[str, Any]], bool], str]
CASES: dict[str, Case] = {
    "truncation": (2 / N, 0.1, lambda r: _get(r, "truncated"), "20.0 %"),
    "tool_calls_per_turn": (9 / N, 2, lambda r: _get(r, "tool_call_count") > 2, "0.90"),
    "repeated_tool_calls": (2 / N, 0.1, lambda r: _get(r, "repeated_tool_calls") > 0, "20.0 %"),
    "tool_error_rate": (2 / 6, 0.1, lambda r: _get(r, "tool_errors") > 0, "33.3 %"),
    "refusal_rate": (1 / N, 0.05, lambda r: _get(r, "refusal"), "10.0 %"),
    # Only the kinds the model sees (the re-serialised row does not count: rewrites.SEEN).
    "rewrite_rate": (1 / N, 0.05, lambda r: _get(r, "rewrite_kind") in SEEN, "10.0 %"),
    # The p95 of 8 latencies is the largest; read from the sketch, its bin's value (within 0.5 %).
    "latency_p95": (4000, 1000, lambda r: (r.get("latency_ms") or 0) > 1000, "4,004 ms"),
}


def test_every_metric_of_the_registry_has_a_case() -> None:
    assert set(CASES) == set(METRICS)
    assert {m for m, _ in AlertRule._meta.get_field("metric").choices} == set(METRICS)  # type: ignore[misc]


def _conversation(name: str, queue: str) -> Conversation:
    return Conversation.objects.create(
        external_id=name, customer_external_id=f"cus-{name}", queue=queue,
        last_activity_at=timezone.now(),
    )  # fmt: skip


def _exchange(conversation: Conversation, ordinal: int, **fields: Any) -> Exchange:
    fields.setdefault("started_at", timezone.now())
    return Exchange(
        conversation=conversation,
        ordinal=ordinal,
        settings_ciphertext=b"",
        format=fields.pop("format", "anthropic.messages"),
        requested_model=fields.pop("requested_model", "alias"),
        response_model=fields.pop("response_model", SNAPSHOT),
        **fields,
    )


def hand_built() -> dict[int, dict[str, Any]]:
    """ROWS stored (by primary key), beside exchanges out of scope: another queue, another
    snapshot, before the window. The rollups are not touched (they lag)."""
    here = _conversation("m-billing", "billing")
    stored = Exchange.objects.bulk_create(
        _exchange(here, i + 1, **row) for i, row in enumerate(ROWS)
    )
    # Out of scope, each meeting every condition: none may be behind the alert.
    worst = {"truncated": True, "refusal": True, "tool_call_count": 9, "tool_results": 2}
    worst |= {"repeated_tool_calls": 3, "tool_errors": 2, "rewrite_kind": "edited"}
    worst |= {"latency_ms": 9000}
    other = _conversation("m-shipping", "shipping")
    Exchange.objects.bulk_create(
        [
            _exchange(other, 1, **worst),
            _exchange(here, N + 1, response_model="snap-B", **worst),
            _exchange(here, N + 2, **worst, started_at=timezone.now() - timedelta(days=3)),
        ]
    )
    return {e.pk: row for e, row in zip(stored, ROWS, strict=True)}


def window() -> Any:
    return hour_of(timezone.now()) - timedelta(hours=1)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_each_metric_value_words_and_the_exchanges_behind_it(name: str) -> None:
    expected, threshold, is_behind, words = CASES[name]
    rows = hand_built()
    rule = AlertRule(name=name, metric=name, threshold=threshold)
    alert = Alert(rule=rule, queue="billing", snapshot=SNAPSHOT, window_start=window())
    # The exchanges behind are read from the rows: found before the rollups hold anything.
    assert not Rollup.objects.exists()
    found = set(Exchange.objects.filter(behind(rule, alert)).values_list("pk", flat=True))
    assert found == {pk for pk, row in rows.items() if is_behind(row)}
    assert found  # each case has exchanges behind it
    # The value, from the rollups once they caught up.
    rollups_rebuild()
    (group,) = rollups_summed(
        since=window(), queue="billing", snapshot=SNAPSHOT, group_by=("queue", "served_model")
    )
    assert group["exchanges"] == N
    value = METRICS[name].value(group)
    assert math.isclose(value, expected, rel_tol=sketches.BOUND), (name, value, expected)
    assert shown(name, value) == words


def test_the_details_say_what_else_the_numbers_say() -> None:
    hand_built()
    rollups_rebuild()
    (group,) = rollups_summed(since=window(), queue="billing", snapshot=SNAPSHOT)
    # 1,400 of the truncated answers' 2,000 output tokens were reasoning.
    assert METRICS["truncation"].detail(group) == (
        "reasoning was 70 % of the truncated answers' output"
    )
    assert METRICS["repeated_tool_calls"].detail(group) == (
        "3 calls repeated a call with the same arguments"
    )
    assert METRICS["refusal_rate"].detail(group) == ""


def test_the_tick_fires_each_metric_above_its_threshold_and_not_below() -> None:
    hand_built()
    rollups_rebuild()
    AlertRule.objects.update(enabled=False)  # the shipped rules: not this test's
    for name, (expected, *_rest) in CASES.items():
        for side, factor in (("above", 0.9), ("below", 1.1)):
            AlertRule.objects.create(
                name=f"{name} {side}", metric=name, threshold=expected * factor, min_exchanges=N
            )
    monitoring_tick()
    firing = {
        a.rule.name: a
        for a in Alert.objects.select_related("rule").filter(
            state=Alert.State.FIRING, queue="billing", snapshot=SNAPSHOT
        )
    }
    assert set(firing) == {f"{name} above" for name in CASES}
    for name, (expected, *_rest) in CASES.items():
        assert math.isclose(firing[f"{name} above"].value, expected, rel_tol=sketches.BOUND)
    # Out of scope, the worst exchanges are each alone in their group: below the volume.
    assert not Alert.objects.filter(rule__name__endswith="below").exists()
    assert not Alert.objects.exclude(queue="billing", snapshot=SNAPSHOT).exists()


# --- every format's finish values, through its finish table, into the alerts ---------------

WALK = [
    (fmt.name, raw, rule.kind) for fmt in formats() for raw, rule in fmt.profile.finishes.items()
]


def test_every_finish_value_reaches_the_truncation_and_refusal_metrics() -> None:
    conversation = _conversation("finishes", "billing")
    rows = []
    for i, (fmt, raw, _kind) in enumerate(WALK):
        params = BUILDERS[fmt](raw).params  # the format's own parser sets the flags
        rows.append(
            _exchange(
                conversation,
                i + 1,
                format=fmt,
                stop_reason=raw,
                response_model=f"{fmt} {raw}",
                truncated=params.truncated,
                refusal=params.refusal,
            )
        )
    Exchange.objects.bulk_create(rows)
    rollups_rebuild()
    groups = {g.group["served_model"]: g for g in rollups_summed(group_by=("served_model",))}
    for fmt, raw, kind in WALK:
        g = groups[f"{fmt} {raw}"]
        assert METRICS["truncation"].value(g) == (1.0 if kind is Finish.TRUNCATED else 0.0)
        assert METRICS["refusal_rate"].value(g) == (1.0 if kind is Finish.REFUSED else 0.0)
        assert g.arrays["finishes"][FINISH_ORDER.index(kind)] == 1, (fmt, raw)
    AlertRule.objects.update(enabled=False)  # the shipped rules: not this test's
    for name in ("truncation", "refusal_rate"):
        AlertRule.objects.create(name=f"walk {name}", metric=name, threshold=0.5, min_exchanges=1)
    monitoring_tick()

    def firing(rule: str) -> set[str]:
        return set(
            Alert.objects.filter(rule__name=rule, state=Alert.State.FIRING).values_list(
                "snapshot", flat=True
            )
        )

    truncated = {f"{f} {r}" for f, r, k in WALK if k is Finish.TRUNCATED}
    refused = {f"{f} {r}" for f, r, k in WALK if k is Finish.REFUSED}
    assert firing("walk truncation") == truncated
    assert firing("walk refusal_rate") == refused
    # The AI SDK's content filter is a refusal: it fires the refusal alert.
    assert "ai-sdk.ui content-filter" in refused
    assert truncated and "ai-sdk.ui length" in truncated
