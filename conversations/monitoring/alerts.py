"""Alert rules evaluated over the rollups; alerts with their history; notifications kept until
delivered.

``monitoring_tick`` (``manage.py monitoring_tick``, its own beat entry) evaluates every enabled rule
over the rollups of its window, per queue and served snapshot (or the one its scope names):
a group with at least ``min_exchanges`` exchanges whose value is above the threshold is
breached. An alert moves firing ↔ resolved (muted, instead of firing, while its rule is muted)
and each move is an ``AlertEvent``; moves into firing, and out of firing into resolved, queue
one ``Notification`` per channel (the rule's webhook and e-mail addresses) in the same
transaction. Deliveries happen after the commit, each on its own and outside any transaction
(``delivery.py``); a failed one is recorded on it and retried (a few quick attempts, then later
ticks with a backoff, up to ``Notification.ATTEMPTS``). A muted alert queues nothing. Where a
notification may go is checked when the rule is saved and again at delivery
(``destinations.py``).

Webhooks are JSON with a Slack-compatible ``text``, signed: ``X-Signals-Timestamp`` (Unix
seconds) and ``X-Signals-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`` under the
rule's secret (or ``SIGNALS_WEBHOOK_SECRET``). Nothing in a notification is conversation text:
the rule, the scope, the numbers and a link to the alert's page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Case, Count, Value, When
from django.utils import timezone

import audit

from ..models import Alert, AlertEvent, AlertRule, ModelPrice, Notification
from .delivery import notifications_deliver
from .destinations import recipients
from .metrics import metric
from .rollups import hour_of, rollups_compact
from .selectors import rollups_summed


def window_start(rule: AlertRule, now: datetime) -> datetime:
    """The first rollup hour of a rule's window (rollups are hourly: the window is widened to
    the hour it starts in)."""
    return hour_of(now - timedelta(minutes=rule.window_minutes))


def rule_save(*, rule: AlertRule, actor: Any = None) -> AlertRule:
    with transaction.atomic():
        rule.full_clean()
        rule.save()
        audit.record(
            "alert_rule.changed",
            actor=actor,
            change="saved",
            rule=rule.pk,
            metric=rule.metric,
            muted=rule.muted,
            enabled=rule.enabled,
        )
    return rule


def rule_delete(*, rule: AlertRule, actor: Any = None) -> None:
    with transaction.atomic():
        pk = rule.pk
        rule.delete()
        audit.record("alert_rule.changed", actor=actor, change="deleted", rule=pk)


def model_price_save(*, price: ModelPrice, actor: Any = None) -> ModelPrice:
    with transaction.atomic():
        price.full_clean()
        price.save()
        audit.record(
            "model_price.changed", actor=actor, change="saved", price=price.pk, model=price.model
        )
    return price


def model_price_delete(*, price: ModelPrice, actor: Any = None) -> None:
    with transaction.atomic():
        pk, model = price.pk, price.model
        price.delete()
        audit.record("model_price.changed", actor=actor, change="deleted", price=pk, model=model)


@dataclass
class TickResult:
    evaluated: int = 0
    fired: int = 0
    resolved: int = 0
    muted: int = 0
    delivered: int = 0
    failed: int = 0


def _queue_notifications(rule: AlertRule, alert: Alert, event: AlertEvent, now: datetime) -> None:
    rows = []
    if rule.webhook_url:
        rows.append(Notification(event=event, channel="webhook", target=rule.webhook_url))
    for address in recipients(rule.emails):
        rows.append(Notification(event=event, channel="email", target=address))
    for row in rows:
        row.next_attempt_at = now
    Notification.objects.bulk_create(rows)


def _move(
    alert: Alert, state: str, value: float, volume: int, start: datetime, now: datetime
) -> AlertEvent | None:
    alert.value, alert.volume, alert.window_start, alert.evaluated_at = value, volume, start, now
    if alert.state == state:
        alert.save(update_fields=["value", "volume", "detail", "window_start", "evaluated_at"])
        return None
    alert.state, alert.since = state, now
    alert.save()
    return AlertEvent.objects.create(
        alert=alert, state=state, value=value, volume=volume, window_start=start, at=now
    )


def _evaluate(rule: AlertRule, now: datetime, result: TickResult) -> None:
    start = window_start(rule, now)
    watched = metric(rule.metric)  # the registry's entry (metrics.py)
    groups = rollups_summed(
        since=start,
        queue=rule.queue or None,
        snapshot=rule.snapshot or None,
        group_by=("queue", "served_model"),
        bins_of=watched.sketches,
    )
    alerts = {(a.queue, a.snapshot): a for a in Alert.objects.select_for_update().filter(rule=rule)}
    seen = set()
    for g in groups:
        key = (g.group["queue"], g.group["served_model"])
        seen.add(key)
        value, volume = watched.value(g), g["exchanges"]
        breached = volume >= rule.min_exchanges and value > rule.threshold
        alert = alerts.get(key)
        if alert is None:
            if not breached:
                continue
            alert = Alert(rule=rule, queue=key[0], snapshot=key[1], state="", since=now)
        alert.detail = watched.detail(g)
        target = (
            (Alert.State.MUTED if rule.muted else Alert.State.FIRING)
            if breached
            else Alert.State.RESOLVED
        )
        before = alert.state
        event = _move(alert, target, value, volume, start, now)
        if event is None:
            continue
        if target == Alert.State.FIRING:
            result.fired += 1
            _queue_notifications(rule, alert, event, now)
        elif target == Alert.State.MUTED:
            result.muted += 1
        elif before == Alert.State.FIRING:
            result.resolved += 1
            _queue_notifications(rule, alert, event, now)
    # An alert whose group has no exchange left in the window is resolved.
    for key, alert in alerts.items():
        if key not in seen and alert.state != Alert.State.RESOLVED:
            before = alert.state
            event = _move(alert, Alert.State.RESOLVED, 0.0, 0, start, now)
            if event is not None and before == Alert.State.FIRING:
                result.resolved += 1
                _queue_notifications(rule, alert, event, now)


def monitoring_tick(*, now: datetime | None = None, quick_retries: int = 2) -> TickResult:
    """Evaluate every enabled rule (each in its own transaction), then deliver what is due."""
    now = now or timezone.now()
    result = TickResult()
    # Hours no ingest writes to any more keep one row each (rollups.py: rollups_compact).
    done = hour_of(now) - timedelta(hours=2)
    rollups_compact(before=done, after=done - timedelta(days=7))
    for rule_id in AlertRule.objects.filter(enabled=True).values_list("pk", flat=True):
        with transaction.atomic(durable=True):
            rule = AlertRule.objects.select_for_update(skip_locked=True).filter(pk=rule_id).first()
            if rule is None:
                continue  # another tick is evaluating it
            _evaluate(rule, now, result)
            result.evaluated += 1
    sent = notifications_deliver(quick_retries=quick_retries)
    result.delivered, result.failed = sent.delivered, sent.failed
    return result


def notification_states() -> dict[tuple[str, str], int]:
    """Notifications per (channel, state): "sent", "pending" (not yet sent, attempts left) or
    "failed" (given up after ``Notification.ATTEMPTS``); one grouped query, for the metrics."""
    rows = (
        Notification.objects.order_by()
        .annotate(
            state=Case(
                When(delivered_at__isnull=False, then=Value("sent")),
                When(attempts__gte=Notification.ATTEMPTS, then=Value("failed")),
                default=Value("pending"),
            )
        )
        .values("channel", "state")
        .annotate(n=Count("pk"))
    )
    return {(row["channel"], row["state"]): row["n"] for row in rows}
