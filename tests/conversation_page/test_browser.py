"""The conversation page in Chromium at 1280 and 390 px: its panels, a live answer, a share link.

1. A three-turn conversation with tool calls: the timing-and-cost bars, their tokens and prices
   held against the stored exchanges; each bar's label reached by keyboard; nothing wider than a
   phone.
2. A Markdown answer streamed live: rendered as it streams (by the page's sanitiser: the
   ``<script>`` in it shown as text, never run), the tool's name and its result in words, the
   header's counts moved on, the in-flight panel first on a phone.
3. A share link opened in a fresh context (no login, no cookie) in Tokyo: the Markdown rendered
   and the times in the viewer's zone.

Screenshots go to ``$CONSOLE_SHOTS_DIR`` (default ``/tmp/i25a-shots``).
"""

from __future__ import annotations

import os
import re
import time
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from django.test import Client

from conversations.models import Exchange
from conversations.sharing.services import share_link_create
from tests.console.test_browser import CHROMIUM, CHROMIUM_ARGS, PageProblems, _agent, _log_in
from tests.conversation_page.streams import live_stream
from tests.conversation_page.world import THOUGHT, build, expected_price
from tests.live.conftest import live_prefix  # noqa: F401  (a Redis prefix of its own)
from tests.live.test_live_browser import asgi_server  # noqa: F401

pytestmark = pytest.mark.slow

SHOTS = Path(os.environ.get("CONSOLE_SHOTS_DIR", "/tmp/i25a-shots"))
WIDTHS = {"1280": (1280, 900), "390": (390, 844)}


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def _price_text(value: Decimal) -> str:
    return f"${value:.4f}"


def test_timeline_bars_tokens_and_prices_match_the_stored_exchanges(
    live_server: Any, transactional_db: None
) -> None:
    from playwright.sync_api import sync_playwright

    _agent()
    w = build()
    exchanges = list(Exchange.objects.filter(conversation=w.conversation).order_by("ordinal"))
    base = live_server.url
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for label, (width, height) in WIDTHS.items():
                context = browser.new_context(
                    viewport={"width": width, "height": height}, timezone_id="Europe/Paris"
                )
                page = context.new_page()
                problems = PageProblems(page)
                _log_in(page, base)
                page.goto(f"{base}/conversations/{w.conversation.pk}/")
                page.get_by_role("heading", name="Timing and cost").wait_for()
                turns = page.locator("[data-turn-cost]")
                assert turns.count() == 3
                models = page.locator('li[data-bar="model"]')
                assert models.count() == len(exchanges) == 5
                assert page.locator('li[data-bar="tool"]').count() == 2
                turn_of = [0, 0, 1, 1, 2]
                for i, e in enumerate(exchanges):
                    row = models.nth(i)
                    first = exchanges[[0, 2, 4][turn_of[i]]]
                    start = int((e.started_at - first.started_at).total_seconds() * 1000)
                    assert row.get_attribute("data-start-ms") == str(start)
                    assert row.get_attribute("data-duration-ms") == str(e.latency_ms)
                    price = expected_price(e, w.price)
                    assert Decimal(row.get_attribute("data-price") or "") == price
                    text = row.inner_text()
                    assert _price_text(price) in text
                    # One meaning of "input" on every page: every input token billed, the
                    # cache reads inside it (Anthropic's own count leaves them out).
                    billed = (
                        e.input_tokens + (e.cache_read_tokens or 0) + (e.cache_write_tokens or 0)
                    )
                    cached = f" ({e.cache_read_tokens:,} from cache)" if e.cache_read_tokens else ""
                    assert f"{billed:,} in{cached}" in text
                    assert f"{e.output_tokens:,} out" in text
                    # The bar is drawn, inside its track, as wide as its share of the turn.
                    bar = row.locator(".wf-bar").bounding_box()
                    track = row.locator(".wf-track").bounding_box()
                    assert bar is not None and track is not None
                    assert bar["x"] >= track["x"] - 1
                    assert bar["x"] + bar["width"] <= track["x"] + track["width"] + 4
                # The first call's reasoning was not reported: estimated, and it says so.
                assert "(est.)" in models.nth(0).inner_text()
                for t, (a, b) in enumerate([(0, 2), (2, 4), (4, 5)]):
                    total = sum((expected_price(e, w.price) for e in exchanges[a:b]), Decimal(0))
                    cell = turns.nth(t).locator(".wf-turn-price")
                    assert Decimal(cell.get_attribute("data-price") or "") == total
                    assert cell.inner_text() == _price_text(total)
                # Seconds where minutes repeat: the first turns fall in one minute.
                heads = page.locator("li.turn .turn-head time").all_inner_texts()
                assert any(re.search(r"\d\d:\d\d:\d\d", h) for h in heads), heads
                # Keyboard: Tab reaches a bar's label; Enter goes to its turn.
                link = models.nth(1).locator("a.wf-label")
                link.focus()
                assert page.evaluate("document.activeElement.classList.contains('wf-label')")
                page.keyboard.press("Enter")
                page.wait_for_function("() => location.hash.length > 1")
                assert page.evaluate("location.hash") == link.get_attribute("href")
                # A phone: nothing wider than the screen.
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                assert THOUGHT not in page.content()
                page.evaluate("window.scrollTo(0, 0)")
                _shot(page, f"timeline-{label}.png")
                assert problems.errors == []
                context.close()
        finally:
            browser.close()


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_a_live_markdown_answer_streams_rendered_with_its_tool(
    asgi_server: str,  # noqa: F811
    world: Any,
    service_token: str,
) -> None:
    from playwright.sync_api import sync_playwright

    conversation = world.billing
    client = Client()
    client.force_login(world.users["agent"])
    session = client.cookies["sessionid"].value
    api = httpx.Client(
        base_url=asgi_server, headers={"Authorization": f"Bearer {service_token}"}, timeout=30
    )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": session, "url": asgi_server}])
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{asgi_server}/conversations/{conversation.pk}/")
            counts = page.locator("#head-counts")
            exchanges_before = int(
                counts.locator('[data-count="exchanges"]').get_attribute("data-n") or ""
            )
            tools_before = int(counts.locator('[data-count="tools"]').get_attribute("data-n") or "")
            time.sleep(0.5)  # the EventSource connects
            for seq, piece in enumerate(live_stream()):
                r = api.post(
                    "/api/v1/live/chunks",
                    json={
                        "conversation": conversation.external_id,
                        "customer": conversation.customer_external_id,
                        "format": "anthropic.messages",
                        "exchange": "live-ws2",
                        "seq": seq,
                        "chunk": piece,
                    },
                )
                assert r.status_code == 202, r.text
            live = page.locator("#live")
            live.locator(".live-text strong").wait_for(timeout=20000)
            page.wait_for_function(
                "() => document.querySelector('#live .live-text em')?.textContent === 'shipped'",
                timeout=20000,
            )
            answer = live.locator(".live-text .answer")
            assert answer.locator("strong").inner_text() == "ORD-7770001"
            assert answer.locator("li").count() == 2
            assert answer.locator("code").inner_text() == "Monday"
            assert answer.locator("script").count() == 0
            assert "<script>window.__live_pwned = 1</script>" in answer.inner_text()
            assert page.evaluate("typeof window.__live_pwned") == "undefined"
            tool = live.locator(".live-tools li")
            assert tool.count() == 1  # the result answered its call: no row of its own
            assert tool.locator(".tool").inner_text() == "web_search"
            assert tool.locator(".status").inner_text() == "returned a result"
            assert "running" not in live.inner_text()
            assert "web_search_tool_result" not in live.inner_text()
            assert int(
                counts.locator('[data-count="exchanges"]').get_attribute("data-n") or ""
            ) == (exchanges_before + 1)
            assert (
                int(counts.locator('[data-count="tools"]').get_attribute("data-n") or "")
                == tools_before + 1
            )
            assert counts.locator('[data-count="exchanges"]').inner_text().endswith("model calls")
            page.wait_for_function(
                "() => /^Finished/.test(document.querySelector('.live-meta').textContent)",
                timeout=20000,
            )
            _shot(page, "live-1280.png")
            # A phone: the exchange in flight comes before the stored turns.
            page.set_viewport_size({"width": 390, "height": 844})
            live_top = live.bounding_box()
            turns_top = page.locator("ol.timeline").bounding_box()
            assert live_top is not None and turns_top is not None
            assert live_top["y"] < turns_top["y"]
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            _shot(page, "live-390.png")
            assert errors == []
        finally:
            browser.close()
            api.close()


def test_a_share_link_opened_elsewhere_is_rendered_in_the_viewers_zone(
    live_server: Any, transactional_db: None
) -> None:
    from playwright.sync_api import sync_playwright

    _agent()
    w = build()
    from django.contrib.auth import get_user_model

    agent = get_user_model().objects.get(username="agent")
    _, token = share_link_create(actor=agent, conversation_id=w.conversation.pk)
    base = live_server.url
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for label, (width, height) in WIDTHS.items():
                context = browser.new_context(  # a fresh context: no session, no cookie
                    viewport={"width": width, "height": height}, timezone_id="Asia/Tokyo"
                )
                page = context.new_page()
                problems = PageProblems(page)
                page.goto(f"{base}/s/{token}/")
                assert urlsplit(page.url).path == f"/s/{token}/"
                answers = page.locator(".answer")
                answers.first.wait_for()
                assert answers.nth(0).locator("strong").inner_text() == "shipped"
                assert answers.nth(1).locator("em").inner_text() == "delayed"
                assert answers.nth(1).locator("li").count() == 2
                assert "**" not in page.inner_text("main")
                page.wait_for_function(
                    "() => document.querySelector('[data-zone]').textContent.includes('Tokyo')"
                )
                assert "Asia/Tokyo" in page.inner_text("[data-zone]")
                # 09:15:02 UTC is 18:15:02 in Tokyo, on the first turn and as "started".
                first = page.locator("li.turn time").first.inner_text()
                assert first.startswith("2025-03-04 18:15:02"), first
                assert "GMT+9" in first or "JST" in first
                started = page.locator(".facts time").first.inner_text()
                assert started.startswith("2025-03-04 18:15:02"), started
                assert "order id" in page.inner_text("main") and "(input)" in page.inner_text(
                    "main"
                )
                assert THOUGHT not in page.content()
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                _shot(page, f"share-{label}.png")
                assert problems.errors == []
                context.close()
        finally:
            browser.close()
