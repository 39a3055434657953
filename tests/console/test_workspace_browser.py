"""The agent's workspace in a real browser (Chromium), with a ticket in hand.

An agent pastes the chat backend's conversation id into the search and lands on the
conversation; reads the Markdown answer rendered, with the ``<script>`` it contains shown as
text and never run; sees each failed tool call with its error text and every time with its zone;
opens a call's details (htmx); pastes an order id kept by an identifier policy and finds its
conversations; moves through them with ``j``/``k``. Screenshots at 1280, 1920 and 390 wide are
saved under the test's tmp dir (and copied to ``$CONSOLE_SHOTS_DIR`` when it is set).

The harness (chromium, the error watcher, the login) is ``test_browser.py``'s.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest

from tests.console.test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PASSWORD,
    PageProblems,
    _agent,
    _ingest_demo,
    _log_in,
)
from tests.console.workspace import (
    BACKEND_ID,
    ORDER,
    OTHER_ID,
    REFUND_ERROR,
    SCRIPT,
    SHIPMENT_ERROR,
    STARTED,
    TICKET,
    build,
)

pytestmark = pytest.mark.slow

ZONE = "America/New_York"
WIDTHS = {"1280": (1280, 900), "1920": (1920, 1080), "390": (390, 844)}


def _shots(tmp_path: Path) -> Any:
    out = os.environ.get("CONSOLE_SHOTS_DIR")

    def shot(page: Any, name: str) -> Path:
        path = tmp_path / name
        page.screenshot(path=str(path), full_page=True)
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(out) / name)
        return path

    return shot


def test_agent_finds_a_conversation_by_its_ids_and_reads_it(
    live_server: Any, transactional_db: None, settings: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    settings.TICKET_URL_TEMPLATE = "https://tickets.example.com/view/{ticket}"
    _agent()
    _ingest_demo()
    world = build()
    pk, other = world.conversation.pk, world.other.pk
    first_time = (
        # With seconds: the next turn falls in the same minute (issue 25).
        STARTED.astimezone(ZoneInfo(ZONE)).strftime("%Y-%m-%d %H:%M:%S ")
        + STARTED.astimezone(ZoneInfo(ZONE)).tzname()  # EST
    )
    shot = _shots(tmp_path)
    base = live_server.url

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id=ZONE)
            page = context.new_page()
            problems = PageProblems(page)
            _log_in(page, base)
            assert PASSWORD  # the harness's agent

            # The list: backend ids, statuses, snippets; the zone named.
            page.get_by_role("heading", name="Conversations").wait_for()
            row = page.locator("tr[data-row]").filter(has_text=BACKEND_ID)
            assert "escalated" in row.inner_text()
            assert ZONE in page.locator(".count").inner_text()
            shot(page, "list-1280.png")

            # 1. Paste the backend's conversation id: straight to it.
            page.keyboard.press("/")
            assert page.evaluate("document.activeElement.id") == "id_q"
            page.keyboard.insert_text(BACKEND_ID)
            with page.expect_navigation(url=re.compile(rf"/conversations/{pk}/$")):
                page.keyboard.press("Enter")
            page.get_by_role("heading", name=f"Conversation {BACKEND_ID}").wait_for()
            assert urlsplit(page.url).path == f"/conversations/{pk}/"
            ticket = page.locator("a.ticket")
            assert ticket.inner_text() == TICKET
            assert ticket.get_attribute("href") == f"https://tickets.example.com/view/{TICKET}"

            # 2. Markdown rendered; the <script> in the answer shown as text, never run.
            answer = page.locator(".answer").last
            assert answer.locator("strong").first.inner_text() == "two things went wrong"
            assert answer.locator("ol > li").count() == 2
            assert answer.locator("code").first.inner_text() == ORDER
            link = answer.locator("a", has_text="our delivery page")
            assert link.get_attribute("rel") == "noopener noreferrer nofollow"
            assert answer.locator("script").count() == 0
            assert SCRIPT in answer.inner_text()
            assert page.evaluate("typeof window.__pwned") == "undefined"

            # 3. Each failed tool call, one row joining call and result, with its error text.
            failed = page.locator(".call.tone-error")
            assert failed.count() == 2
            texts = failed.all_inner_texts()
            assert any("get_shipment" in t and SHIPMENT_ERROR in t for t in texts), texts
            assert any("refund_payment" in t and REFUND_ERROR in t for t in texts), texts
            assert all("failed" in t and "after 6.7 s" in t for t in texts), texts
            assert page.locator(".role-tool").count() == 0  # results sit with their calls

            # 4. Times with their zone.
            assert ZONE in page.locator(".zone").inner_text()
            times = page.locator(".turn-head time").all_inner_texts()
            assert times[0] == first_time, times
            assert all(t.endswith((" EST", " EDT")) for t in times), times
            assert (
                "Escalated to a person: tool failed (queue: tier 2)."
                in page.locator(".events").inner_text()
            )
            # The exchange beside the turn it produced, in plain words.
            panels = page.locator(".exchange-line").all_inner_texts()
            assert any("stopped to call a tool" in p and "2.3 s" in p for p in panels), panels
            assert any("finished its answer" in p for p in panels), panels

            # 5. A call's details, loaded in place by htmx.
            failed.first.locator("summary").click()
            details = failed.first.locator(".call-details")
            details.wait_for()
            assert "toolu_ship" in details.inner_text()
            assert "[not kept]" in details.inner_text()  # the error code: no policy keeps it

            for name, (width, height) in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": height})
                shot(page, f"conversation-{name}.png")
                overflow = page.evaluate(
                    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                assert overflow <= 1, f"the page scrolls sideways at {width} px: {overflow}"
            page.set_viewport_size({"width": 1280, "height": 900})

            # 6. Paste an order id an identifier policy keeps: its conversations.
            page.get_by_role("link", name="← Conversations").click()
            page.get_by_role("heading", name="Conversations").wait_for()
            search = page.get_by_label("Search", exact=True)
            search.fill(ORDER)
            search.press("Enter")
            page.locator(".found").wait_for()
            assert "tool calls carry the identifier" in page.locator(".found").inner_text()
            hrefs = page.locator("tr[data-row] a.row-link").evaluate_all(
                "els => els.map(a => a.pathname)"
            )
            assert sorted(hrefs) == sorted([f"/conversations/{pk}/", f"/conversations/{other}/"])
            assert f"q={ORDER}" in page.url  # the URL follows the partial update
            listed = page.locator("tr[data-row] .cid").all_inner_texts()
            assert {t.split()[0] for t in listed} == {BACKEND_ID, OTHER_ID}
            shot(page, "found-by-order-1280.png")

            # 7. j/k move through the rows; Enter opens the current one.
            page.locator("body").click(position={"x": 5, "y": 5})
            page.keyboard.press("j")
            page.keyboard.press("j")
            page.keyboard.press("k")
            current = page.locator("tr.is-current a.row-link")
            assert current.count() == 1
            target = current.evaluate("a => a.pathname")
            assert page.evaluate("document.activeElement.pathname") == target
            with page.expect_navigation():
                page.keyboard.press("Enter")
            assert urlsplit(page.url).path == target

            # The list on a phone and on a large monitor.
            page.go_back()
            page.locator(".found").wait_for()
            page.set_viewport_size({"width": 390, "height": 844})
            shot(page, "found-by-order-390.png")
            page.goto(f"{base}/")
            shot(page, "list-390.png")
            page.set_viewport_size({"width": 1920, "height": 1080})
            shot(page, "list-1920.png")

            assert problems.errors == []
        finally:
            browser.close()
