"""Alerts: the two shipped rules fire once when exchanges cross their thresholds, notify a real
webhook on loopback (signed) and by e-mail, resolve when the rate drops; muted sends nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core import mail

from conversations.models import Alert, AlertEvent, AlertRule, Notification
from conversations.monitoring.alerts import monitoring_tick, rule_save
from tests.monitoring.helpers import assistant, store, text, thinking, tool_result, tool_use, user

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SECRET = "test-webhook-secret"
TRUNCATION = "Answers truncated (reasoning ate the allowance)"
LOOPING = "Agents looping on tools"


class Hook:
    """A webhook receiver on loopback: records each request; fails the first ``fail`` ones."""

    def __init__(self, fail: int = 0) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.fail = fail
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if hook.fail > 0:
                    hook.fail -= 1
                    self.send_response(503)
                    self.end_headers()
                    return
                hook.received.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(b) for _, b in self.received]


@pytest.fixture
def hook() -> Iterator[Hook]:
    h = Hook(fail=1)  # the first delivery fails: the tick retries it
    yield h
    h.server.shutdown()
    h.server.server_close()


def configure(name: str, url: str) -> AlertRule:
    rule = AlertRule.objects.get(name=name)
    rule.webhook_url = url
    rule.webhook_secret = SECRET
    rule.emails = "oncall@example.com"
    return rule_save(rule=rule)


def answers(n: int, *, truncated: bool, prefix: str) -> None:
    for i in range(n):
        if truncated:
            store(
                f"{prefix}-{i}",
                [user("long question")],
                [thinking(), text("cut")],
                stop="max_tokens",
                output=1024,
                reasoning=1000,
            )
        else:
            store(f"{prefix}-{i}", [user("question")], [text("fine")], output=60)


def valid_signature(headers: dict[str, str], body: bytes) -> bool:
    ts = headers["X-Signals-Timestamp"]
    expected = hmac.new(SECRET.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(headers["X-Signals-Signature"], f"sha256={expected}")


def test_truncation_fires_once_notifies_resolves_and_mute_silences(hook: Hook) -> None:
    assert AlertRule.objects.get(name=TRUNCATION).enabled  # shipped enabled
    configure(TRUNCATION, hook.url)
    answers(20, truncated=False, prefix="ok")
    answers(5, truncated=True, prefix="cut")  # 5 of 25: 20 % > 5 %
    first = monitoring_tick()
    assert first.fired == 1 and first.delivered == 2  # webhook (after one retry) and e-mail
    alert = Alert.objects.get(rule__name=TRUNCATION)
    assert alert.state == "firing" and alert.volume == 25
    assert abs(alert.value - 0.2) < 1e-9
    assert len(hook.received) == 1
    headers, raw = hook.received[0]
    assert valid_signature(headers, raw)
    body = json.loads(raw)
    assert body["state"] == "firing" and body["queue"] == "billing"
    assert body["text"].startswith(f"[FIRING] {TRUNCATION}: billing")
    assert "20.0 % over 25 exchanges" in body["text"]
    assert "reasoning was 98 % of the truncated answers' output" in body["text"]
    assert f"/signals/alerts/{alert.pk}/" in body["text"]
    assert Notification.objects.get(channel="webhook").attempts == 2  # retried once
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["oncall@example.com"]
    assert "FIRING" in mail.outbox[0].subject
    assert "MARKER" not in raw.decode() and "MARKER" not in mail.outbox[0].body

    # Still above the threshold: no second firing, nothing sent.
    again = monitoring_tick()
    assert again.fired == 0 and again.delivered == 0
    assert len(hook.received) == 1 and len(mail.outbox) == 1

    # The rate drops below 5 %: resolved, and said so.
    answers(80, truncated=False, prefix="more")  # 5 of 105
    resolved = monitoring_tick()
    assert resolved.resolved == 1
    alert.refresh_from_db()
    assert alert.state == "resolved"
    assert [b["state"] for b in hook.bodies()] == ["firing", "resolved"]
    assert all(valid_signature(h, b) for h, b in hook.received)
    assert len(mail.outbox) == 2
    assert list(
        AlertEvent.objects.filter(alert=alert).order_by("at", "id").values_list("state", flat=True)
    ) == ["firing", "resolved"]

    # Muted: breached again, the alert is muted and nobody is told.
    rule = AlertRule.objects.get(name=TRUNCATION)
    rule.muted = True
    rule_save(rule=rule)
    answers(30, truncated=True, prefix="cut2")
    muted = monitoring_tick()
    assert muted.muted == 1 and muted.fired == 0 and muted.delivered == 0
    alert.refresh_from_db()
    assert alert.state == "muted"
    assert len(hook.received) == 2 and len(mail.outbox) == 2


def test_agents_looping_on_tools_fire(hook: Hook) -> None:
    configure(LOOPING, hook.url)
    hook.fail = 0
    for i in range(20):
        store(f"calm-{i}", [user("q")], [text("a")])
    for i in range(4):  # the same call again with the same arguments
        q = user("where is my order")
        call = assistant(tool_use(f"t{i}", args={"order_id": "7"}))
        store(f"loop-{i}", [q], call["content"], stop="tool_use")
        result = {"role": "user", "content": [tool_result(f"t{i}")]}
        store(
            f"loop-{i}",
            [q, call, result],
            [tool_use(f"u{i}", args={"order_id": "7"})],
            stop="tool_use",
        )
    r = monitoring_tick()
    assert r.fired == 1
    alert = Alert.objects.get(rule__name=LOOPING)
    assert alert.state == "firing" and alert.volume == 28
    (body,) = hook.bodies()
    assert body["metric"] == "repeated_tool_calls"
    assert "[FIRING] Agents looping on tools" in body["text"]


def test_below_the_minimum_volume_nothing_fires(hook: Hook) -> None:
    configure(TRUNCATION, hook.url)
    answers(3, truncated=True, prefix="few")  # 100 % but 3 < 20 exchanges
    assert monitoring_tick().fired == 0
    assert not Alert.objects.exists()
    assert hook.received == [] and mail.outbox == []
