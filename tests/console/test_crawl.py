"""A crawl as each role: follow every link reachable from the console's home. Planted markers
from reasoning and from dropped fields appear in no body and no header; for agents, no planted
PII appears unredacted."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

from retention.services import deletion_request_submit, legal_hold_place
from tests.console.conftest import DROPPED_MARKER, PII, REASONING_MARKER, SIGNATURE_MARKER, World

pytestmark = pytest.mark.django_db(databases="__all__")
HREF = re.compile(r'href="([^"#]+)"')
MARKERS = [REASONING_MARKER, SIGNATURE_MARKER, DROPPED_MARKER]
MAX_PAGES = 250


def crawl(client: Any) -> dict[str, tuple[int, str, str]]:
    seen: dict[str, tuple[int, str, str]] = {}
    queue = ["/"]
    while queue and len(seen) < MAX_PAGES:
        url = queue.pop(0)
        if url in seen:
            continue
        response = client.get(url)
        body = response.content.decode("utf-8", "replace")
        headers = "\n".join(f"{k}: {v}" for k, v in response.items())
        seen[url] = (response.status_code, body, headers)
        if response.status_code in (301, 302):
            queue.append(response["Location"])
            continue
        for href in HREF.findall(body):
            target = urljoin(url, href.replace("&amp;", "&"))
            parts = urlsplit(target)
            if parts.netloc or not parts.path.startswith("/"):
                continue  # another site (source-system links): not ours to crawl
            if any(word in parts.path for word in ("/logout", "/delete/", "/static/")):
                continue
            queue.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return seen


@pytest.mark.parametrize("role", ["agent", "other_agent", "reviewer", "compliance", "admin"])
def test_crawl_finds_no_marker_and_no_raw_pii(client: Any, world: World, role: str) -> None:
    # A deletion request and a legal hold, so the compliance pages have rows to show.
    request = deletion_request_submit(customer=world.billing.customer_external_id, reason="crawl")
    legal_hold_place(scope="queue", queue="shipping", reason="crawl")
    client.force_login(world.users[role])
    pages = crawl(client)
    assert len(pages) > 1
    for url, (_, body, headers) in pages.items():
        for marker in MARKERS:
            assert marker not in body, (role, url, marker)
            assert marker not in headers, (role, url, marker)
    if role in ("agent", "other_agent", "reviewer"):
        conversation_pages = [u for u in pages if u.startswith("/conversations/")]
        assert conversation_pages, "the crawl reached no conversation"
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
