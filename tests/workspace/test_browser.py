"""The console read all day, in Chromium at 1440 and 390 px (issue 35), each test failing on the
defect it names:

1. every chart is legible: no text of a chart drawn under 11 px (the model page's output-token
   histogram was about 4 px), on the model page, the readiness report and the signals index;
2. a live answer is seen on a desktop: while it streams, the in-flight panel is above the fold
   (it was at the bottom at 1440x900); "Live now" lists it without a reload, and the menu
   counts it;
3. a turn of 10,000 tool calls: the page is under 1 MB (it was 15.5 MB), shows its first and
   last calls and the count between, and loads the rest on demand, in place.

Screenshots go to ``$CONSOLE_SHOTS_DIR`` (default ``/tmp/i35-shots``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.test import Client

from conversations.workspace.folds import KEEP_FIRST, KEEP_LAST
from tests.console.conftest import exchange, world  # noqa: F401  (roles and users)
from tests.console.test_browser import CHROMIUM, CHROMIUM_ARGS, PageProblems, _agent, _log_in
from tests.conversation_page.streams import live_stream
from tests.factories import ingest
from tests.live.conftest import live_prefix  # noqa: F401  (a Redis prefix of its own)
from tests.live.test_live_browser import asgi_server  # noqa: F401
from tests.monitoring.helpers import SNAPSHOT, sonnet_price, store, text, thinking, user
from tests.workspace.long_turn import long_turn

pytestmark = pytest.mark.slow

SHOTS = Path(os.environ.get("CONSOLE_SHOTS_DIR", "/tmp/i35-shots"))
WIDTHS = {"1440": (1440, 900), "390": (390, 844)}
MIN_TEXT_PX = 11

# The rendered size of every text of every chart: its font size times the SVG's scale on screen.
CHART_TEXT_SIZES = """() => [...document.querySelectorAll('svg.chart text')].map(t => {
  const m = t.getScreenCTM();
  const size = parseFloat(getComputedStyle(t).fontSize);
  return {text: t.textContent, px: size * Math.hypot(m.a, m.b)};
})"""


# The innermost elements reaching past the screen's right edge.
WIDER_THAN_SCREEN = """() => {
  const past = e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1;
  return [...document.querySelectorAll('main *')].filter(e => past(e) && ![...e.children].some(past)
).map(e => e.tagName + '.' + e.className + ': ' + (e.textContent || '').slice(0, 40));
}"""


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def _signals() -> None:
    """Output tokens from tens to tens of thousands (a wide histogram), some cut off."""
    for i in range(40):
        store(
            f"b-{i}",
            [user("q")],
            [thinking(), text("a")],
            output=20 + int(1.3**i),
            reasoning=10 + i,
            latency=600 + 90 * i,
        )
    for i in range(4):
        store(f"cut-{i}", [user("q")], [text("cut")], stop="max_tokens", output=1024, latency=9000)
    sonnet_price()


def test_every_chart_is_legible_at_both_widths(live_server: Any, transactional_db: None) -> None:
    from playwright.sync_api import sync_playwright

    _agent()
    _signals()
    base = live_server.url
    pages = {
        "model": f"/signals/models/{SNAPSHOT}/",
        "readiness": "/signals/readiness/",
        "signals": "/signals/",
    }
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for label, (width, height) in WIDTHS.items():
                context = browser.new_context(viewport={"width": width, "height": height})
                page = context.new_page()
                problems = PageProblems(page)
                _log_in(page, base)
                for name, path in pages.items():
                    page.goto(f"{base}{path}")
                    sizes = page.evaluate(CHART_TEXT_SIZES)
                    assert sizes, f"{name}: no chart text"
                    small = [s for s in sizes if s["px"] < MIN_TEXT_PX]
                    assert small == [], f"{name} at {label}: {small[:3]}"
                    # Every chart inside the page: nothing wider than the screen.
                    _shot(page, f"{name}-{label}.png")
                    wide = page.evaluate(WIDER_THAN_SCREEN)
                    assert wide == [], f"{name} at {label}: {wide[:3]}"
                # The support lead's view of the list: most output first, in the URL.
                page.goto(f"{base}/?sort=output&min_output=1000")
                outputs = [
                    int(v)
                    for v in page.locator(".row-usage").evaluate_all(
                        "els => els.map(e => e.dataset.output)"
                    )
                ]
                assert outputs and outputs == sorted(outputs, reverse=True) and min(outputs) >= 1000
                assert page.locator("a.export-csv").is_visible()
                assert page.evaluate(WIDER_THAN_SCREEN) == []
                _shot(page, f"list-sorted-{label}.png")
                assert problems.errors == []
                context.close()
        finally:
            browser.close()


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_a_streaming_answer_is_seen_above_the_fold_and_live_now_follows(
    asgi_server: str,  # noqa: F811
    world: Any,  # noqa: F811
    service_token: str,
) -> None:
    from playwright.sync_api import sync_playwright

    conversation = world.billing
    for turns in (1, 2, 3):  # a conversation of a few turns: the in-flight panel was below them
        ingest(exchange("conv-billing", "billing", turns=turns))
    client = Client()
    client.force_login(world.users["agent"])
    session = client.cookies["sessionid"].value
    api = httpx.Client(
        base_url=asgi_server, headers={"Authorization": f"Bearer {service_token}"}, timeout=30
    )
    pieces = live_stream()[:4]  # the answer has begun (a tool call), not ended
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": session, "url": asgi_server}])
            now = context.new_page()
            problems = PageProblems(now)
            now.goto(f"{asgi_server}/live/")
            assert "No conversation is streaming" in now.inner_text("#live-now")
            assert now.locator("[data-live-count]").is_hidden()
            now.evaluate("window.__same_page = 1")  # gone if the page reloads
            page = context.new_page()
            page_problems = PageProblems(page)
            page.goto(f"{asgi_server}/conversations/{conversation.pk}/")
            time.sleep(0.5)  # both EventSources connect
            for seq, piece in enumerate(pieces):
                r = api.post(
                    "/api/v1/live/chunks",
                    json={
                        "conversation": conversation.external_id,
                        "customer": conversation.customer_external_id,
                        "format": "anthropic.messages",
                        "exchange": "live-i35",
                        "seq": seq,
                        "chunk": piece,
                    },
                )
                assert r.status_code == 202, r.text
            live = page.locator("#live")
            live.wait_for(state="visible", timeout=20000)
            for label, (width, height) in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": height})
                page.evaluate("window.scrollTo(0, 0)")
                box = live.bounding_box()
                assert box is not None
                assert box["y"] + 40 < height, f"the in-flight panel at y={box['y']} ({label})"
                turns = page.locator("ol.timeline").bounding_box()
                assert turns is not None and box["y"] < turns["y"]
                page.screenshot(path=str(SHOTS / f"live-conversation-{label}.png"))
            # Live now: the list and the menu's count followed, the page was not reloaded.
            now.wait_for_function(
                f"() => document.querySelector('#live-now').textContent"
                f".includes({conversation.external_id!r})",
                timeout=20000,
            )
            assert now.evaluate("window.__same_page") == 1
            badge = now.locator("[data-live-count]")
            assert badge.is_visible() and badge.inner_text() == "1"
            _shot(now, "live-now-1440.png")
            now.set_viewport_size({"width": 390, "height": 844})
            _shot(now, "live-now-390.png")
            assert problems.errors == [] and page_problems.errors == []
        finally:
            browser.close()
            api.close()


def test_a_turn_of_ten_thousand_calls_is_a_light_page(
    live_server: Any, transactional_db: None
) -> None:
    from playwright.sync_api import sync_playwright

    _agent()
    conversation = long_turn(10_000)
    base = live_server.url
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for label, (width, height) in WIDTHS.items():
                context = browser.new_context(viewport={"width": width, "height": height})
                page = context.new_page()
                problems = PageProblems(page)
                _log_in(page, base)
                response = page.goto(f"{base}/conversations/{conversation.pk}/")
                assert response is not None and response.ok
                size = len(response.body())
                assert size < 1_000_000, f"{size:,} bytes at {label}"
                assert page.locator(".turn .call").count() == KEEP_FIRST + KEEP_LAST
                fold = page.locator("section.fold")
                assert "9,994 more tool calls" in fold.inner_text()
                # The rest on demand: the next 200 swapped in, in place.
                fold.get_by_role("link").click()
                page.wait_for_function(
                    "() => document.querySelectorAll('.fold-parts .call').length === 200"
                )
                assert "9,794 more" in fold.inner_text()
                wide = page.evaluate(WIDER_THAN_SCREEN)
                assert wide == [], f"at {label}: {wide[:3]}"
                page.evaluate("window.scrollTo(0, 0)")
                _shot(page, f"long-turn-{label}.png")
                assert problems.errors == []
                context.close()
        finally:
            browser.close()
