"""Cost per queue over time on the signals page (issue 35): read from the rollups and the price
table (two queries, whatever the number of exchanges), per day, each queue a chart."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.factories import UserFactory, roles
from tests.monitoring.helpers import sonnet_price, store, text, user

pytestmark = pytest.mark.django_db


def _day(days_ago: int) -> str:
    return (timezone.now() - timedelta(days=days_ago)).replace(hour=10).isoformat()


def test_each_queue_gets_its_cost_per_day(client: Any) -> None:
    roles()
    sonnet_price()  # $3 in, $15 out per million
    for i in range(3):
        store(f"b-{i}", [user("q")], [text("a")], output=1000, started_at=_day(2))
    store("b-late", [user("q")], [text("a")], output=2000, started_at=_day(1))
    store("s-1", [user("q")], [text("a")], output=500, queue="shipping", started_at=_day(1))
    store("x-1", [user("q")], [text("a")], snapshot="unpriced-model", started_at=_day(1))
    client.force_login(UserFactory(groups=["support_agent"], queues=["billing", "shipping"]))
    html = client.get("/signals/").content.decode()
    billing = html[html.index('aria-label="Cost of queue billing"') :]
    billing = billing[: billing.index("</section>")]
    # Each exchange: 100 in, N out. Day one: 3 x (100 x 3 + 1000 x 15) / 1e6 = $0.0459.
    assert re.findall(r">\$([0-9.]+)</text>", billing) == ["0.05", "0.03"]
    assert "$0.08" in billing  # the 30 days' sum: 0.0459 + 0.0303
    assert 'aria-label="Cost of queue shipping"' in html
    assert "<code>unpriced-model</code>" in html
    more = 20
    for i in range(more):  # more exchanges: the same queries
        store(f"m-{i}", [user("q")], [text("a")], started_at=_day(3))
    with CaptureQueriesContext(connection) as before:
        client.get("/signals/")
    store("m-last", [user("q")], [text("a")], queue="shipping", started_at=_day(4))
    with CaptureQueriesContext(connection) as after:
        client.get("/signals/")
    assert len(before) == len(after)
    assert not [q for q in after.captured_queries if "conversations_exchange" in q["sql"]]
