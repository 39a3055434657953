"""The review in a real browser: a reviewer logs in, opens the conversation, follows "Review
reasoning", states a purpose, and reads the summaries with the PII in them redacted.

Headless Debian chromium driven by Playwright against ``live_server``, launched as in
``tests/console/test_browser.py``; skipped where /usr/bin/chromium is missing. Screenshots go
to ``tests/artifacts/`` (review-form.png, review.png, review-openai.png). Everything the test
needs from the database is prepared before the browser starts (Django refuses ORM calls from a
thread running Playwright's event loop).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.review.conftest import HIDDEN, PASSWORD, PII, SHOWN, fetched_response, make_world
from tests.review.fake_provider import fake_openai

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
        allow_module_level=True,
    )

from playwright.sync_api import Page, sync_playwright  # noqa: E402

from tests.console.test_browser import CHROMIUM_ARGS, PageProblems  # noqa: E402

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def _shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/login/")
    page.get_by_label("User name").fill("reviewer")
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    assert urlsplit(page.url).path == "/", page.url


def _state_purpose(page: Page, statement: str) -> Any:
    page.get_by_label("Purpose", exact=True).select_option("complaint")
    page.get_by_label("Ticket", exact=True).fill("SUP-4711")
    page.get_by_label("What are you looking for?").fill(statement)
    with page.expect_response(lambda r: r.request.method == "POST") as info:
        page.get_by_role("button", name="Show the reasoning").click()
    page.wait_for_load_state()
    return info.value


def test_a_reviewer_reads_redacted_summaries(
    live_server: Any, transactional_db: None, settings: Any
) -> None:
    world = make_world()
    world.grant(conversation="anthropic")
    world.grant(conversation="fetch")
    anthropic = world.conversations["anthropic"].pk
    fetch = world.conversations["fetch"].pk
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url

    with fake_openai() as provider, sync_playwright() as pw:
        settings.OPENAI_API_KEY = "sk-test-review-key-not-real"
        settings.OPENAI_BASE_URL = provider.url
        provider.json_route("resp_fetch_ok", fetched_response("resp_fetch_ok"))
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            problems = PageProblems(page)
            _log_in(page, base)

            # From the conversation page, the link only a live grantee sees.
            page.goto(f"{base}/conversations/{anthropic}/")
            assert SHOWN["thinking"] not in page.content()
            page.get_by_role("link", name="Review reasoning").click()
            page.get_by_role("heading", name="State your purpose").wait_for()
            assert urlsplit(page.url).path == f"/conversations/{anthropic}/review/"
            html = page.content()
            assert "not testimony about the model's reasons" in html
            assert SHOWN["thinking"] not in html
            _shot(page, "review-form.png")

            # Submitting without a purpose shows the form again, with nothing read.
            page.get_by_role("button", name="Show the reasoning").click()
            page.get_by_role("heading", name="State your purpose").wait_for()
            assert SHOWN["thinking"] not in page.content()

            response = _state_purpose(page, "Customer disputes the refund the assistant offered.")
            assert response.status == 200
            assert response.headers["cache-control"] == "no-store, private"
            page.get_by_role(
                "heading", name=f"Reasoning review: conversation #{anthropic}"
            ).wait_for()
            text = page.locator("main").inner_text()
            assert SHOWN["thinking"] in text
            assert "[email]" in text and "[card ••4242]" in text
            assert PII["email"] not in text and PII["card"] not in text
            assert "redacted by provider" in text and "omitted by provider" in text
            assert "Recorded in the audit log as entry #" in text
            assert all(marker not in page.content() for marker in HIDDEN.values())
            _shot(page, "review.png")

            # An OpenAI exchange stored without a summary: fetched at read time, redacted.
            page.goto(f"{base}/conversations/{fetch}/review/")
            _state_purpose(page, "Why did the model stop before answering the customer?")
            text = page.locator("main").inner_text()
            assert SHOWN["fetched"] in text and "[email]" in text and PII["email"] not in text
            assert "fetched from the provider at read time" in text.lower()
            _shot(page, "review-openai.png")

            background = page.evaluate(
                "getComputedStyle(document.querySelector('.review-about')).borderLeftStyle"
            )
            assert background == "solid", "review.css was not applied"
            # The one expected error: the 400 of the form submitted without a purpose.
            expected = f"400 (Bad Request) ({{'url': '{base}/conversations/{anthropic}/review/'"
            rejected = f"HTTP 400: {base}/conversations/{anthropic}/review/"
            assert [e for e in problems.errors if expected not in e and e != rejected] == []
        finally:
            browser.close()
