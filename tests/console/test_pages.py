"""The console's pages: query counts constant in size, one audit row per view in the read's
transaction, filters and search, headers."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from audit.models import AuditEvent
from conversations.demo import demo_bodies
from conversations.ingest.body import exchange_input
from conversations.ingest.parse import exchange_parse
from conversations.ingest.pipeline import ingest_batch
from tests.console.conftest import World, exchange, ingest

pytestmark = pytest.mark.django_db(databases="__all__")


def queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_conversation_page_queries_do_not_grow_with_its_length(client: Any, world: World) -> None:
    short = ingest(exchange("short", "billing", turns=2))  # 5 messages with the answer
    long = ingest(exchange("long", "billing", turns=100))  # 200 messages and more
    assert short.message_count == 6 and long.message_count == 202
    client.force_login(world.users["agent"])
    client.get("/")  # warm the process caches (guardian's content types) first
    assert queries(client, f"/conversations/{short.pk}/") == queries(
        client, f"/conversations/{long.pk}/"
    )


def test_list_page_queries_do_not_grow_with_the_store(client: Any, world: World) -> None:
    client.force_login(world.users["admin"])
    client.get("/")  # warm the process caches first
    few = queries(client, "/")

    def load(n: int, start: int) -> None:
        items = []
        for i, body in enumerate(demo_bodies(n, start=start)):
            data = exchange_input(body)
            items.append((i, data, exchange_parse(data)))
        ingest_batch(items)

    load(10, 1000)
    ten = queries(client, "/")
    load(1000, 2000)
    thousand = queries(client, "/")
    assert few == ten == thousand
    # Filters add no query; a page with no row skips the one that reads the rows' snippets.
    full = queries(client, "/?q=refund")
    assert queries(client, "/?q=refund&since=2000-01-01&finish=end_turn") == full
    assert queries(client, "/?q=refund&flags=many_tools") == full - 1


def test_one_audit_row_per_view_in_the_reads_transaction(
    client: Any, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    import audit

    in_transaction = []
    real = audit.record

    def spy(*args: Any, **kwargs: Any) -> Any:
        in_transaction.append(transaction.get_connection().in_atomic_block)
        return real(*args, **kwargs)

    monkeypatch.setattr(audit, "record", spy)
    client.force_login(world.users["agent"])
    before = AuditEvent.objects.count()
    client.get(f"/conversations/{world.billing.pk}/")
    rows = list(AuditEvent.objects.order_by("-id")[: AuditEvent.objects.count() - before])
    assert [(r.code, r.conversation_id, r.details) for r in rows] == [
        ("conversation.viewed", world.billing.pk, {"page": "detail"})
    ]
    assert rows[0].actor_id == world.users["agent"].pk
    client.get("/?q=refund&customer=cus-conv-billing")
    search = AuditEvent.objects.order_by("-id").first()
    assert search.code == "conversation.searched"
    assert search.details["filters"] == ["customer"]
    assert "refund" not in str(search.details) and "cus-conv-billing" not in str(search.details)
    client.get("/")
    assert AuditEvent.objects.order_by("-id").first().code == "conversation.listed"
    # A forbidden page writes nothing: it was not read.
    count = AuditEvent.objects.count()
    client.get(f"/conversations/{world.shipping.pk}/")
    assert AuditEvent.objects.count() == count
    assert in_transaction and all(in_transaction)


def test_a_failing_audit_insert_shows_nothing(
    client: Any, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    import audit

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("audit store unavailable")

    monkeypatch.setattr(audit, "record", broken)
    client.force_login(world.users["agent"])
    client.raise_request_exception = False
    response = client.get(f"/conversations/{world.billing.pk}/")
    assert response.status_code == 500
    assert b"Let me look up your order" not in response.content


@pytest.mark.parametrize(
    ("query", "billing_shown"),
    [
        ("", True),
        ("q=order", True),
        ("q=nonexistentword", False),
        ("queue=shipping", False),
        ("flags=truncated", False),
        ("flags=many_tools", False),
        ("model=claude-sonnet-4-5-20250929", True),
        ("finish=tool_use", True),
        ("finish=end_turn", False),
        ("customer=cus-conv-billing", True),
        ("since=2999-01-01", False),
    ],
)
def test_list_filters(client: Any, world: World, query: str, billing_shown: bool) -> None:
    client.force_login(world.users["admin"])
    body = client.get(f"/?{query}").content.decode()
    assert (f"/conversations/{world.billing.pk}/" in body) is billing_shown


def test_bad_filter_input_is_shown_not_crashed(client: Any, world: World) -> None:
    client.force_login(world.users["admin"])
    response = client.get("/?since=not-a-date&flags=bogus&after=%%%")
    assert response.status_code == 400  # the form again, with its errors (issue 12: a 4xx)
    assert b'role="alert"' in response.content


def test_keyset_pagination_walks_the_whole_list(client: Any, world: World) -> None:
    for i in range(120):
        ingest(exchange(f"page-{i:03d}", "billing"))
    client.force_login(world.users["admin"])
    seen: list[str] = []
    url = "/"
    import re

    while url:
        body = client.get(url).content.decode()
        seen += re.findall(r'href="/conversations/(\d+)/"', body)
        nxt = re.search(r'href="\?([^"]+)" rel="next"', body)
        url = f"/?{nxt.group(1).replace('&amp;', '&')}" if nxt else ""
    assert len(seen) == len(set(seen)) == 122


def test_pages_carry_a_content_security_policy(client: Any, world: World) -> None:
    client.force_login(world.users["agent"])
    response = client.get(f"/conversations/{world.billing.pk}/")
    csp = response["Content-Security-Policy"]
    assert (
        "script-src 'self'" in csp
        and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    )
    assert "frame-ancestors 'none'" in csp


def test_conversation_page_shows_trail_marker_and_flags(client: Any, world: World) -> None:
    client.force_login(world.users["agent"])
    body = client.get(f"/conversations/{world.billing.pk}/").content.decode()
    assert "get_order" in body and "ORD-7654321" in body
    assert "reasoned · 121 tokens" in body
    assert "[not kept]" in body
    assert "[email]" in body and "[card ••4242]" in body


def test_every_format_s_demo_conversation_page_costs_the_same_queries(
    client: Any, world: World
) -> None:
    """Each registered format's demo conversation (reasoning, a tool call and its result, the
    answer): the page reads it with the queries of any other format's, and shows no word of
    its reasoning nor a signature."""
    from conversations.formats import names
    from conversations.models import Conversation
    from tests.factories import demo_conversation

    client.force_login(world.users["agent"])
    client.get("/")  # warm the process caches first
    counts = {}
    for fmt in names():
        bodies = demo_conversation(fmt)
        for body in bodies:
            ingest({**body, "labels": {"queue": "billing"}})
        row = Conversation.objects.get(external_id=bodies[0]["conversation"])
        url = f"/conversations/{row.pk}/"
        html = client.get(url).content.decode()
        counts[fmt] = queries(client, url)
        for body in bodies:
            for secret in _reasoning_of(body):
                assert secret not in html, (fmt, secret)
    # One page, one cost: a format reads its messages with no query of its own (the AI SDK's
    # one message per call reads one row less than the two of the others).
    assert max(counts.values()) - min(counts.values()) <= 1, counts


def _reasoning_of(body: dict[str, Any]) -> list[str]:
    """The reasoning texts and signatures of a demo body's request and response, by the
    format's own reader of its messages (stored raws as the ingest would read them)."""
    from conversations.formats import get
    from conversations.ingest.body import exchange_input
    from conversations.ingest.parse import exchange_parse

    parsed = exchange_parse(exchange_input(body))
    fmt = get(body["format"])
    import json

    out = []
    for message in [*parsed.history, *parsed.output]:
        value = json.loads(message.raw)
        out += [t.text for t in fmt.reasoning(value) if t.text and len(t.text) > 12]
        out += [s for s in _signatures(value) if len(s) > 12]
    return out


def _signatures(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [v for k, v in value.items() if "signature" in k.lower() and isinstance(v, str)]
        return found + [s for v in value.values() for s in _signatures(v)]
    if isinstance(value, list):
        return [s for v in value for s in _signatures(v)]
    return []
