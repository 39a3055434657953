"""The conversation page pays for its panels once (issue 35): the same queries whatever the
conversation's length and the models it names, the prices read with the exchanges."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from django.db import connections
from django.test.utils import CaptureQueriesContext

from conversations.models import ModelPrice
from tests.factories import ExchangeBodyFactory, ingest


def _count(client: Any, url: str) -> tuple[int, str]:
    with (
        CaptureQueriesContext(connections["default"]) as default,
        CaptureQueriesContext(connections["keys"]) as keys,
    ):
        response = client.get(url)
    assert response.status_code == 200
    return len(default) + len(keys), response.content.decode()


def _turns(name: str, turns: int, **fields: Any) -> Any:
    history: list[dict[str, Any]] = []
    conversation = None
    for i in range(turns):
        body = ExchangeBodyFactory(conversation=name, history=list(history), **fields)
        conversation = ingest(body)
        request = json.loads(body["request"])
        history = [*request["messages"], json.loads(body["response"])]
        history[-1] = {"role": "assistant", "content": history[-1]["content"]}
        assert conversation.exchange_count == i + 1
    return conversation


def test_the_same_queries_for_any_length_and_any_model(client: Any, agent: Any) -> None:
    ModelPrice.objects.create(
        model="claude-sonnet-4-5", input=3, cache_read=Decimal("0.3"), cache_write=4, output=15
    )
    unpriced = _turns("c-unpriced", 1, response_model="", model="not-in-the-table")
    short = _turns("c-short", 1)
    long = _turns("c-long", 12)
    client.force_login(agent)
    client.get(f"/conversations/{short.pk}/")  # process caches warm
    counts = {}
    for c in (unpriced, short, long):
        counts[c.external_id], html = _count(client, f"/conversations/{c.pk}/")
        if c is long:
            # Priced by the alias's row (the snapshot has none): 5 in, 7 out a call.
            each = (5 * Decimal(3) + 7 * Decimal(15)) / 1_000_000
            prices = re.findall(r'<li class="wf-row wf-model[^"]*"[^>]* data-price="([^"]+)"', html)
            assert [Decimal(p) for p in prices] == [each] * 12
    assert len(set(counts.values())) == 1, counts
