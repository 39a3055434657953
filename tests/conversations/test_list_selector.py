"""``selectors.conversation_list`` against a plain reference: every filter, every page.

The list finds a page's ids first (in the indexes alone) and then reads those rows: the pages it
returns, walked with its own cursors, must be exactly the conversations a plain filter-and-sort
in Python gives, in the same order, ties on ``last_activity_at`` included, and each page must
stay one query.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conversations.models import Block, Conversation, Exchange, Message
from conversations.selectors import MANY_TOOL_CALLS, ListFilters, conversation_list

QUEUES = ("billing", "shipping", "returns", "technical")
MODELS = ("claude-sonnet-4-5-20250929", "gpt-5-mini-2025-08-07", "claude-opus-4-1-20250805")
STOPS = ("end_turn", "tool_use", "max_tokens")
START = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Row:
    pk: int
    queue: str
    customer: str
    at: datetime
    truncated: bool
    refusal: bool
    rewritten: bool
    tools: int
    models: frozenset[str]
    stops: frozenset[str]
    refund: bool


@pytest.fixture
def store(db: Any) -> list[Row]:
    """90 conversations; last activity drawn from 12 instants, so many tie and only the id
    orders them."""
    rng = random.Random(11)
    rows = []
    for i in range(90):
        c = Conversation.objects.create(
            external_id=f"conv-{i}",
            customer_external_id=f"cus-{i % 7}",
            queue=rng.choice(QUEUES),
            tool_call_count=rng.choice((0, 1, MANY_TOOL_CALLS, 9)),
            any_truncated=rng.random() < 0.2,
            any_refusal=rng.random() < 0.1,
            any_rewritten=rng.random() < 0.1,
            last_activity_at=START + timedelta(hours=rng.randrange(12)),
        )
        models, stops = set(), set()
        for ordinal in range(1, rng.randint(1, 3) + 1):
            model, stop = rng.choice(MODELS), rng.choice(STOPS)
            exchange = Exchange.objects.create(
                conversation=c,
                ordinal=ordinal,
                settings_ciphertext=b"\x01",
                format="anthropic.messages",
                response_model=model,
                stop_reason=stop,
            )
            models.add(model)
            stops.add(stop)
        refund = rng.random() < 0.4
        message = Message.objects.create(
            conversation=c,
            exchange=exchange,
            sequence=0,
            role="user",
            raw_ciphertext=b"\x01",
            sha256="0" * 64,
            canonical_sha256="0" * 64,
        )
        Block.objects.create(
            message=message,
            conversation=c,
            position=0,
            provider_type="text",
            block_class=Block.Class.VISIBLE,
            text="Please refund my order" if refund else "Where is my parcel?",
        )
        rows.append(
            Row(
                c.pk,
                c.queue,
                c.customer_external_id,
                c.last_activity_at,
                c.any_truncated,
                c.any_refusal,
                c.any_rewritten,
                c.tool_call_count,
                frozenset(models),
                frozenset(stops),
                refund,
            )
        )
    return rows


def matches(row: Row, f: ListFilters) -> bool:
    return (
        (not f.queue or row.queue == f.queue)
        and (not f.customer or row.customer == f.customer)
        and (not f.model or f.model in row.models)
        and (not f.finish or f.finish in row.stops)
        and ("truncated" not in f.flags or row.truncated)
        and ("refusal" not in f.flags or row.refusal)
        and ("rewritten" not in f.flags or row.rewritten)
        and ("many_tools" not in f.flags or row.tools >= MANY_TOOL_CALLS)
        and (f.since is None or row.at >= f.since)
        and (f.until is None or row.at < f.until)
        and (not f.q or row.refund)
    )


FILTERS = [
    ListFilters(),
    ListFilters(queue="billing"),
    ListFilters(customer="cus-3"),
    ListFilters(model=MODELS[2]),
    ListFilters(finish="max_tokens"),
    ListFilters(flags=frozenset({"truncated"})),
    ListFilters(flags=frozenset({"refusal"})),
    ListFilters(flags=frozenset({"rewritten"})),
    ListFilters(flags=frozenset({"many_tools"})),
    ListFilters(since=START + timedelta(hours=3), until=START + timedelta(hours=8)),
    ListFilters(q="refund"),
    ListFilters(q="refund", model=MODELS[0], flags=frozenset({"many_tools"})),
]


@pytest.mark.parametrize("visible_queues", [None, ("billing", "shipping")])
@pytest.mark.parametrize("filters", FILTERS)
def test_pages_are_the_plain_filter_and_order(
    store: list[Row], filters: ListFilters, visible_queues: tuple[str, ...] | None
) -> None:
    visible = Conversation.objects.all()
    if visible_queues is not None:
        visible = visible.filter(queue__in=visible_queues)
    expected = [
        r.pk
        for r in sorted(store, key=lambda r: (r.at, r.pk), reverse=True)
        if (visible_queues is None or r.queue in visible_queues) and matches(r, filters)
    ]
    assert expected, "the store should give every filter something to list"
    walked: list[int] = []
    cursor = ""
    for _ in range(len(store)):
        rows, cursor_next = conversation_list(visible, replace(filters, after=cursor), limit=4)
        walked += [c.pk for c in rows]
        if cursor_next is None:
            break
        cursor = cursor_next
    assert walked == expected


def test_a_page_is_one_query(store: list[Row], django_assert_num_queries: Any) -> None:
    visible = Conversation.objects.filter(queue__in=("billing", "shipping"))
    first, cursor = conversation_list(visible, ListFilters(model=MODELS[1]), limit=4)
    assert cursor is not None
    with django_assert_num_queries(1):
        rows, _ = conversation_list(visible, ListFilters(model=MODELS[1], after=cursor), limit=4)
    assert rows and rows[0].pk not in {c.pk for c in first}
    # The rows come whole: the template reads every column without another query.
    with django_assert_num_queries(0):
        assert all(c.customer_external_id and c.last_activity_at for c in rows)
