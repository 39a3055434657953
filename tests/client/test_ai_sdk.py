"""The AI SDK route handler of docs/client.md, run as it is on that page, under Node with the
AI SDK and its Anthropic provider (versions pinned in ``node/package-lock.json``, installed once
with ``npm ci`` into ``.venv/console-client-ai-sdk-<hash>``), against the fake provider (an
Anthropic stream) and a real console. Skipped where Node is missing."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import console_client
import pytest

from conversations import formats
from conversations.models import Conversation, Exchange
from tests.installs import exclusive

from .conftest import ROOT, ConsoleServer, all_served
from .provider import FakeProvider

NODE = shutil.which("node")
NPM = shutil.which("npm")
if NODE is None or NPM is None:
    pytest.skip("the AI SDK snippet test needs Node (18 or later) and npm", allow_module_level=True)

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent / "node"
GUIDE = ROOT / "docs" / "client.md"
CHAT_REQUEST = ROOT / "tests" / "fixtures" / "ai_sdk" / "chat-request.json"
BLOCK = re.compile(r"^```js file=(?P<name>[\w.-]+)\n(?P<code>.*?)^```$", re.M | re.S)
WAIT_SECONDS = 60


def guide_blocks() -> dict[str, str]:
    return {m["name"]: m["code"] for m in BLOCK.finditer(GUIDE.read_text())}


@pytest.fixture(scope="session")
def ai_sdk() -> Path:
    lock = (HERE / "package-lock.json").read_bytes()
    target = ROOT / ".venv" / f"console-client-ai-sdk-{hashlib.sha256(lock).hexdigest()[:12]}"
    with exclusive(target.with_name(target.name + ".lock")):
        if not (target / ".installed").exists():
            _install(target)
    return target


def _install(target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(HERE / name, target / name)
    npm = subprocess.run(
        [NPM, "ci", "--no-audit", "--no-fund", "--silent"],
        cwd=target,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if npm.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        pytest.fail(f"npm ci failed:\n{npm.stdout}\n{npm.stderr}")
    (target / ".installed").write_text("ok")


def test_the_guide_has_both_modules() -> None:
    assert set(guide_blocks()) == {"console-exchange.mjs", "chat-route.mjs"}


def test_the_route_handler_posts_the_ui_message_exchange(
    ai_sdk: Path, provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    served = next(s for s in all_served() if "anthropic-clear-thinking" in s.source)
    provider.route("claude-node", served.reply())
    run_dir = ai_sdk / f"run-{tmp_path.name}"  # under node_modules' folder: imports resolve
    run_dir.mkdir()
    try:
        for name, code in guide_blocks().items():
            (run_dir / name).write_text(code)
        shutil.copy(HERE / "harness.mjs", run_dir / "harness.mjs")
        node = subprocess.run(
            [
                NODE,
                "harness.mjs",
                provider.url,
                "claude-node",
                live_console.url,
                token,
                "cus-node",
                str(CHAT_REQUEST),
            ],
            cwd=run_dir,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    assert node.returncode == 0, node.stderr
    out = json.loads(node.stdout.strip().splitlines()[-1])
    assert out["status"] == 200 and '"type":"finish"' in out["stream"]

    request_text = CHAT_REQUEST.read_text()
    conversation = json.loads(request_text)["id"]
    deadline = time.monotonic() + WAIT_SECONDS
    while not Exchange.objects.filter(conversation__external_id=conversation).exists():
        assert time.monotonic() < deadline, f"no exchange arrived:\n{node.stderr}"
        time.sleep(0.1)
    row = Conversation.objects.get(external_id=conversation)
    assert (row.customer_external_id, row.queue) == ("cus-node", "web")

    replay = console_client.history(conversation, url=live_console.url, token=token)
    *earlier, answer = replay.raw_messages
    parsed = formats.get("ai-sdk.ui").parse(
        request=request_text, response=answer.decode(), stream=None
    )
    # The browser's messages, byte for byte as it sent them (pretty-printed in the fixture).
    assert len(earlier) == len(json.loads(request_text)["messages"])
    assert earlier == [m.raw.encode() for m in parsed.history]
    assert all(m in request_text.encode() for m in earlier)
    # The assistant UIMessage carries what the provider streamed.
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
