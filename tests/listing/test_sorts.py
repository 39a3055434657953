"""The list sorted and filtered by output tokens and by the slowest answer (issue 35): columns
kept by ingest, keyset pages both ways in each order, the order and bounds in the URL."""

from __future__ import annotations

import re
from typing import Any

import pytest

from conversations.models import Conversation
from conversations.permissions import visible_conversations
from conversations.selectors import ListFilters, conversation_cursor, conversation_list
from tests.factories import ExchangeBodyFactory, UserFactory, ingest, roles

pytestmark = pytest.mark.django_db
ROW = re.compile(r'href="/conversations/(\d+)/" class="row-link"')


def _store(name: str, output: int, latency: int, *, queue: str = "billing") -> Conversation:
    body = ExchangeBodyFactory(
        conversation=name, usage={"input_tokens": 5, "output_tokens": output}, queue=queue
    )
    body["latency_ms"] = latency
    return ingest(body)


@pytest.fixture
def agent() -> Any:
    roles()
    return UserFactory(username="agent", groups=["support_agent"], queues=["billing"])


def test_ingest_keeps_the_output_and_the_slowest_answer() -> None:
    first = ExchangeBodyFactory(conversation="c", usage={"input_tokens": 1, "output_tokens": 40})
    first["latency_ms"] = 900
    ingest(first)
    second = ExchangeBodyFactory(
        conversation="c",
        history=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"}],
        usage={"input_tokens": 1, "output_tokens": 2},
    )
    second["latency_ms"] = 300
    row = ingest(second)
    assert (row.output_tokens, row.slowest_ms) == (42, 900)


@pytest.mark.parametrize(
    ("sort", "column"), [("output", "output_tokens"), ("slowest", "slowest_ms")]
)
def test_keyset_pages_both_ways_in_each_order(agent: Any, sort: str, column: str) -> None:
    values = [30, 10, 50, 10, 70, 20, 10]
    for i, v in enumerate(values):
        _store(f"c{i}", output=v, latency=v * 10)
    _store("hidden", output=1000, latency=10_000, queue="shipping")
    visible = visible_conversations(agent)
    expected = sorted(visible, key=lambda c: (getattr(c, column), c.pk), reverse=True)
    pages, cursors, after = [], [], ""
    while True:
        rows, cursor = conversation_list(visible, ListFilters(sort=sort, after=after), limit=3)
        pages.append([c.pk for c in rows])
        if cursor is None:
            break
        cursors.append(cursor)
        after = cursor
    assert [pk for page in pages for pk in page] == [c.pk for c in expected]
    # Back from the last page (the cursor of its first row): the page before it, in order.
    top = Conversation.objects.get(pk=pages[-1][0])
    newer = conversation_cursor(top, sort)
    back, _ = conversation_list(visible, ListFilters(sort=sort, before=newer), limit=3)
    assert [c.pk for c in back] == pages[-2]


def test_the_page_sorts_filters_and_keeps_both_in_its_links(client: Any, agent: Any) -> None:
    for i in range(60):
        _store(f"c{i}", output=i * 7 % 61, latency=1000 + i)
    client.force_login(agent)
    html = client.get("/?sort=output&min_output=5").content.decode()
    shown = [int(pk) for pk in ROW.findall(html)]
    rows = {c.pk: c for c in Conversation.objects.filter(pk__in=shown)}
    outputs = [rows[pk].output_tokens for pk in shown]
    assert outputs == sorted(outputs, reverse=True) and min(outputs) >= 5
    assert "most output tokens first" in html
    older = re.search(r'href="\?([^"]+)" rel="next"', html)
    assert older is not None
    query = older.group(1).replace("&amp;", "&")
    assert "sort=output" in query and "min_output=5" in query  # the view stays in the link
    page2 = client.get(f"/?{query}").content.decode()
    more = [
        rows2.output_tokens
        for rows2 in (Conversation.objects.get(pk=int(pk)) for pk in ROW.findall(page2))
    ]
    assert more and max(more) <= min(outputs)
    # A cursor of another order, or a bound that is no number: 400, naming the field.
    cursor = re.search(r"after=([^&]+)", query).group(1)
    bad = client.get(f"/?sort=slowest&after={cursor}")
    assert bad.status_code == 400 and "after" in bad.content.decode()
    bad = client.get("/?min_output=-1")
    assert bad.status_code == 400 and "min_output" in bad.content.decode()
