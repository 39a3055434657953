"""A crawl as each role: follow every link reachable from the console's home. Planted markers
from reasoning and from dropped fields appear in no body and no header; for agents, no planted
PII appears unredacted."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from django.utils import timezone

from conversations.services import conversation_record_event
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
        for url, (_, body, _) in pages.items():
            for kind, value in PII.items():
                assert value not in body, (role, url, kind)
        # ...and what they see of it is the redaction placeholder.
        reached = "".join(pages[u][1] for u in conversation_pages)
        assert "[email]" in reached
    if role == "admin":
        assert any(u.startswith("/admin/") for u in pages)
    if role in ("compliance", "admin"):
        reached = {"/compliance/deletions/", "/compliance/holds/", "/compliance/deletions/new/"}
        assert reached | {f"/compliance/deletions/{request.pk}/"} <= set(pages)
        exports = {
            f"/compliance/deletions/{done.pk}/receipt.csv",
            f"/compliance/deletions/{done.pk}/receipt.json",
            "/audit/export.csv",
            "/audit/export.json",
        }
        assert exports <= set(pages), exports - set(pages)
        assert all(pages[u][0] == 200 for u in exports)
        # The erased customer's id is in none of them; the hold names the backend's id.
        for url in exports:
            assert gone.customer_external_id not in pages[url][1], url
        assert world.billing.external_id in pages["/compliance/holds/"][1]
