"""The audited selectors of the signals' pages: access (the reader's queues), the rollups, the
audit row last (the shape of ``conversations/selectors/audited.py``).

A signals page shows numbers about many conversations, so it is a read like a list: only the
queues the reader may see count (a queue one may not see is a 404, like a missing one), and each
read writes one ``signals.viewed`` row. The conversations behind an alert are looked up from the
exchanges at read time, under the reader's queues: alerts store none.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.http import Http404
from django.utils import timezone
from django.utils.safestring import SafeString

import audit

from ...formats.profile import FINISH_ORDER, Finish
from ...models import Alert, AlertEvent, AlertRule, Conversation, Exchange, ModelPrice
from ...permissions import require_reader, visible_queues
from .. import charts, sketches
from ..metrics import behind, shown
from ..readiness import Readiness, reasoning_readiness
from ..selectors import Sums, rollup_tokens_by_day, rollups_summed

# The model page's words of the five finish kinds (``formats.profile.Finish``), in the rollup's
# column order (``FINISH_ORDER``).
FINISH_WORDS = {
    Finish.FINISHED: "finished",
    Finish.TRUNCATED: "cut off (max tokens)",
    Finish.TOOL_CALL: "called a tool",
    Finish.REFUSED: "refused",
    Finish.OTHER: "other",
}


def _queues(user: Any, queue: str | None) -> list[str]:
    """The queues a read covers: the one asked for (404 unless the reader sees it), or all the
    reader sees."""
    require_reader(user)
    names = list(visible_queues(user).values_list("name", flat=True))
    if queue is None:
        return names
    if queue not in names:
        raise Http404("no such page")
    return [queue]


@dataclass(frozen=True)
class ModelRow:
    snapshot: str
    queue: str
    exchanges: int


# The models-served table shows this many (snapshot, queue) pairs a page, busiest first: a
# token that posts junk model names cannot make the page grow without limit.
MODELS_PAGE = 50


@dataclass(frozen=True)
class SignalsIndex:
    models: list[ModelRow]  # one page of them, busiest first
    alerts: list[Alert]
    audit_id: int
    # Cost per queue per day (the rollups' tokens at the price table's prices): a chart each.
    costs: list[tuple[str, SafeString, float]] = field(default_factory=list)
    unpriced: list[str] = field(default_factory=list)  # models the price table does not name
    page: int = 1  # of the models-served table
    pages: int = 1


def _costs(queues: list[str], since: Any) -> tuple[list[tuple[str, SafeString, float]], list[str]]:
    """Each queue's cost per day from the rollups (one query) and the price table (one query),
    priced as the model page prices them (the snapshot's row, else the alias's)."""
    rows = rollup_tokens_by_day(
        since=since, queues=queues, zone=timezone.get_current_timezone_name()
    )
    names = {n for r in rows for n in r[2:4] if n}
    prices = {p.model: p for p in ModelPrice.objects.filter(model__in=names)} if names else {}
    per: dict[str, dict[Any, float]] = {}
    unpriced: set[str] = set()
    for day, queue, served, requested, fresh, cached, written, output in rows:
        price = prices.get(served) or prices.get(requested)
        if price is None:
            unpriced.add(served or requested or "(no model reported)")
            continue
        cost = (
            fresh * float(price.input)
            + cached * float(price.cache_read)
            + written * float(price.cache_write)
            + output * float(price.output)
        ) / 1_000_000
        days = per.setdefault(queue, {})
        days[day] = days.get(day, 0.0) + cost
    charts_out = []
    for queue, days in sorted(per.items()):
        bars = [(f"{d:%b %d}", v, f"${v:,.2f}") for d, v in sorted(days.items())]
        title = f"Cost per day, queue {queue or '(none)'}"
        charts_out.append((queue, charts.bars(bars, title=title), sum(days.values())))
    return charts_out, sorted(unpriced)


@transaction.atomic
def signals_index_read(*, user: Any, days: int = 30, page: int = 1) -> SignalsIndex:
    """The snapshots served in the reader's queues over ``days`` (page ``page`` of them, busiest
    first; past the last page: the last), and their alerts."""
    queues = _queues(user, None)
    since = timezone.now() - timedelta(days=days)
    every = sorted(
        (
            ModelRow(s.group["served_model"], s.group["queue"], s["exchanges"])
            for s in rollups_summed(since=since, queues=queues, group_by=("served_model", "queue"))
        ),
        key=lambda r: (-r.exchanges, r.snapshot, r.queue),
    )
    pages = max(1, -(-len(every) // MODELS_PAGE))
    page = min(max(1, page), pages)
    rows = every[(page - 1) * MODELS_PAGE : page * MODELS_PAGE]
    alerts = list(
        Alert.objects.select_related("rule")
        .filter(queue__in=queues)  # an alert of exchanges with no queue: the admin only
        .order_by("state", "-since")[:100]
    )
    costs, unpriced = _costs(queues, since)
    event = audit.record("signals.viewed", actor=user, page="index", rows=len(rows))
    return SignalsIndex(rows, alerts, event.pk, costs, unpriced, page, pages)


@dataclass(frozen=True)
class ModelPage:
    snapshot: str
    queue: str | None
    queues: list[str]
    days: int
    exchanges: int
    conversations: int
    output: dict[str, int | None]
    reasoning_share: float | None
    # Exchanges whose reasoning was estimated (the provider counts it inside the output), of
    # those that reasoned: the page labels the share "estimated" when any was.
    reasoning_estimated: int
    finishes: list[tuple[str, int, float]]
    latency: dict[str, int | None]
    cache_read_share: float | None
    tool_calls_per_turn: float | None
    # The backend's conformance (rewrites.py): rewrites the model sees and the cache reads they
    # lost, changes it does not see, and the provider's own verdict (input_transformations).
    conformance: dict[str, int]
    tool_calls_p90: int | None
    price: ModelPrice | None
    price_per_1000: float | None
    requested: list[tuple[str, int]]  # aliases asked for that this snapshot answered
    output_chart: SafeString
    latency_chart: SafeString
    finish_chart: SafeString
    audit_id: int
    # How the percentiles were read (the rollups' sketches: a bounded relative error).
    precision: str = f"within {sketches.BOUND * 100:g} % of exact (DDSketch)"


def _price_per_1000(price: ModelPrice | None, s: Sums) -> float | None:
    if price is None or not s["conversations"]:
        return None
    cost = (
        s["input_tokens"] * float(price.input)
        + s["cache_read_tokens"] * float(price.cache_read)
        + s["cache_write_tokens"] * float(price.cache_write)
        # output tokens as reported include the reasoning: billed as output
        + s["output_tokens"] * float(price.output)
    ) / 1_000_000
    return cost / s["conversations"] * 1000


@transaction.atomic
def model_page_read(
    *, user: Any, snapshot: str, queue: str | None = None, days: int = 30
) -> ModelPage:
    """One served snapshot, in one queue (or all the reader's queues), over ``days``."""
    queues = _queues(user, queue)
    since = timezone.now() - timedelta(days=days)
    groups = rollups_summed(
        since=since, queues=queues, snapshot=snapshot, group_by=("requested_model",)
    )
    if not groups:
        raise Http404("no such page")
    total = Sums.merged(groups)
    requested = sorted(
        ((g.group["requested_model"], g["exchanges"]) for g in groups), key=lambda r: -r[1]
    )
    price = (
        ModelPrice.objects.filter(model__in=[snapshot, *(r for r, _ in requested)])
        .order_by("-model")  # the snapshot's own price first when both exist
        .first()
    )
    n = total["exchanges"]
    finishes = [
        (FINISH_WORDS[kind], count, count / n if n else 0.0)
        for kind, count in zip(FINISH_ORDER, total.arrays["finishes"], strict=True)
    ]
    inputs = total["input_tokens"] + total["cache_read_tokens"] + total["cache_write_tokens"]
    page = ModelPage(
        snapshot=snapshot,
        queue=queue,
        queues=queues,
        days=days,
        exchanges=n,
        conversations=total["conversations"],
        output={
            "p50": total.pct("output", 50),
            "p90": total.pct("output", 90),
            "p99": total.pct("output", 99),
        },
        reasoning_share=total["reasoning_tokens"] / total["output_tokens"]
        if total["output_tokens"]
        else None,
        reasoning_estimated=total["reasoning_estimated"],
        finishes=finishes,
        latency={"p50": total.pct("latency", 50), "p95": total.pct("latency", 95)},
        cache_read_share=total["cache_read_tokens"] / inputs if inputs else None,
        tool_calls_per_turn=total["tool_calls"] / n if n else None,
        conformance={
            k: total[k]
            for k in (
                "rewritten",
                "cache_lost_tokens",
                "rewrite_unseen",
                "rewrite_reserialised",
                "thinking_dropped",
                "thinking_mismatch_allowed",
            )
        },
        tool_calls_p90=total.pct("tool_calls", 90),
        price=price,
        price_per_1000=_price_per_1000(price, total),
        requested=requested,
        output_chart=charts.histogram(
            total.arrays["output_hist"], title="Output tokens per exchange", unit="tokens"
        ),
        latency_chart=charts.histogram(
            total.arrays["latency_hist"], title="Latency per exchange", unit="ms"
        ),
        finish_chart=charts.bars(
            [(w, c, f"{c:,} ({s * 100:.1f} %)") for w, c, s in finishes if c],
            title="Finish reasons",
        ),
        audit_id=0,
    )
    event = audit.record(
        "signals.viewed", actor=user, page="model", snapshot=snapshot[:200], queue=queue or ""
    )
    return replace(page, audit_id=event.pk)


@dataclass(frozen=True)
class AlertPage:
    alert: Alert
    rule: AlertRule
    value: str
    threshold: str
    events: list[tuple[AlertEvent, str]]
    conversations: list[Conversation]
    audit_id: int


@transaction.atomic
def alert_read(*, user: Any, id: int, limit: int = 50) -> AlertPage:
    """One alert: its rule, its history, and the conversations behind it that the reader may see
    (404 for an alert of a queue the reader may not see)."""
    queues = _queues(user, None)
    alert = Alert.objects.select_related("rule").filter(pk=id, queue__in=queues).first()
    if alert is None:
        raise Http404("no such alert")
    rule = alert.rule
    events = [(e, shown(rule.metric, e.value)) for e in alert.events.all()[:50]]
    ids = (
        Exchange.objects.filter(behind(rule, alert))
        .values("conversation_id")
        .annotate(last=Max("id"))
        .order_by("-last")
        .values_list("conversation_id", flat=True)[:limit]
    )
    found = {c.pk: c for c in Conversation.objects.filter(pk__in=list(ids), queue__in=queues)}
    conversations = sorted(found.values(), key=lambda c: c.last_activity_at, reverse=True)
    event = audit.record(
        "signals.viewed", actor=user, page="alert", alert=alert.pk, conversations=len(conversations)
    )
    return AlertPage(
        alert,
        rule,
        shown(rule.metric, alert.value),
        shown(rule.metric, rule.threshold),
        events,
        conversations,
        event.pk,
    )


@dataclass(frozen=True)
class ReadinessPage:
    report: Readiness
    chart: SafeString
    queue: str | None
    audit_id: int


@transaction.atomic
def readiness_read(
    *, user: Any, model: str | None = None, queue: str | None = None, since: datetime | None = None
) -> ReadinessPage:
    """The readiness report over the reader's queues (or the one asked for)."""
    queues = _queues(user, queue)
    report = reasoning_readiness(model=model, queues=queues, since=since)
    chart = charts.histogram(report.histogram, title="Output tokens per exchange", unit="tokens")
    event = audit.record(
        "signals.viewed",
        actor=user,
        page="readiness",
        snapshot=(model or "")[:200],
        queue=queue or "",
    )
    return ReadinessPage(report, chart, queue, event.pk)


__all__ = ["alert_read", "model_page_read", "readiness_read", "signals_index_read"]
