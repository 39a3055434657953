"""What an alert rule can watch (DESIGN section 11): one registered entry per metric.

An ``AlertMetric`` is everything the signals know about one metric: its name (the rule's
``metric`` value) and label (the rule form's choice), its ``value`` from summed rollups (what
``monitoring_tick`` compares with the threshold), its ``words`` (the value as the pages and the
notifications show it), its ``detail`` (what else the numbers say about a breach) and the
exchanges ``behind`` a breach (a condition on the ``Exchange`` rows the alert page lists).

To add a metric: one entry in ``METRICS``. The rule's choices, the tick, the alert page and the
notifications read the registry; ``tests/monitoring/test_metrics.py`` walks every entry (its value
on a hand-built set of exchanges, and the exchanges behind it), so an entry without a case there
fails. A value the rollups do not yet count needs its column first (``rollups.py``: ``SUMS`` and
``contribute``). Imports no model: ``models.py`` reads the choices from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from django.db.models import Q

from .rewrites import SEEN


class Sums(Protocol):
    """Summed rollups (``selectors.Sums``; named here by shape: the models read this module, and
    the selectors sit above the models)."""

    def __getitem__(self, key: str) -> int: ...

    def rate(self, part: str, whole: str = "exchanges") -> float: ...

    def pct(self, name: str, q: float) -> int | None: ...


def share(value: float) -> str:
    return f"{value * 100:.1f} %"


def mean(value: float) -> str:
    return f"{value:.2f}"


def milliseconds(value: float) -> str:
    return f"{value:,.0f} ms"


def _nothing(s: Sums) -> str:
    return ""


@dataclass(frozen=True)
class AlertMetric:
    name: str
    label: str
    value: Callable[[Sums], float]
    # The exchanges behind a breach, for a rule's threshold (a condition on ``Exchange`` rows).
    behind: Callable[[float], Q]
    words: Callable[[float], str] = share
    detail: Callable[[Sums], str] = _nothing
    # The rollups' sketches ``value`` reads (``rollups.SKETCHES``): the tick reads no other.
    sketches: tuple[str, ...] = ()


def _truncation_detail(s: Sums) -> str:
    if not s["truncated_output_tokens"]:
        return ""
    part = s["truncated_reasoning_tokens"] / s["truncated_output_tokens"]
    return f"reasoning was {part * 100:.0f} % of the truncated answers' output"


def _repeated_detail(s: Sums) -> str:
    return f"{s['repeated_tool_calls']:,} calls repeated a call with the same arguments"


def _latency_p95(s: Sums) -> float:
    return float(s.pct("latency", 95) or 0)


_ENTRIES = (
    AlertMetric(
        "truncation",
        "truncated answers (share of exchanges)",
        value=lambda s: s.rate("truncated"),
        behind=lambda threshold: Q(truncated=True),
        detail=_truncation_detail,
    ),
    AlertMetric(
        "tool_calls_per_turn",
        "tool calls per turn (mean)",
        value=lambda s: s.rate("tool_calls"),
        behind=lambda threshold: Q(tool_call_count__gt=threshold),
        words=mean,
    ),
    AlertMetric(
        "repeated_tool_calls",
        "turns repeating a tool call with the same arguments",
        value=lambda s: s.rate("looping"),
        behind=lambda threshold: Q(repeated_tool_calls__gt=0),
        detail=_repeated_detail,
    ),
    AlertMetric(
        "tool_error_rate",
        "tool results reporting an error (share)",
        value=lambda s: s.rate("tool_errors", "tool_results"),
        behind=lambda threshold: Q(tool_errors__gt=0),
    ),
    AlertMetric(
        "refusal_rate",
        "refusals (share of exchanges)",
        value=lambda s: s.rate("refusals"),
        behind=lambda threshold: Q(refusal=True),
    ),
    AlertMetric(
        "rewrite_rate",
        "history rewritten in what the model sees: prompt-cache misses (share)",
        value=lambda s: s.rate("rewritten"),
        # Only the kinds the model sees (rewrites.SEEN): a change it does not see never fires.
        behind=lambda threshold: Q(rewrite_kind__in=SEEN),
    ),
    AlertMetric(
        "latency_p95",
        "latency p95 (ms)",
        value=_latency_p95,
        behind=lambda threshold: Q(latency_ms__gt=threshold),
        words=milliseconds,
        sketches=("latency_sketch",),
    ),
)
METRICS: dict[str, AlertMetric] = {m.name: m for m in _ENTRIES}

# A rule whose metric has left the registry: evaluated as zero (never fires), shown as a number,
# nothing behind it; its page still opens.
_UNKNOWN = AlertMetric("", "", value=lambda s: 0.0, behind=lambda t: Q(pk__in=[]), words=mean)


def metric(name: str) -> AlertMetric:
    return METRICS.get(name, _UNKNOWN)


def choices() -> list[tuple[str, str]]:
    """The rule form's choices (``AlertRule.metric``)."""
    return [(m.name, m.label) for m in _ENTRIES]


def shown(name: str, value: float) -> str:
    """A metric's value in words."""
    return metric(name).words(value)


class _Rule(Protocol):
    metric: str
    threshold: float


class _Alert(Protocol):
    queue: str
    snapshot: str
    window_start: datetime


def behind(rule: _Rule, alert: _Alert) -> Q:
    """The exchanges behind an alert: in its scope and window, meeting its metric's condition
    (read from the rows, so they are found whatever the rollups hold)."""
    scope = Q(conversation__queue=alert.queue, response_model=alert.snapshot) & (
        Q(started_at__gte=alert.window_start)
        | Q(started_at__isnull=True, created_at__gte=alert.window_start)
    )
    return scope & metric(rule.metric).behind(rule.threshold)
