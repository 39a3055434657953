"""Every page takes its data from one audited selector: the view opens no transaction and writes no
audit row, the page renders after the read's transaction has committed, and each page's query
count is pinned."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction

import console.compliance_views
import console.monitoring_views
import console.review_views
import console.sharing_views
import console.views
from conversations.selectors import conversation_cursor
from conversations.sharing.links import share_link_create
from retention.services import deletion_request_submit, legal_hold_place
from tests.console.conftest import World, client_for

CONSOLE = Path(__file__).resolve().parents[2] / "console"
VIEW_MODULES = [
    "views.py",
    "compliance_views.py",
    "review_views.py",
    "sharing_views.py",
    "live_views.py",
    "monitoring_views.py",
]


@pytest.mark.parametrize("module", VIEW_MODULES)
def test_views_hold_no_query_no_transaction_and_no_audit_write(module: str) -> None:
    tree = ast.parse((CONSOLE / module).read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in {"objects", "atomic", "record"}:
            found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module in {
            "django.db",
            "django.db.models",
            "audit.selectors",
            "conversations.selectors",
            "retention.selectors",
        }:
            allowed = {"DatabaseError"} | (
                {"FLAGS"} if node.module.endswith("selectors") else set()
            )
            extra = {alias.name for alias in node.names} - allowed
            if extra:
                found.append(f"line {node.lineno}: imports {sorted(extra)} from {node.module}")
    assert not found, f"console/{module} reads or writes by itself: {found}"


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_pages_render_after_the_read_committed(
    client: Any, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, bool]] = []
    modules = (
        console.views,
        console.compliance_views,
        console.review_views,
        console.sharing_views,
        console.monitoring_views,
    )
    for module in modules:
        real = module.render

        def spy(request: Any, template: str, *args: Any, _real: Any = real, **kw: Any) -> Any:
            seen.append((template, connection.in_atomic_block))
            return _real(request, template, *args, **kw)

        monkeypatch.setattr(module, "render", spy)
    agent = client_for(client, world, "agent")
    assert agent.get("/").status_code == 200
    assert agent.get(f"/conversations/{world.billing.pk}/").status_code == 200
    call = f"/conversations/{world.billing.pk}/calls/{call_key(world.billing)}/"
    assert agent.get(call).status_code == 200
    assert agent.get(call, HTTP_HX_REQUEST="true").status_code == 200
    assert agent.get("/?q=order", HTTP_HX_REQUEST="true").status_code == 200
    for page in ("/signals/", f"/signals/models/{SNAPSHOT}/?queue=billing", "/signals/readiness/"):
        assert agent.get(page).status_code == 200, page
    staff = client_for(client, world, "compliance")
    request = deletion_request_submit(customer="cus-nobody", reason="test")
    for page in (
        "/audit/",
        "/audit/review-grants/",
        "/compliance/deletions/",
        f"/compliance/deletions/{request.pk}/",
        "/compliance/holds/",
        "/compliance/share-links/",
    ):
        assert staff.get(page).status_code == 200, page
    _, token = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    staff.logout()
    assert staff.get(f"/s/{token}/", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert len(seen) == 15
    assert not [template for template, atomic in seen if atomic]


# Pinned: a change here is a change in what a page costs (DESIGN section 8). Each number counts
# every query of the request: session, user, groups, the read, the audit row, the template.
# "hx:" asks for the fragment htmx swaps in (the same URL with HX-Request).
# The list (issue 14): + the bounded count of the matches, + the awaiting-a-person count, + the
# rows' snippets and models (one query for the page), + the user's queues for the filter; a
# search adds the one lookup of what was pasted (conversation, ticket, customer, identifier).
PINNED = {
    ("agent", "/"): 11,
    ("agent", "/?q=order&flags=truncated&model=m&finish=tool_use&since=2024-01-01"): 10,
    ("agent", "/?q=order&match=words"): 10,
    ("agent", "/?q=cus-conv-billing"): 12,
    ("agent", "/?q=ORD-7654321"): 12,
    ("agent", "/?q=conv-billing"): 7,  # straight to the conversation: no list read
    ("agent", "/?status=escalated"): 10,
    ("agent", "hx:/?q=ORD-7654321"): 12,
    ("agent", "hx:/?after={cursor}&start=51"): 10,  # nothing older: no snippet query
    ("admin", "/"): 11,
    # The conversation page (issue 18): + the work notes' templates, + its share links; a tool
    # call: + the templates. Issue 25: + the price table's rows, + the customer's other
    # conversations, + their open deletion requests, + whether the reader is a reviewer (who
    # may ask for review access). Issue 35: the prices are read with the exchanges and the
    # reviewer check reads the groups already read: -2, the same whatever the models named;
    # + the customer's cost per day (one statement, its prices joined).
    ("agent", "/conversations/{billing}/"): 20,
    ("agent", "/conversations/{billing}/calls/{call}/"): 15,
    ("agent", "hx:/conversations/{billing}/calls/{call}/"): 15,
    ("agent", "/settings/"): 3,
    ("compliance", "/audit/"): 7,
    ("compliance", "/audit/?code=deletion.&actor=agent&subject=cus-1&since=2024-01-01"): 8,
    ("compliance", "/audit/export.csv?code=deletion."): 7,
    ("compliance", "/audit/export.json"): 7,
    ("compliance", "/audit/review-grants/"): 8,
    ("compliance", "/compliance/deletions/"): 7,
    # A request's detail: + the conversations it names (issue 25), none here: no query.
    ("compliance", "/compliance/deletions/{request}/"): 7,
    ("compliance", "/compliance/deletions/{done}/"): 7,
    ("compliance", "/compliance/deletions/{done}/receipt.csv"): 7,
    ("compliance", "/compliance/deletions/{done}/receipt.json"): 7,
    ("compliance", "/compliance/holds/"): 9,
    # What leaves the console (issue 18): the export, the share page (no session, no user), the
    # compliance list of links.
    ("agent", "/conversations/{billing}/export.md"): 15,
    ("agent", "/conversations/{billing}/export.json"): 15,
    # The share page: the link, the page's five reads, the notes' templates, its opening
    # counted, the audit row (and the test's savepoint pair).
    ("anonymous", "/s/{token}/"): 13,  # +2: its creator's access (groups, the conversation)
    ("compliance", "/compliance/share-links/"): 7,
    # The signals (issue 17): the reader's queues, the rollups (two queries: the counts, then
    # the histograms), the audit row; the index adds its alerts, the model page its price, the
    # readiness report its arms and probes; the percentiles read the rollups' DDSketch bins
    # (one more query per page, two for the report's two arms), whatever the number of rows.
    # Issue 35: + the rollups' tokens per day and queue, + their models' prices (cost per queue).
    ("agent", "/signals/"): 13,
    ("agent", "/signals/models/{snapshot}/?queue=billing"): 11,
    ("agent", "/signals/readiness/"): 18,
}
SNAPSHOT = "claude-sonnet-4-5-20250929"


def call_key(conversation: Any) -> str:
    """The trail key ("<message sequence>-<position>") of a conversation's first tool call."""
    from conversations.models import Block

    block = Block.objects.filter(conversation=conversation, block_class="audit").first()
    assert block is not None
    return f"{block.message.sequence}-{block.position}"


@pytest.mark.django_db(databases="__all__")
@pytest.mark.parametrize(("role", "url"), list(PINNED))
def test_query_counts_are_pinned(
    client: Any, world: World, django_assert_num_queries: Any, role: str, url: str
) -> None:
    from retention.services import retention_tick

    legal_hold_place(scope="queue", queue="billing", reason="regulator")
    legal_hold_place(scope="conversation", conversation_id=world.shipping.pk, reason="audit")
    with transaction.atomic():
        done = deletion_request_submit(customer="cus-gone", reason="test")
    retention_tick()
    with transaction.atomic():
        request = deletion_request_submit(customer="cus-nobody", reason="test")
    _, token = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    c = client_for(client, world, role)
    headers = {"HTTP_HX_REQUEST": "true"} if url.startswith("hx:") else {}
    target = url.removeprefix("hx:").format(
        billing=world.billing.pk,
        request=request.pk,
        done=done.pk,
        call=call_key(world.billing),
        cursor=conversation_cursor(world.billing),
        token=token,
        snapshot=SNAPSHOT,
    )
    c.get(target, **headers)  # process caches (content types, policies, choices) warm
    with django_assert_num_queries(PINNED[(role, url)], using="default"):
        response = c.get(target, **headers)
    assert response.status_code in (200, 302), response.status_code
