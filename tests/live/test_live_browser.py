"""The live view in a real browser: every recorded stream replayed through
``POST /api/v1/live/chunks`` in random cuts while an agent has the conversation page open, the
console served by uvicorn (ASGI) as ``make run`` serves it. A MutationObserver records every
text that ever appears on the page: no thinking, signature or encrypted text, the indicator while
the model thinks, and the streamed text equal to the stored visible text.

Headless Debian chromium (/usr/bin/chromium) driven by Playwright's sync API; skipped where that
chromium is missing. The database is read before the browser starts (Playwright's loop in this
thread makes Django refuse ORM calls); the server runs in its own thread.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application
from django.test import Client

from conversations.live.filters import filter_for
from tests.live.streams import STREAMS_BY_NAME
from tests.live.test_filters import cuts, never_strings

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "browser tests need Debian's chromium at /usr/bin/chromium", allow_module_level=True
    )

import uvicorn  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True, databases="__all__")]

# Records every text node and every change of one, from the first byte of the page.
OBSERVER = """
window.__seen = [];
new MutationObserver((records) => {
  for (const r of records) {
    if (r.type === "characterData") window.__seen.push(r.target.data);
    for (const n of r.addedNodes || []) {
      window.__seen.push(n.textContent || "");
    }
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def asgi_server() -> Iterator[str]:
    from django.db import connections

    # as console/asgi.py runs the web process: no persistent connection per request thread
    before = {a: connections.settings[a]["CONN_MAX_AGE"] for a in connections.settings}
    for alias in connections.settings:
        connections.settings[alias]["CONN_MAX_AGE"] = 0
    port = _free_port()
    config = uvicorn.Config(
        ASGIStaticFilesHandler(get_asgi_application()),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(100):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    for alias, age in before.items():
        connections.settings[alias]["CONN_MAX_AGE"] = age
    # A server thread may still hold a connection: close them from here, so the test
    # databases can be flushed and dropped.
    for alias in connections:
        with connections[alias].cursor() as cur:
            cur.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


def test_every_stream_streams_on_the_page_and_no_thought(
    asgi_server: str, world: Any, service_token: str, settings: Any
) -> None:
    conversation = world.billing
    # Every recorded stream is an exchange of this one conversation, and those cut off before
    # their end stay open: room for all of them (the bound itself: tests/resilience).
    settings.LIVE_MAX_OPEN_EXCHANGES = len(STREAMS_BY_NAME) + 1
    client = Client()
    client.force_login(world.users["agent"])
    session = client.cookies["sessionid"].value
    streams = list(STREAMS_BY_NAME.values())
    never = {s.name: list(never_strings(s)) for s in streams}
    ends = {
        s.name: any(
            e["type"] in ("finished", "error") for e in filter_for(s.format).feed(s.stream, now=0)
        )
        for s in streams
    }
    api = httpx.Client(
        base_url=asgi_server, headers={"Authorization": f"Bearer {service_token}"}, timeout=30
    )
    # The page keeps WSGI-era pages working under ASGI: the list and the page itself.
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        try:
            context = browser.new_context()
            context.add_cookies([{"name": "sessionid", "value": session, "url": asgi_server}])
            page = context.new_page()
            page.add_init_script(OBSERVER)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            assert page.goto(f"{asgi_server}/").ok  # a sync page under ASGI
            page.goto(f"{asgi_server}/conversations/{conversation.pk}/")
            page.wait_for_function("() => window.__seen !== undefined")
            time.sleep(0.5)  # the EventSource connects
            for n, s in enumerate(streams):
                page.evaluate("window.__seen = []")
                rng = random.Random(n)
                for seq, piece in enumerate(cuts(s.stream, rng, most=3000)):
                    r = api.post(
                        "/api/v1/live/chunks",
                        json={
                            "conversation": conversation.external_id,
                            "customer": conversation.customer_external_id,
                            "format": s.format,
                            "exchange": f"call-{n}",
                            "seq": seq,
                            "chunk": piece,
                        },
                    )
                    assert r.status_code == 202, r.text
                # a stream cut off before its end stays open until its exchange or idle time
                # closes it: wait for its text, not for its end
                try:
                    page.wait_for_function(
                        "(expected) => JSON.stringify([...document.querySelectorAll('.live-block')]"
                        ".map(e => e.dataset.raw)) === JSON.stringify(expected)",
                        arg=list(s.visible),
                        timeout=20000,
                    )
                except Exception:
                    print(s.name, page.inner_html("#live"), errors)
                    raise
                if ends[s.name]:  # the stream's end is in it (not an event cut off at the end)
                    page.wait_for_function(
                        "() => /^(Finished|Stopped)/.test("
                        "document.querySelector('.live-meta').textContent)",
                        timeout=20000,
                    )
                seen = "\n".join(page.evaluate("window.__seen"))
                for text in never[s.name]:
                    for i in range(0, max(1, len(text) - 24), 6):
                        window = text[i : i + 24]
                        if len(window.strip()) >= 16 and not any(window in v for v in s.visible):
                            assert window not in seen, (s.name, window)
                if any(e["type"] == "thinking" for e in filter_for(s.format).feed(s.stream, now=0)):
                    assert "Thinking…" in seen or "Thought for" in seen, s.name
            assert errors == []
            assert page.goto(f"{asgi_server}/live/").ok
            assert conversation.external_id in page.content()
        finally:
            browser.close()
            api.close()
    # the page's requests went through the ASGI server, and the SSE stream was audited once
    from audit.models import AuditEvent

    assert AuditEvent.objects.filter(code="conversation.viewed", details__page="live").count() == 1
