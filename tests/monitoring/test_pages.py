"""The signals' pages: readers of a queue only, numbers from the rollups, the audit row, no
reasoning anywhere; the crawl reaches them."""

from __future__ import annotations

from typing import Any

import pytest

from audit.models import AuditEvent
from conversations.models import Alert, AlertRule
from conversations.monitoring.alerts import monitoring_tick
from tests.console.conftest import World, client_for
from tests.console.test_crawl import MARKERS, crawl
from tests.monitoring.helpers import SNAPSHOT, sonnet_price, store, text, thinking, user

pytestmark = pytest.mark.django_db(databases="__all__")


def seed() -> None:
    for i in range(30):
        store(
            f"m-{i}",
            [user("q")],
            [thinking(), text("a")],
            output=100 + 10 * i,
            reasoning=50 + 5 * i,
            latency=500 + 100 * i,
        )
    for i in range(10):
        store(
            f"t-{i}",
            [user("q")],
            [thinking(), text("cut")],
            stop="max_tokens",
            output=1024,
            reasoning=1000,
        )
    sonnet_price()


def test_model_page_shows_the_numbers_and_is_audited(client: Any, world: World) -> None:
    seed()
    agent = client_for(client, world, "agent")
    r = agent.get(f"/signals/models/{SNAPSHOT}/?queue=billing")
    assert r.status_code == 200
    html = r.content.decode()
    view = r.context["view"]
    assert view.exchanges == 41  # the world's own billing exchange, and these
    assert view.output["p99"] >= 1024
    assert view.price_per_1000 is not None and view.price_per_1000 > 0
    assert "<svg" in html and "Output tokens per exchange" in html
    assert "cut off (max tokens)" in html
    assert "within 1 % of exact (DDSketch)" in html
    assert "requested <code>claude-sonnet-4-5</code> (an alias" in html
    row = AuditEvent.objects.filter(code="signals.viewed").latest("id")
    assert row.details["page"] == "model" and row.details["queue"] == "billing"
    assert "MARKER" not in html


def test_a_queue_one_may_not_read_is_a_404(client: Any, world: World) -> None:
    seed()
    other = client_for(client, world, "other_agent")  # sees shipping only
    assert other.get(f"/signals/models/{SNAPSHOT}/?queue=billing").status_code == 404
    assert other.get("/signals/models/no-such-model/").status_code == 404
    assert other.get(f"/signals/models/{SNAPSHOT}/?days=0").status_code == 400
    client.logout()
    assert client.get("/signals/").status_code == 302  # to the login page


def test_alert_page_lists_only_conversations_the_reader_may_see(client: Any, world: World) -> None:
    seed()
    rule = AlertRule.objects.get(metric="truncation")
    assert monitoring_tick().fired == 1
    alert = Alert.objects.get(rule=rule)
    agent = client_for(client, world, "agent")
    r = agent.get(f"/signals/alerts/{alert.pk}/")
    assert r.status_code == 200
    names = {c.external_id for c in r.context["view"].conversations}
    assert names == {f"t-{i}" for i in range(10)}
    assert (
        client_for(client, world, "other_agent").get(f"/signals/alerts/{alert.pk}/").status_code
        == 404
    )


def test_readiness_page(client: Any, world: World) -> None:
    seed()
    r = client_for(client, world, "agent").get(f"/signals/readiness/?model={SNAPSHOT}")
    assert r.status_code == 200
    assert r.context["view"].report.recommended_max_tokens is not None
    assert "alias" in r.content.decode()
    assert "(exact, from the exchanges themselves)" in r.content.decode()
    bad = client_for(client, world, "agent").get("/signals/readiness/?since=yesterday")
    assert bad.status_code == 400 and b"since" in bad.content


def test_the_crawl_reaches_the_signals_pages_and_finds_no_marker(client: Any, world: World) -> None:
    seed()
    monitoring_tick()
    for role in ("agent", "admin"):
        pages = crawl(client_for(client, world, role))
        signal_pages = [u for u in pages if u.startswith("/signals/")]
        assert any(u.startswith("/signals/models/") for u in signal_pages), signal_pages
        assert any(u.startswith("/signals/alerts/") for u in signal_pages), signal_pages
        for url, (status, body, headers) in pages.items():
            assert status < 500, url
            for marker in [*MARKERS, "MARKER-REASONING-SIGNALS-5c1e"]:
                assert marker not in body and marker not in headers, (role, url)
