"""The AI SDK route handler of docs/client.md, run as it is on that page, under Node with the AI
SDK, its Anthropic provider and the Node client (``clients/js``, its dev dependencies pinned in
``clients/js/package-lock.json``), against the fake provider (an Anthropic stream) and a real
console: the UI message stream the route returns arrives as an ``ai-sdk.ui`` exchange. Skipped
where Node is missing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import console_client
import pytest

from conversations import formats
from conversations.models import Conversation, Exchange

from .conftest import ROOT, ConsoleServer, all_served
from .js import NODE, PACKAGE, install
from .provider import FakeProvider

pytestmark = pytest.mark.slow

GUIDE = ROOT / "docs" / "client.md"
CHAT_REQUEST = ROOT / "tests" / "fixtures" / "ai_sdk" / "chat-request.json"
BLOCK = re.compile(r"^```js file=(?P<name>[\w.-]+)\n(?P<code>.*?)^```$", re.M | re.S)
WAIT_SECONDS = 60


def guide_blocks() -> dict[str, str]:
    return {m["name"]: m["code"] for m in BLOCK.finditer(GUIDE.read_text())}


def test_the_guide_has_the_route() -> None:
    assert set(guide_blocks()) == {"chat-route.mjs"}


def test_the_route_handler_posts_the_ui_message_exchange(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    install()
    assert NODE is not None
    served = next(s for s in all_served() if "anthropic-clear-thinking" in s.source)
    provider.route("claude-node", served.reply())
    # Inside the package's folder, so the route's imports resolve as in an app that installed it.
    run_dir = PACKAGE / "e2e" / f".run-{tmp_path.name}"
    run_dir.mkdir()
    try:
        for name, code in guide_blocks().items():
            (run_dir / name).write_text(code)
        node = subprocess.run(
            [
                NODE,
                str(PACKAGE / "e2e" / "route.mjs"),
                provider.url,
                "claude-node",
                live_console.url,
                token,
                "cus-node",
                str(CHAT_REQUEST),
                str(tmp_path / "spool"),
            ],
            env={**os.environ, "ROUTE_DIR": run_dir.as_uri()},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    assert node.returncode == 0, node.stderr
    out = json.loads(node.stdout.strip().splitlines()[-1])
    assert out["status"] == 200 and '"type":"finish"' in out["stream"]
    assert out["flushed"], node.stderr

    request_text = CHAT_REQUEST.read_text()
    conversation = json.loads(request_text)["id"]
    deadline = time.monotonic() + WAIT_SECONDS
    while not Exchange.objects.filter(conversation__external_id=conversation).exists():
        assert time.monotonic() < deadline, f"no exchange arrived:\n{node.stderr}"
        time.sleep(0.1)
    row = Conversation.objects.get(external_id=conversation)
    assert (row.customer_external_id, row.queue) == ("cus-node", "web")
    # One exchange: the UI stream; the provider call inside the route passed untouched.
    assert Exchange.objects.filter(conversation=row).count() == 1

    replay = console_client.history(conversation, url=live_console.url, token=token)
    *earlier, answer = replay.raw_messages
    parsed = formats.get("ai-sdk.ui").parse(
        request=request_text, response=None, stream=out["stream"]
    )
    # The browser's messages, byte for byte as it sent them (pretty-printed in the fixture).
    assert len(earlier) == len(json.loads(request_text)["messages"])
    assert earlier == [m.raw.encode() for m in parsed.history]
    assert all(m in request_text.encode() for m in earlier)
    # The assistant UIMessage: what the browser built from the stream the route returned.
    assert answer == parsed.output[0].raw.encode()
    events = [
        json.loads(line[6:])
        for line in served.body.decode().splitlines()
        if line.startswith("data: ")
    ]
    said = "".join(
        e["delta"]["text"] for e in events if e.get("delta", {}).get("type") == "text_delta"
    )
    assert said
    message = json.loads(answer)
    assert message["role"] == "assistant"
    assert "".join(p["text"] for p in message["parts"] if p["type"] == "text") == said
