"""A crawl as each role: follow every link reachable from the console's home. Planted markers
from reasoning and from dropped fields appear in no body and no header; for agents, no planted
PII appears unredacted."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from django.utils import timezone

from conversations.models import WorkNote
from conversations.services import conversation_record_event
from conversations.sharing.links import share_link_create, share_link_revoke
from conversations.sharing.services import work_note_save
from retention.services import deletion_request_submit, legal_hold_place, retention_tick
from tests.console.conftest import (
    DROPPED_MARKER,
    PII,
    REASONING_MARKER,
    SIGNATURE_MARKER,
    World,
    exchange,
    ingest,
)

pytestmark = pytest.mark.django_db(databases="__all__")
HREF = re.compile(r'href="([^"#]+)"')
# The fragments htmx swaps in: fetched as htmx asks for them (HX-Request).
HX_GET = re.compile(r'hx-get="([^"#]+)"')
MARKERS = [REASONING_MARKER, SIGNATURE_MARKER, DROPPED_MARKER]
MAX_PAGES = 250


def crawl(client: Any, start: str = "/") -> dict[str, tuple[int, str, str]]:
    """Every page reachable from ``start``; fragments (``hx-get``) are keyed ``hx:<url>``."""
    seen: dict[str, tuple[int, str, str]] = {}
    queue = [start]
    while queue and len(seen) < MAX_PAGES:
        url = queue.pop(0)
        if url in seen:
            continue
        path = url.removeprefix("hx:")
        response = client.get(path, **({"HTTP_HX_REQUEST": "true"} if url != path else {}))
        body = response.content.decode("utf-8", "replace")
        headers = "\n".join(f"{k}: {v}" for k, v in response.items())
        seen[url] = (response.status_code, body, headers)
        if response.status_code in (301, 302):
            queue.append(response["Location"])
            continue
        for pattern, prefix in ((HREF, ""), (HX_GET, "hx:")):
            for href in pattern.findall(body):
                target = urljoin(path, href.replace("&amp;", "&"))
                parts = urlsplit(target)
                if parts.netloc or not parts.path.startswith("/"):
                    continue  # another site (source-system links): not ours to crawl
                if any(word in parts.path for word in ("/logout", "/delete/", "/static/")):
                    continue
                queue.append(prefix + parts.path + (f"?{parts.query}" if parts.query else ""))
    return seen


@pytest.mark.parametrize("role", ["agent", "other_agent", "reviewer", "compliance", "admin"])
def test_crawl_finds_no_marker_and_no_raw_pii(client: Any, world: World, role: str) -> None:
    # A completed erasure (its receipt and exports), a pending request and legal holds, so the
    # compliance pages have rows to show; an escalation whose reason names the customer's
    # e-mail address (event values are the backend's free text: shown redacted).
    gone = ingest(exchange("conv-erased", "billing"))
    done = deletion_request_submit(customer=gone.customer_external_id, reason="crawl")
    retention_tick()
    request = deletion_request_submit(customer=world.billing.customer_external_id, reason="crawl")
    legal_hold_place(scope="queue", queue="shipping", reason="crawl")
    legal_hold_place(scope="conversation", conversation_id=world.billing.pk, reason="crawl")
    conversation_record_event(
        conversation=world.billing,
        type="escalated",
        at=timezone.now(),
        value={"reason": f"wants a human, write to {PII['email']}"},
    )
    # A work note naming the trail's identifier, and share links (listed on the conversation
    # page and for compliance), so the crawl reaches the notes, the exports and the lists.
    work_note_save(note=WorkNote(tool_name="get_order", template="Looked up order {order_id}"))
    share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    client.force_login(world.users[role])
    pages = crawl(client)
    assert len(pages) > 1
    for url, (_, body, headers) in pages.items():
        for marker in MARKERS:
            assert marker not in body, (role, url, marker)
            assert marker not in headers, (role, url, marker)
    assert not [u for u, (status, _, _) in pages.items() if status >= 500]
    if role in ("agent", "other_agent", "reviewer"):
        conversation_pages = [u for u in pages if u.startswith("/conversations/")]
        assert conversation_pages, "the crawl reached no conversation"
        # The workspace's pages and fragments: the list as a fragment, the awaiting view, a
        # tool call's record as a page and as a fragment, the user's settings.
        assert any(u.startswith("hx:/?") for u in pages), "no list fragment crawled"
        assert any("status=escalated" in u for u in pages)
        assert any(re.match(r"/conversations/\d+/calls/\d+-\d+/$", u) for u in pages)
        assert any(re.match(r"hx:/conversations/\d+/calls/\d+-\d+/$", u) for u in pages)
        assert "/settings/" in pages
        # The text-only exports, every format, as the crawl found them on the page.
        if role != "other_agent":
            for fmt in ("md", "txt", "json"):
                url = f"/conversations/{world.billing.pk}/export.{fmt}"
                assert pages[url][0] == 200, url
                assert "Looked up order ORD-7654321" in pages[url][1]
            assert "Looked up order ORD-7654321" in pages[f"/conversations/{world.billing.pk}/"][1]
        for url, (_, body, _) in pages.items():
            for kind, value in PII.items():
                assert value not in body, (role, url, kind)
        # ...and what they see of it is the redaction placeholder.
        reached = "".join(pages[u][1] for u in conversation_pages)
        assert "[email]" in reached
    if role == "admin":
        assert any(u.startswith("/admin/") for u in pages)
        # The People pages (console/people/): the list and each person's page.
        assert pages["/people/"][0] == 200
        assert any(re.match(r"/people/\d+/$", u) for u in pages)
    if role in ("compliance", "admin"):
        reached = {"/compliance/deletions/", "/compliance/holds/", "/compliance/deletions/new/"}
        assert reached | {f"/compliance/deletions/{request.pk}/"} <= set(pages)
        exports = {
            f"/compliance/deletions/{done.pk}/receipt.csv",
            f"/compliance/deletions/{done.pk}/receipt.json",
            "/audit/export.csv",
            "/audit/export.json",
        }
        exports.add("/compliance/share-links/")
        assert exports <= set(pages), exports - set(pages)
        assert all(pages[u][0] == 200 for u in exports)
        # The erased customer's id is in none of them; the hold names the backend's id.
        for url in exports:
            assert gone.customer_external_id not in pages[url][1], url
        assert world.billing.external_id in pages["/compliance/holds/"][1]


def test_share_pages_carry_no_marker_no_dropped_field_and_no_raw_pii(
    client: Any, world: World
) -> None:
    """The public share page (every state) and what it links to, opened without login."""
    work_note_save(note=WorkNote(tool_name="get_order", template="Looked up order {order_id}"))
    agent = world.users["agent"]
    _, live = share_link_create(actor=agent, conversation_id=world.billing.pk)
    revoked, revoked_token = share_link_create(actor=agent, conversation_id=world.billing.pk)
    share_link_revoke(actor=agent, link_id=revoked.pk)
    client.logout()
    address = "10.9.8.7"
    for token, status in ((live, 200), (revoked_token, 410), ("guessed", 404)):
        response = client.get(f"/s/{token}/", REMOTE_ADDR=address)
        assert response.status_code == status
        body = response.content.decode()
        headers = "\n".join(f"{k}: {v}" for k, v in response.items())
        for text in (body, headers):
            for marker in [*MARKERS, "internal_note"]:
                assert marker not in text, (token, marker)
            for value in PII.values():
                assert value not in text
        assert response["Cache-Control"] == "no-store, private"
        assert "noindex" in response["X-Robots-Tag"]
    body = client.get(f"/s/{live}/", REMOTE_ADDR=address).content.decode()
    assert "Looked up order ORD-7654321" in body and "[email]" in body
    # Nothing on it leads into the console (no link but the stylesheet's).
    assert HREF.findall(body) == ["/static/console/console.css"]
