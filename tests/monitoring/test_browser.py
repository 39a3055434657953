"""The signals' pages in a real browser (headless Debian chromium, like tests/console/test_browser):
an agent follows Signals → a model page → an alert; screenshots of both are saved under
``$SIGNALS_SCREENSHOTS`` (default: the system's temporary folder, ``signals-screenshots/``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conversations.models import Alert
from conversations.monitoring.alerts import monitoring_tick
from tests.console import test_browser as tb
from tests.monitoring.helpers import SNAPSHOT, sonnet_price, store, text, thinking, user

pytestmark = pytest.mark.slow
MARKER = "MARKER-REASONING-SIGNALS-5c1e"
SHOTS = Path(os.environ.get("SIGNALS_SCREENSHOTS", tempfile.gettempdir())) / "signals-screenshots"


def _seed() -> int:
    for i in range(30):
        store(
            f"b-{i}",
            [user("q")],
            [thinking(), text("a")],
            output=120 + 13 * i,
            reasoning=60 + 6 * i,
            latency=600 + 90 * i,
        )
    for i in range(8):
        store(
            f"cut-{i}",
            [user("q")],
            [thinking(), text("cut")],
            stop="max_tokens",
            output=1024,
            reasoning=990,
            latency=9000,
        )
    sonnet_price()
    assert monitoring_tick().fired == 1
    return Alert.objects.get().pk


def test_agent_reads_a_model_page_and_an_alert(live_server: Any, transactional_db: None) -> None:
    tb._agent()
    alert = _seed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    with tb._browser_page() as (page, problems):
        tb._log_in(page, base)
        page.get_by_role("link", name="Signals").click()
        page.wait_for_load_state()
        assert page.get_by_role("heading", name="Signals").is_visible()
        page.get_by_role("link", name=SNAPSHOT).first.click()
        page.wait_for_load_state()
        assert page.get_by_role("heading", name="Output tokens").is_visible()
        body = page.inner_text("main")
        assert "p99" in body and "cut off (max tokens)" in body
        assert "Price per 1,000 conversations" in body and "$" in body
        assert page.locator("svg.chart").count() == 3
        page.screenshot(path=str(SHOTS / "model-page.png"), full_page=True)
        page.get_by_role("link", name="← Signals").click()
        page.wait_for_load_state()
        page.get_by_role("link", name="Answers truncated (reasoning ate the allowance)").click()
        page.wait_for_load_state()
        assert page.url.endswith(f"/signals/alerts/{alert}/")
        alert_body = page.inner_text("main")
        assert "firing" in alert_body and "21.1 %" in alert_body
        links = page.locator("ul.behind a").all_inner_texts()
        assert sorted(links) == sorted(f"cut-{i}" for i in range(8))
        page.screenshot(path=str(SHOTS / "alert-page.png"), full_page=True)
        assert MARKER not in page.content()
        assert not problems.errors, problems.errors
    assert (SHOTS / "model-page.png").stat().st_size > 10_000
    assert (SHOTS / "alert-page.png").stat().st_size > 10_000
