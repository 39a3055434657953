"""The demo lives in the present (issue 35): ``seed_demo`` spreads its conversations over the last
30 days, with enough truncations, refusals, loops, failed tools, rewrites and slow answers that
the next signals tick fires each alert kind once, and every signals page has something to show;
``--if-empty`` on a demo grown old adds the days since."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from conversations.demo import TWIST_QUEUE, demo_bodies
from conversations.ingest.body import exchange_input
from conversations.models import Alert, Conversation, Exchange
from conversations.monitoring.alerts import monitoring_tick
from conversations.monitoring.metrics import METRICS
from conversations.services import conversation_ingest_exchange

pytestmark = [pytest.mark.django_db(databases="__all__"), pytest.mark.slow]


def _seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_a_fresh_demo_is_recent_and_fires_each_alert_kind_once() -> None:
    call_command("setup_roles", stdout=io.StringIO())
    _seed()
    now = timezone.now()
    started = Exchange.objects.values_list("started_at", flat=True)
    assert min(started) >= now - timedelta(days=30)
    assert max(started) <= now
    # Spread over the month, not bunched in a day.
    assert max(started) - min(started) >= timedelta(days=20)
    assert Conversation.objects.filter(queue=TWIST_QUEUE).count() >= 6
    result = monitoring_tick(now=now, quick_retries=0)
    fired = list(
        Alert.objects.filter(state="firing").values_list("rule__metric", "queue", "snapshot")
    )
    kinds = sorted(metric for metric, _q, _s in fired)
    assert kinds == sorted(METRICS), fired  # each alert kind, once
    assert {q for _m, q, _s in fired} == {TWIST_QUEUE}
    assert len({s for _m, _q, s in fired}) == 1
    assert result.fired == len(METRICS)

    # Every signals page has something to show (an admin reads every queue).
    client = Client()
    client.force_login(get_user_model().objects.get(username="admin"))
    index = client.get("/signals/").content.decode()
    assert "No exchange in your queues yet." not in index
    assert "No alert has fired in your queues." not in index
    assert "No priced exchange in your queues yet." not in index  # the demo's example prices
    assert "Cost per day, queue priority" in index
    snapshots = set(
        Exchange.objects.exclude(response_model="").values_list("response_model", flat=True)
    )
    for snapshot in snapshots:
        assert f"/signals/models/{snapshot}/" in index, snapshot
        page = client.get(f"/signals/models/{snapshot}/").content.decode()
        facts = re.search(r"last 30 days · (\d+) exchanges?", page)
        assert facts and int(facts.group(1)) > 0, snapshot
    for alert in Alert.objects.filter(state="firing"):
        page = client.get(f"/signals/alerts/{alert.pk}/").content.decode()
        assert "None left in the window that you may see." not in page, alert.rule.metric
        assert "/conversations/" in page
    readiness = client.get("/signals/readiness/").content.decode()
    shown = re.search(r"<dt>Exchanges</dt><dd>(\d+)</dd>", readiness)
    assert shown and int(shown.group(1)) > 0


def test_if_empty_loads_nothing_on_a_recent_demo_and_the_days_since_on_an_old_one() -> None:
    call_command("setup_roles", stdout=io.StringIO())
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    # A demo loaded twelve days ago (its conversations stored then, over the month before).
    for body in demo_bodies(12, until=today - timedelta(days=12)):
        conversation_ingest_exchange(data=exchange_input(body))
    Conversation.objects.update(created_at=today - timedelta(days=12))
    before = Conversation.objects.count()
    out = _seed("--if-empty")
    assert "loaded 12 days ago, adding the days since" in out
    added = Conversation.objects.count() - before
    assert 0 < added < 40
    newest = Conversation.objects.order_by("-last_activity_at").first()
    assert newest is not None and newest.last_activity_at >= today - timedelta(days=1)
    # A second run on a demo in the present: nothing.
    count = Conversation.objects.count()
    assert "nothing loaded" in _seed("--if-empty")
    assert Conversation.objects.count() == count


def test_if_empty_never_adds_demo_data_to_real_data() -> None:
    call_command("setup_roles", stdout=io.StringIO())
    old = next(demo_bodies(1, until=datetime.now(UTC) - timedelta(days=12)))
    conversation_ingest_exchange(data=exchange_input({**old, "conversation": "real-1"}))
    assert "nothing loaded" in _seed("--if-empty")
    assert Conversation.objects.count() == 1
