"""probe_allowance against a fake provider on loopback (never the real one)."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.management import call_command

from conversations.models import AllowanceProbe
from conversations.monitoring.readiness import reasoning_readiness

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
SNAPSHOT = "claude-sonnet-4-5-20250929"


class FakeAnthropic:
    """Refuses a max_tokens at or below the thinking budget (as Anthropic does); otherwise spends
    the budget on thinking and cuts the answer off at max_tokens."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((dict(self.headers.items()), body))
                budget = body["thinking"]["budget_tokens"]
                if self.path != "/v1/messages" or self.headers.get("x-api-key") != "test-key":
                    self._send(
                        401,
                        {
                            "type": "error",
                            "error": {
                                "type": "authentication_error",
                                "message": "invalid x-api-key",
                            },
                        },
                    )
                elif body["max_tokens"] <= budget:
                    self._send(
                        400,
                        {
                            "type": "error",
                            "error": {
                                "type": "invalid_request_error",
                                "message": "`max_tokens` must be greater than "
                                "`thinking.budget_tokens`",
                            },
                        },
                    )
                else:
                    self._send(
                        200,
                        {
                            "id": "msg_probe",
                            "type": "message",
                            "role": "assistant",
                            "model": SNAPSHOT,
                            "content": [
                                {
                                    "type": "thinking",
                                    "thinking": "MARKER-PROBE-THINKING",
                                    "signature": "sig",
                                },
                                {"type": "text", "text": "The"},
                            ],
                            "stop_reason": "max_tokens",
                            "usage": {"input_tokens": 20, "output_tokens": body["max_tokens"]},
                        },
                    )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def provider(settings: Any) -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic()
    settings.ANTHROPIC_BASE_URL = fake.url
    settings.ANTHROPIC_API_KEY = "test-key"
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def test_both_mis_sized_requests_are_sent_and_recorded(provider: FakeAnthropic) -> None:
    out = io.StringIO()
    call_command(
        "probe_allowance",
        "--format",
        "anthropic.messages",
        "--model",
        "claude-sonnet-4-5",
        stdout=out,
    )
    assert [b["max_tokens"] for _, b in provider.requests] == [1024, 1025]
    assert all(h["x-api-key"] == "test-key" for h, _ in provider.requests)
    at_budget, no_room = AllowanceProbe.objects.order_by("id")
    assert (at_budget.kind, at_budget.outcome, at_budget.http_status) == (
        "at_budget",
        "refused",
        400,
    )
    assert "greater than" in at_budget.error
    assert (no_room.kind, no_room.outcome, no_room.http_status) == ("no_room", "truncated", 200)
    assert no_room.snapshot == SNAPSHOT and no_room.stop_reason == "max_tokens"
    assert no_room.output_tokens == 1025
    printed = out.getvalue()
    assert "at_budget: refused (HTTP 400)" in printed and "no_room: truncated" in printed
    assert "MARKER-PROBE-THINKING" not in printed
    assert not AllowanceProbe.objects.filter(error__contains="MARKER").exists()
    # The readiness report shows what the provider did.
    kinds = {p["kind"]: p["outcome"] for p in reasoning_readiness(model=SNAPSHOT).probes}
    assert kinds == {"at_budget": "refused", "no_room": "truncated"}
