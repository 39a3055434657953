"""The customer panel's cost over the last 30 days: the customer's model calls in the
conversations the reader may see, priced as the page prices one call (the snapshot's row, else
the alias's), per day; calls without a price are counted apart, never priced at zero silently."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from conversations.models import Conversation, Exchange, ModelPrice
from conversations.selectors.audited import conversation_read
from tests.conversation_page.world import expected_price
from tests.factories import post_exchange

pytestmark = pytest.mark.django_db(databases="__all__")

USAGE = {"input_tokens": 1_000, "output_tokens": 2_000, "cache_read_input_tokens": 4_000}


def test_the_panel_prices_what_the_reader_may_see_per_day(
    api: Any, client: Any, world: Any
) -> None:
    snapshot = ModelPrice.objects.create(
        model="claude-sonnet-4-5-20250929",
        input=3,
        cache_read=Decimal("0.3"),
        cache_write=4,
        output=15,
    )
    alias = ModelPrice.objects.create(
        model="claude-alias", input=1, cache_read=0, cache_write=0, output=5
    )
    now = timezone.now()
    bodies = [
        ("conv-cost-1", "billing", "claude-sonnet-4-5-20250929", now - timedelta(days=2)),
        ("conv-cost-1", "billing", "claude-sonnet-4-5-20250929", now - timedelta(days=2)),
        ("conv-cost-2", "billing", "claude-alias", now - timedelta(days=1)),  # the alias's row
        ("conv-cost-2", "billing", "no-price-model", now - timedelta(days=1)),  # unpriced
        ("conv-cost-3", "billing", "claude-sonnet-4-5-20250929", now - timedelta(days=45)),  # old
        ("conv-cost-4", "shipping", "claude-sonnet-4-5-20250929", now - timedelta(days=1)),
    ]
    for n, (conversation, queue, model, started) in enumerate(bodies):
        post_exchange(
            api,
            conversation=conversation,
            customer="cus-cost",
            queue=queue,
            response_model=model,
            model=model,
            usage=USAGE,
            text=f"cost-{n}",
            started_at=started.isoformat(),
        )
    agent = world.users["agent"]  # billing only
    page = Conversation.objects.get(external_id="conv-cost-1")
    panel = conversation_read(user=agent, id=page.pk).customer
    seen = Exchange.objects.filter(
        conversation__external_id__in=["conv-cost-1", "conv-cost-2"]
    ).order_by("pk")
    e = list(seen)
    assert [d.exchanges for d in panel.cost_days] == [2, 2]  # two days; the old one, the
    assert panel.cost_exchanges == 4  # other queue's: not counted
    assert panel.cost_unpriced == 1
    first_day = expected_price(e[0], snapshot) + expected_price(e[1], snapshot)
    assert panel.cost_days[0].cost == first_day
    assert panel.cost_days[1].cost == expected_price(e[2], alias)
    assert panel.cost_total == sum((d.cost for d in panel.cost_days), Decimal(0))
    assert panel.cost_total > 0

    client.force_login(agent)
    html = client.get(f"/conversations/{page.pk}/").content.decode()
    # Cents, or four decimals below a dollar (as the timing panel shows a call's price).
    shown = f"{panel.cost_total:.2f}" if panel.cost_total >= 1 else f"{panel.cost_total:.4f}"
    assert f"<strong>${shown}</strong>" in html
    assert "for 4 model calls on 2 days" in html and "(1 not priced" in html
    # An admin sees every queue: the shipping call too.
    admin_panel = conversation_read(user=world.users["admin"], id=page.pk).customer
    assert admin_panel.cost_exchanges == 5
