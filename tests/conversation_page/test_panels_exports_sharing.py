"""The conversation page without a browser: timing and cost against the stored exchanges,
the customer panel, exports' "Started" and labelled fields, share links listed again, the live
view's Markdown rendering."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction

from conversations.models import Exchange
from conversations.selectors.audited import conversation_read
from conversations.sharing.services import share_link_create, share_link_revoke
from retention.services import deletion_request_submit
from tests.conversation_page.world import (
    BACKEND_ID,
    CUSTOMER,
    OTHER_ID,
    STARTED,
    THOUGHT,
    build,
    expected_price,
)

pytestmark = pytest.mark.django_db


def test_timing_and_cost_match_the_stored_exchanges(world: Any) -> None:
    w = build()
    view = conversation_read(user=world.users["agent"], id=w.conversation.pk)
    waterfall = view.waterfall
    assert waterfall is not None
    exchanges = list(Exchange.objects.filter(conversation=w.conversation).order_by("ordinal"))
    assert len(exchanges) == 5
    # Three turns, one per customer message: exchanges 1-2, 3-4, 5.
    assert [[b.label for b in t.bars if b.kind == "model"] for t in waterfall.turns] == [
        ["Model call 1", "Model call 2"],
        ["Model call 3", "Model call 4"],
        ["Model call 5"],
    ]
    assert [[b.label for b in t.bars if b.kind == "tool"] for t in waterfall.turns] == [
        ["get_order"],
        ["get_order"],
        [],
    ]
    by_label = {b.label: b for t in waterfall.turns for b in t.bars if b.kind == "model"}
    total = Decimal(0)
    for turn in waterfall.turns:
        origin = min(e.started_at for e in exchanges if f"Model call {e.ordinal}" in
                     [b.label for b in turn.bars])  # fmt: skip
        turn_price = Decimal(0)
        for e in exchanges:
            bar = by_label[f"Model call {e.ordinal}"]
            if bar not in turn.bars:
                continue
            assert bar.start_ms == int((e.started_at - origin).total_seconds() * 1000)
            assert bar.duration_ms == e.latency_ms
            assert bar.tokens is not None
            # Anthropic's own input count excludes the cache; the page's includes it.
            assert bar.tokens.fresh == e.input_tokens
            assert bar.tokens.input == (
                e.input_tokens + (e.cache_read_tokens or 0) + (e.cache_write_tokens or 0)
            )
            assert bar.tokens.cached == e.cache_read_tokens
            assert bar.tokens.output == e.output_tokens
            assert bar.price == expected_price(e, w.price)
            turn_price += expected_price(e, w.price)
        assert turn.price == turn_price
        total += turn_price
    assert waterfall.price == total and waterfall.unpriced == 0
    # The tool call: from the end of the answer that made it to the request with its result.
    first, second = exchanges[0], exchanges[1]
    tool = next(b for b in waterfall.turns[0].bars if b.kind == "tool")
    assert tool.start_ms == first.latency_ms
    gap = second.started_at - (first.started_at + timedelta(milliseconds=first.latency_ms))
    assert tool.duration_ms == int(gap.total_seconds() * 1000)
    # The first call reasoned without reporting it: the profile's estimate at ingest, marked so.
    estimated = by_label["Model call 1"].tokens
    assert estimated is not None and estimated.reasoning_estimated
    assert first.reasoning_estimated and first.reasoning_tokens
    assert estimated.reasoning_tokens == first.reasoning_tokens
    assert by_label["Model call 2"].tokens.reasoning_estimated is False  # type: ignore[union-attr]


def test_the_page_shows_the_panel_the_customer_and_seconds(client: Any, world: Any) -> None:
    w = build()
    with transaction.atomic():
        request = deletion_request_submit(customer=CUSTOMER, reason="subject asked")
    client.force_login(world.users["agent"])
    body = client.get(f"/conversations/{w.conversation.pk}/").content.decode()
    assert 'id="timing"' in body and "Timing and cost" in body
    assert body.count('data-bar="model"') == 5 and body.count('data-bar="tool"') == 2
    assert "(est.)" in body  # the estimated reasoning says so
    assert THOUGHT not in body
    # The customer panel: the other conversation, the identifiers, the open request.
    assert OTHER_ID in body
    assert "ORD-1001" in body and "ORD-1002" in body
    assert f"Request {request.pk}" in body
    # Turns in the same minute carry their seconds (09:15:02 UTC and 09:15:03 in Paris: +1 h).
    assert "2025-03-04 10:15:02 CET" in body or "2025-03-04 09:15:02 UTC" in body


def test_export_started_is_the_first_message_not_the_ingest(client: Any, world: Any) -> None:
    w = build()
    assert w.conversation.created_at - STARTED > timedelta(days=300)  # stored long after
    client.force_login(world.users["agent"])
    body = json.loads(client.get(f"/conversations/{w.conversation.pk}/export.json").content)
    assert body["started_at"].startswith(STARTED.strftime("%Y-%m-%dT"))
    assert body["started_at"] <= body["last_activity_at"]
    fields = body["turns"][1]["tool_calls"][0]["fields"]
    assert {"label": "order id", "value": "ORD-1001", "side": "input"} in fields
    assert {"label": "status", "value": "shipped", "side": "result"} in fields
    text = client.get(f"/conversations/{w.conversation.pk}/export.txt").content.decode()
    assert "order id ORD-1001 (input)" in text and "status shipped (result)" in text
    started = next(line for line in text.splitlines() if line.startswith("Started: "))
    assert started.startswith("Started: 2025-03-04")
    assert THOUGHT not in text


def test_a_live_link_is_listed_again_and_a_revoked_one_is_not(client: Any, world: Any) -> None:
    w = build()
    agent = world.users["agent"]
    live, token = share_link_create(actor=agent, conversation_id=w.conversation.pk)
    gone, old = share_link_create(actor=agent, conversation_id=w.conversation.pk)
    share_link_revoke(actor=agent, link_id=gone.pk)
    assert token.encode() not in bytes(live.token_ciphertext or b"")  # sealed, not kept as is
    client.force_login(agent)
    body = client.get(f"/conversations/{w.conversation.pk}/").content.decode()
    assert f"/s/{token}/" in body and 'data-copy="share-url-' in body
    assert f"/s/{old}/" not in body
    shared = client.get(f"/s/{token}/").content.decode()
    assert "<em>delayed</em>" in shared and "<li>carrier: UPS</li>" in shared  # Markdown
    assert "*delayed*" not in shared
    compliance = client_as(client, world, "compliance").get("/compliance/share-links/")
    page = compliance.content.decode()
    assert BACKEND_ID in page and ">billing<" in page


def client_as(client: Any, world: Any, role: str) -> Any:
    client.force_login(world.users[role])
    return client


def test_live_markdown_is_rendered_by_the_pages_sanitiser(client: Any, world: Any) -> None:
    url = "/live/markdown"
    assert client.post(url, {"text": "**x**"}).status_code == 302  # to the login page
    from tests.factories import UserFactory

    client.force_login(UserFactory(username="no-role"))  # reads no conversation: no such page
    assert client.post(url, {"text": "**x**"}).status_code == 404
    client.force_login(world.users["agent"])
    r = client.post(url, {"text": "**bold** <script>alert(1)</script> [a](javascript:alert(1))"})
    assert r.status_code == 200
    html = r.content.decode()
    assert "<strong>bold</strong>" in html
    assert "<script" not in html and "&lt;script&gt;" in html  # shown as text, never run
    assert 'href="javascript' not in html
    bad = client.post(url, {})
    assert bad.status_code == 400 and bad.json()["field"] == "text"
    assert client.post(url, {"text": "x" * 200_001}).status_code == 400
    assert client.get(url).status_code == 405


def test_a_deletion_requests_detail_names_its_conversations(client: Any, world: Any) -> None:
    w = build()
    with transaction.atomic():
        request = deletion_request_submit(
            conversations=[BACKEND_ID, OTHER_ID], reason="the customer asked"
        )
    client.force_login(world.users["compliance"])
    body = client.get(f"/compliance/deletions/{request.pk}/").content.decode()
    assert "Conversations it names" in body
    for c in (w.conversation, w.other):
        assert f'<a href="/conversations/{c.pk}/"><code>{c.external_id}</code></a>' in body
    assert body.count('<td data-label="Queue">billing</td>') == 2
