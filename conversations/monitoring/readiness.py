"""The reasoning readiness report: how to size ``max_tokens`` from the measured tail, what
reasoning costs and what it buys (DESIGN section 11). ``manage.py reasoning_readiness`` prints it
(``--json`` for machines); ``/signals/readiness/`` shows it.

- The output-token p50/p90/p99 come from the rollups' DDSketch bins (``sketches.py``), within
  ``sketches.BOUND`` (1 %) of the exact values, or exact (``percentile_disc`` over the rows)
  where the exchanges are few (``EXACT_UP_TO``); the report says which (``quantiles``,
  ``relative_error``). The histogram (the chart) comes from the rollups' fixed buckets.
- The recommended ``max_tokens`` is sized from the tail, not the median: the p99 with
  ``HEADROOM`` on top, rounded up to a multiple of 256, and never below the largest thinking
  budget seen plus room for the answer (``ANSWER_ROOM``), since a ``max_tokens`` at or below the
  budget leaves the answer nothing.
- The arms: exchanges with reasoning on (thinking enabled/adaptive, or an effort set, or any
  reasoning tokens) and off. Price per exchange from the price table (reasoning billed as
  output); what customers did next, per conversation (its first exchange's arm), from the
  events API; the price per point of resolution gained.
- The alias warning: a requested model served by a dated snapshot (or by several) is an alias:
  pin the snapshot before sizing anything on it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Aggregate, Count, FloatField, Max, Q, QuerySet, Sum

from ..models import AllowanceProbe, ConversationEvent, Exchange, ModelPrice
from . import sketches
from .selectors import Sums, rollups_summed

HEADROOM = 1.25
ANSWER_ROOM = 1024
# Up to this many exchanges, the quantiles are read from the rows themselves (exact and cheap).
EXACT_UP_TO = 1000
QUANTILES = (50, 90, 99)
OUTCOMES = ("resolved", "rated", "escalated", "abandoned")


def recommend(p99: int | None, budget: int | None) -> int | None:
    """The recommended ``max_tokens`` for a measured p99 and the largest thinking budget."""
    if p99 is None:
        return None
    value = math.ceil(p99 * HEADROOM / 256) * 256
    if budget:
        value = max(value, math.ceil((budget + ANSWER_ROOM) / 256) * 256)
    return value


@dataclass
class Arm:
    name: str
    exchanges: int = 0
    conversations: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    price_per_exchange: float | None = None
    price_per_conversation: float | None = None
    outcomes: dict[str, float] = field(default_factory=dict)  # share of conversations


@dataclass
class Readiness:
    model: str | None
    queue: str | None
    since: str | None
    exchanges: int
    p50: int | None
    p90: int | None
    p99: int | None
    quantiles: str  # "exact" (from the rows) or "sketch" (from the rollups' DDSketch bins)
    relative_error: float  # the bound on p50/p90/p99's error: 0 when exact
    histogram: list[int]
    max_budget: int | None
    recommended_max_tokens: int | None
    hit_limit: int
    hidden_share: float | None  # reasoning tokens as a share of output tokens
    # Exchanges whose reasoning tokens were estimated (the provider counts them inside the
    # output): the report labels the share "estimated" when any was.
    hidden_estimated: int
    arms: list[Arm]
    price_per_resolution_point: float | None
    served_by: dict[str, list[str]]  # requested model -> snapshots that answered
    alias_warnings: list[str]
    probes: list[dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def precision(self) -> str:
        """How the p50/p90/p99 were read, in words."""
        if self.quantiles == "exact":
            return "exact, from the exchanges themselves"
        return f"within {self.relative_error * 100:g} % of exact (DDSketch)"


class _Percentile(Aggregate):
    """PostgreSQL's ``percentile_disc``: the nearest-rank percentile, exact."""

    function = "percentile_disc"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression: str, fraction: float) -> None:
        super().__init__(expression, fraction=fraction)


def _exact(rows: QuerySet[Exchange]) -> dict[int, int | None]:
    found = rows.filter(output_tokens__isnull=False).aggregate(
        **{f"p{q}": _Percentile("output_tokens", q / 100) for q in QUANTILES}
    )
    return {q: None if found[f"p{q}"] is None else int(found[f"p{q}"]) for q in QUANTILES}


def _prices() -> dict[str, ModelPrice]:
    return {p.model: p for p in ModelPrice.objects.all()}


def _cost(
    prices: dict[str, ModelPrice], model: str, alias: str, usage: Mapping[str, Any]
) -> float | None:
    price = prices.get(model) or prices.get(alias)
    if price is None:
        return None
    total = (
        Decimal(usage["i"] or 0) * price.input
        + Decimal(usage["cr"] or 0) * price.cache_read
        + Decimal(usage["cw"] or 0) * price.cache_write
        # Output tokens as providers report them include the reasoning: billed at the output price.
        + Decimal(usage["o"] or 0) * price.output
    )
    return float(total / Decimal(1_000_000))


_REASONING_ON = (
    Q(thinking__in=["enabled", "adaptive"]) | ~Q(effort__in=["", "none", "minimal"])
) | Q(reasoning_tokens__gt=0)


def reasoning_readiness(
    *,
    model: str | None = None,
    queue: str | None = None,
    queues: list[str] | None = None,
    since: datetime | None = None,
) -> Readiness:
    """The report for one served snapshot or requested model (``model`` matches either), one
    queue (or the ``queues`` a reader may see), since a date."""
    groups = rollups_summed(
        since=since, queue=queue, queues=queues, group_by=("requested_model", "served_model")
    )
    if model:
        groups = [
            g for g in groups if model in (g.group["served_model"], g.group["requested_model"])
        ]
    total = Sums.merged(groups)
    exchanges, truncated = total["exchanges"], total["truncated"]
    output, reasoning = total["output_tokens"], total["reasoning_tokens"]
    estimated = total["reasoning_estimated"]
    served_by: dict[str, list[str]] = {}
    for g in groups:
        served_by.setdefault(g.group["requested_model"], []).append(g.group["served_model"])
    warnings = []
    for requested, snapshots in sorted(served_by.items()):
        others = sorted({s for s in snapshots if s and s != requested})
        if requested and others:
            warnings.append(
                f"{requested!r} is an alias: it was served by {', '.join(others)}. Pin a "
                "snapshot: an alias moves, and the tail measured here moves with it."
            )
    rows = Exchange.objects.all()
    if model:
        rows = rows.filter(Q(response_model=model) | Q(requested_model=model))
    if queue is not None:
        rows = rows.filter(conversation__queue=queue)
    if queues is not None:
        rows = rows.filter(conversation__queue__in=queues)
    if since is not None:
        rows = rows.filter(
            Q(started_at__gte=since) | Q(started_at__isnull=True, created_at__gte=since)
        )
    max_budget = rows.aggregate(m=Max("budget_tokens"))["m"]
    prices = _prices()
    arms = []
    per_conv: dict[str, float | None] = {}
    resolved: dict[str, float] = {}
    for name, cond in (("with reasoning", _REASONING_ON), ("without reasoning", ~_REASONING_ON)):
        arm_rows = rows.filter(cond)
        usage = list(
            arm_rows.values("response_model", "requested_model").annotate(
                n=Count("id"),
                i=Sum("input_tokens"),
                cr=Sum("cache_read_tokens"),
                cw=Sum("cache_write_tokens"),
                o=Sum("output_tokens"),
                r=Sum("reasoning_tokens"),
            )
        )
        arm = Arm(name)
        cost: float | None = 0.0
        for u in usage:
            arm.exchanges += u["n"]
            arm.output_tokens += u["o"] or 0
            arm.reasoning_tokens += u["r"] or 0
            c = _cost(prices, u["response_model"], u["requested_model"], u)
            cost = None if c is None or cost is None else cost + c
        if not arm.exchanges:
            continue
        # A conversation belongs to the arm of its first exchange in the report.
        firsts = rows.filter(ordinal=1).filter(cond).values("conversation_id")
        arm.conversations = firsts.count()
        if cost is not None:
            arm.price_per_exchange = cost / arm.exchanges
            if arm.conversations:
                arm.price_per_conversation = (
                    cost / arm.exchanges * (arm.exchanges / arm.conversations)
                )
        if arm.conversations:
            counted = dict(
                ConversationEvent.objects.filter(conversation_id__in=firsts, type__in=OUTCOMES)
                .values("type")
                .annotate(n=Count("conversation_id", distinct=True))
                .values_list("type", "n")
            )
            arm.outcomes = {o: counted.get(o, 0) / arm.conversations for o in OUTCOMES}
            resolved[name] = arm.outcomes["resolved"]
        per_conv[name] = arm.price_per_conversation
        arms.append(arm)
    gained = None
    on_price, off_price = per_conv.get("with reasoning"), per_conv.get("without reasoning")
    if on_price is not None and off_price is not None and len(resolved) == 2:
        points = (resolved["with reasoning"] - resolved["without reasoning"]) * 100
        if points > 0:
            gained = (on_price - off_price) / points
    probe_rows = AllowanceProbe.objects.all()
    if model:
        # The probes of this model, of its snapshot, and of the aliases it served.
        names = {model} | {g.group["requested_model"] for g in groups} - {""}
        probe_rows = probe_rows.filter(Q(model__in=names) | Q(snapshot__in=names))
    probes = [
        {
            "model": p.model,
            "snapshot": p.snapshot,
            "kind": p.kind,
            "outcome": p.outcome,
            "http_status": p.http_status,
            "stop_reason": p.stop_reason,
            "output_tokens": p.output_tokens,
            "reasoning_tokens": p.reasoning_tokens,
            "max_tokens": p.max_tokens,
            "budget_tokens": p.budget_tokens,
            "probed_at": p.probed_at.isoformat(),
        }
        for p in probe_rows[:20]
    ]
    if exchanges <= EXACT_UP_TO:
        quantiles, error, at = "exact", 0.0, _exact(rows)
    else:
        bins = total.sketches["output_sketch"]
        quantiles, error = "sketch", sketches.BOUND
        at = {q: sketches.quantile(bins, q) for q in QUANTILES}
    p99 = at[99]
    return Readiness(
        model=model,
        queue=queue,
        since=since.isoformat() if since else None,
        exchanges=exchanges,
        p50=at[50],
        p90=at[90],
        p99=p99,
        quantiles=quantiles,
        relative_error=error,
        histogram=total.arrays["output_hist"],
        max_budget=max_budget,
        recommended_max_tokens=recommend(p99, max_budget),
        hit_limit=truncated,
        hidden_share=reasoning / output if output else None,
        hidden_estimated=estimated,
        arms=arms,
        price_per_resolution_point=gained,
        served_by={k: sorted(set(v)) for k, v in served_by.items()},
        alias_warnings=warnings,
        probes=probes,
    )
