"""The console in a real browser: an agent logs in, lists, searches and opens a conversation.

Headless Debian chromium (/usr/bin/chromium) driven by Playwright's sync API against
pytest-django's ``live_server``. Playwright's own browser download does not work in our
environments, so the module is skipped where that chromium is missing (CI installs it).

Screenshots of each step go to ``tests/artifacts/`` (git-ignored) for a human to look at.

Playwright's sync API keeps an event loop running in this thread while the browser is open,
and Django refuses ORM calls from a thread with a running loop; so everything the test needs
from the database is read before the browser starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db.models import Exists, OuterRef

from conversations.demo import demo_bodies
from conversations.ingest.body import exchange_input
from conversations.models import Block, Conversation, Exchange
from conversations.services import conversation_ingest_exchange, queue_grant

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
        allow_module_level=True,
    )

from playwright.sync_api import (  # noqa: E402
    ConsoleMessage,
    Page,
    Request,
    Response,
    sync_playwright,
)

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "a-long-browser-test-password"
QUEUE = "billing"
SEARCH_WORD = "refund"
TOOLS = ("get_order", "lookup_order", "getOrderStatus")
# Deliberation written by conversations/demo.py (THINKING): none of it may reach the page.
REASONING_PHRASES = ("I should look it up", "check the payment records first")


@dataclass(frozen=True)
class Expected:
    """What the pages should show, read from the database before the browser starts."""

    billing: frozenset[int]
    other_customers: frozenset[str]
    matching: frozenset[int]
    # A conversation found by the search, with a tool call and a reasoning marker.
    target: int
    tool: str
    order: str
    # A billing conversation whose exchange reported a reasoning token count, and that count.
    counted: int
    reasoning_tokens: int
    # The chat backend's ids of both: what the list and the page show.
    target_id: str = ""
    counted_id: str = ""


def _agent() -> None:
    call_command("setup_roles", verbosity=0)
    agent = get_user_model().objects.create_user("agent", password=PASSWORD)
    agent.groups.add(Group.objects.get(name="support_agent"))
    queue_grant(principal=agent, queue_name=QUEUE)


def _ingest_demo() -> None:
    """Demo conversations, a dozen at a time, until the pages have what these tests look at
    (``_expected``): the demo rotates through every registered format and draws its cases at
    random, so how many that takes depends on the formats there are."""
    seen: set[str] = set()
    for body in demo_bodies(240):
        if body["conversation"] not in seen and len(seen) % 12 == 0 and seen and _ready():
            return
        seen.add(body["conversation"])
        conversation_ingest_exchange(data=exchange_input(body))


def _ready() -> bool:
    try:
        _expected()
    except AssertionError:
        return False
    return True


def _expected() -> Expected:
    conversations = Conversation.objects.all()
    billing = set(conversations.filter(queue=QUEUE).values_list("pk", flat=True))
    others = conversations.exclude(queue=QUEUE)
    assert billing, "the demo data has no billing conversation"
    assert others.exists(), "the demo data has no conversation outside billing"
    blocks = Block.objects.filter(conversation=OuterRef("pk"))
    matching = set(
        conversations.filter(
            Exists(blocks.filter(block_class="visible", text__icontains=SEARCH_WORD)),
            pk__in=billing,
        ).values_list("pk", flat=True)
    )
    # The search must narrow the list, or the test would not show that it filters.
    assert matching, f"no billing conversation says {SEARCH_WORD!r}"
    assert matching < billing, f"every billing conversation says {SEARCH_WORD!r}"
    target = (
        conversations.filter(
            Exists(blocks.filter(block_class="audit", tool_name__in=TOOLS)),
            Exists(blocks.filter(block_class="never")),
            pk__in=matching,
        )
        .order_by("pk")
        .first()
    )
    assert target is not None, "no searchable billing conversation with tools and reasoning"
    tool_block = Block.objects.filter(
        conversation=target, block_class="audit", tool_name__in=TOOLS
    ).first()
    assert tool_block is not None
    order = re.search(r"ORD-\d+", str(tool_block.fields))
    assert order, f"the tool block keeps no order id: {tool_block.fields!r}"
    counted = (
        Exchange.objects.filter(
            conversation__in=conversations.filter(
                Exists(blocks.filter(block_class="never")), pk__in=billing
            ),
            reasoning_tokens__gt=0,
        )
        .order_by("conversation_id")
        .values_list("conversation_id", "reasoning_tokens")
        .first()
    )
    assert counted is not None, "no billing conversation reports reasoning tokens"
    counted_pk, tokens = counted
    assert tokens is not None
    return Expected(
        billing=frozenset(billing),
        other_customers=frozenset(others.values_list("customer_external_id", flat=True)),
        matching=frozenset(matching),
        target=target.pk,
        tool=tool_block.tool_name,
        order=order.group(0),
        counted=counted_pk,
        reasoning_tokens=tokens,
        target_id=target.external_id,
        counted_id=Conversation.objects.get(pk=counted_pk).external_id,
    )


class PageProblems:
    """JavaScript exceptions, console errors and failed requests seen by a page.

    The exclusions: ``/favicon.ico`` (Chromium asks for it on its own, the console has none,
    and the 404 with its "Failed to load resource" console line says nothing about our pages),
    and a load the browser itself abandoned because the page navigated on (``net::ERR_ABORTED``:
    a form submitted while the page's icon was still loading).
    """

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("console", self._console)
        page.on("response", self._response)
        page.on("requestfailed", self._failed)

    @staticmethod
    def _is_favicon(url: str) -> bool:
        return urlsplit(url).path == "/favicon.ico"

    def _add(self, url: str, problem: str) -> None:
        if not self._is_favicon(url):
            self.errors.append(problem)

    def _failed(self, request: Request) -> None:
        if request.failure == "net::ERR_ABORTED":
            return
        self._add(request.url, f"request failed: {request.url} ({request.failure})")

    def _console(self, msg: ConsoleMessage) -> None:
        if msg.type == "error":
            self._add(msg.location.get("url", ""), f"console error: {msg.text} ({msg.location})")

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self._add(response.url, f"HTTP {response.status}: {response.url}")


def _listed(page: Page) -> set[int]:
    """The conversation ids the list links to."""
    hrefs = page.locator("table.list tbody a.row-link").evaluate_all(
        "els => els.map(a => a.pathname)"
    )
    ids = set()
    for href in hrefs:
        match = re.fullmatch(r"/conversations/(\d+)/", href)
        assert match, f"unexpected link in the list: {href}"
        ids.add(int(match.group(1)))
    return ids


def _shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


@contextmanager
def _browser_page() -> Iterator[tuple[Page, PageProblems]]:
    """A fresh headless chromium page at 1280x900, watched for errors."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            yield page, PageProblems(page)
        finally:
            browser.close()


def _log_in(page: Page, base: str, user: str = "agent", landing: str = "/") -> None:
    """Log in through the form, by its labels."""
    page.goto(f"{base}/login/")
    page.get_by_label("User name").fill(user)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    assert urlsplit(page.url).path == landing, page.url


def test_agent_lists_searches_and_opens_a_conversation(
    live_server: Any, transactional_db: None
) -> None:
    _agent()
    _ingest_demo()
    expected = _expected()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url

    with _browser_page() as (page, problems):
        _log_in(page, base)

        # The list: billing only. The stylesheet applied (static files served).
        page.get_by_role("heading", name="Conversations").wait_for()
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(246, 247, 249)", "console.css was not applied"
        listed = _listed(page)
        assert listed == expected.billing
        text = page.locator("main").inner_text()
        for customer in expected.other_customers:
            assert customer not in text
        _shot(page, "list.png")

        # Keyboard: Tab from the search field reaches Apply.
        search = page.get_by_label("Search", exact=True)
        search.focus()
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "[document.activeElement.tagName, document.activeElement.type,"
            " document.activeElement.textContent.trim()]"
        )
        assert focused == ["BUTTON", "submit", "Apply"]

        # Search a word of the visible answers, with the keyboard: type, Tab to Apply, Enter.
        # htmx swaps the results in place and pushes the URL once they are in.
        search.fill(SEARCH_WORD)
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"[?&]q={SEARCH_WORD}(&|$)"))
        assert search.input_value() == SEARCH_WORD
        assert _listed(page) == expected.matching
        _shot(page, "filtered.png")

        # Open a conversation found by the search; its response carries a CSP header.
        detail = f"/conversations/{expected.target}/"
        with page.expect_response(lambda r: urlsplit(r.url).path == detail) as info:
            page.get_by_role("link", name=expected.target_id, exact=True).click()
        page.wait_for_load_state()
        headers = info.value.headers
        page.get_by_role("heading", name=f"Conversation {expected.target_id}").wait_for()

        # The action trail: which tool, with the order it looked up.
        trail = page.locator(".call").filter(has_text=expected.tool)
        assert trail.count() >= 1, f"no trail entry for {expected.tool}"
        assert expected.order in " ".join(trail.all_inner_texts())
        # The reasoning: a content-free marker, never the text.
        markers = page.get_by_text(re.compile(r"^reasoned\b")).all_inner_texts()
        assert markers, "no reasoning marker"
        assert all(re.fullmatch(r"reasoned( · \d+ tokens)?", m) for m in markers), markers
        html = page.content()
        for phrase in REASONING_PHRASES:
            assert phrase not in html
        _shot(page, "conversation.png")

        # The large monitor.
        page.set_viewport_size({"width": 1920, "height": 1080})
        _shot(page, "conversation-1920.png")
        page.set_viewport_size({"width": 1280, "height": 900})

        # A conversation whose provider reported reasoning tokens shows the count.
        page.get_by_role("link", name="← Conversations").click()
        page.get_by_role("link", name=expected.counted_id, exact=True).click()
        page.get_by_role("heading", name=f"Conversation {expected.counted_id}").wait_for()
        marker = f"reasoned · {expected.reasoning_tokens} tokens"
        assert page.get_by_text(marker, exact=True).count() >= 1, marker
        assert all(phrase not in page.content() for phrase in REASONING_PHRASES)
        _shot(page, "conversation-tokens.png")

        assert problems.errors == []
        assert "content-security-policy" in headers, (
            f"no Content-Security-Policy on {detail}: {sorted(headers)}"
        )


def test_agent_header_links_all_open(live_server: Any, transactional_db: None) -> None:
    """Every link of the header is one the agent may follow: no link to a page that answers
    404 for their role (the console's answer to "forbidden")."""
    _agent()
    base = live_server.url
    with _browser_page() as (page, _problems):
        _log_in(page, base)
        hrefs = page.locator("header a").evaluate_all("els => els.map(a => a.href)")
        assert hrefs
        broken = []
        for href in hrefs:
            response = page.goto(href)
            assert response is not None
            if response.status >= 400:
                broken.append(f"{urlsplit(href).path}: HTTP {response.status}")
        assert broken == [], f"header links the agent cannot open: {broken}"


def _compliance() -> None:
    call_command("setup_roles", verbosity=0)
    officer = get_user_model().objects.create_user("officer", password=PASSWORD)
    officer.groups.add(Group.objects.get(name="compliance"))


def test_compliance_submits_a_deletion_request_and_reads_its_receipt(
    live_server: Any, transactional_db: None
) -> None:
    """Deletions → New → preview (counted) → confirm → the request's page; after a tick of the
    clock, its receipt. Then a legal hold placed from its page."""
    from retention.models import DeletionRequest
    from retention.services import retention_tick

    _compliance()
    _ingest_demo()
    customer = (
        Conversation.objects.values_list("customer_external_id", flat=True)
        .order_by("customer_external_id")
        .first()
    )
    count = Conversation.objects.filter(customer_external_id=customer).count()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url

    with _browser_page() as (page, problems):
        _log_in(page, base, "officer", "/audit/")
        page.get_by_role("link", name="Deletions", exact=True).click()
        page.get_by_role("heading", name="Deletion requests").wait_for()
        page.get_by_role("link", name="New deletion request").click()
        page.get_by_label("Customer id").fill(str(customer))
        page.get_by_label("Reason").fill("GDPR art. 17 request")
        page.get_by_label("Ticket").fill("ZD-4711")
        page.get_by_role("button", name="Preview").click()
        page.get_by_role("heading", name="This request would erase, as of now").wait_for()
        preview = page.locator(".preview").inner_text()
        assert f"{count} conversation" in preview, preview
        assert "conversations.message" in preview
        _shot(page, "deletion-preview.png")
        page.get_by_role("button", name="Confirm deletion request").click()
        page.get_by_role("heading", name=re.compile(r"^Deletion request \d+ pending")).wait_for()
        text = page.locator("main").inner_text()
        assert "submitted" in text and "days left" in text and "ZD-4711" in text
        _shot(page, "deletion-pending.png")
        assert problems.errors == []

    retention_tick()
    request = DeletionRequest.objects.get()
    assert request.status == "completed"

    with _browser_page() as (page, problems):
        _log_in(page, base, "officer", "/audit/")
        page.goto(f"{base}/compliance/deletions/{request.pk}/")
        receipt = page.locator("#receipt").inner_text()
        assert "HMAC" in receipt and "valid" in receipt and "nothing left" in receipt
        assert str(customer) not in page.content()
        _shot(page, "deletion-receipt.png")
        page.get_by_role("link", name="Legal holds", exact=True).click()
        page.get_by_label("What it covers").select_option("queue")
        page.get_by_label("Queue").fill(QUEUE)
        page.get_by_label("Reason").fill("regulator inquiry R-12")
        page.get_by_role("button", name="Place hold").click()
        page.get_by_text(re.compile(r"^Legal hold \d+ placed\.$")).wait_for()
        assert "regulator inquiry R-12" in page.locator("table.list").inner_text()
        _shot(page, "holds.png")
        assert problems.errors == []
        # Every header link opens for compliance staff (fetched with the session's cookies).
        hrefs = page.locator("header a").evaluate_all("els => els.map(a => a.href)")
        for href in hrefs:
            assert page.request.get(href).status < 400, href
