"""Single sign-on in a real browser: headless Debian chromium (Playwright) clicks "Sign in with
Suite IdP" on the console (pytest-django's live server), signs in on the OpenID Provider's own
pages (Node's oidc-provider on loopback) and lands on the conversation list as a support agent.

As in tests/console/test_browser.py, everything the test needs from the database is done before
the browser starts or after it stops (Django refuses ORM calls beside Playwright's event loop).
Screenshots go to tests/artifacts/ (git-ignored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from console.people.roles import roles_of
from tests.factories import roles

from .op import PROVIDER_NAME, node_unavailable, running_provider

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
        allow_module_level=True,
    )

from playwright.sync_api import sync_playwright  # noqa: E402

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]


def test_a_support_agent_signs_in_through_the_provider_in_a_browser(
    live_server: Any, transactional_db: None, settings: Any, tmp_path: Path
) -> None:
    if node_unavailable():
        pytest.skip(node_unavailable() or "")
    roles()
    base = live_server.url
    ARTIFACTS.mkdir(exist_ok=True)
    with running_provider(tmp_path, redirect_uris=[f"{base}/oidc/callback/"]) as op:
        for name, value in op.settings().items():
            setattr(settings, name, value)
        op.set_account(
            "sub-browser", preferred_username="browser-agent", name="B. Agent", groups=["support"]
        )
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.goto(f"{base}/login/")
                page.screenshot(path=str(ARTIFACTS / "sso-1-console-login.png"))
                page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
                page.wait_for_url(f"{op.issuer}/interaction/**")
                page.fill("input[name=login]", "sub-browser")
                page.fill("input[name=password]", "any-password")
                page.screenshot(path=str(ARTIFACTS / "sso-2-provider-login.png"))
                page.click("button[type=submit]")
                page.wait_for_selector("text=Continue")  # the provider's consent page
                page.click("button[type=submit]")
                page.wait_for_url(f"{base}/")
                page.screenshot(path=str(ARTIFACTS / "sso-3-conversation-list.png"))
                heading = page.locator("h1").first.inner_text()
                header = page.locator("header").inner_text()
            finally:
                browser.close()
    assert "Conversations" in heading, heading
    assert "browser-agent" in header and "Live now" in header and "People" not in header
    user = get_user_model().objects.get(username="browser-agent")
    assert roles_of(user) == {"support_agent"}
    assert user.last_login is not None
