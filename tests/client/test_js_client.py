"""The Node client (``clients/js``): the real AI SDK (``streamText`` with ``@ai-sdk/anthropic`` and
``@ai-sdk/openai``) and the official JS SDKs (``@anthropic-ai/sdk``, ``openai``) through
``consoleFetch``, against the fake provider serving the recorded fixtures and a real console
under gunicorn: the replay holds the provider's exact bytes, the live view's events carry the
answer, and with the console stopped the calls still succeed and the spool drains once it is
back. Also: the package's own ``node --test`` suite, its capture table against the Python
client's, and ``npm install ./clients/js`` in a fresh folder."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conversations.live import state
from conversations.models import Conversation, Exchange

from .conftest import ConsoleServer, Served, all_served, expected_replay, free_port
from .js import NODE, NPM, PACKAGE, drive, install, need_node
from .provider import FakeProvider

SERVED = all_served()
# The official SDKs read every recording; the AI SDK's providers these ones (each a format its
# provider speaks, streamed, as streamText asks for).
AI_SDK = {
    "ai-anthropic": "anthropic-clear-thinking",
    "ai-openai": "openai-web-search-tool.1.chunks",
    "ai-openai-chat": "deepseek-reasoning.chunks",
}
OFFICIAL = {
    "anthropic.messages": "anthropic",
    "openai.responses": "openai-responses",
    "openai.chat": "openai-chat",
}


def pick(name: str) -> Served:
    return next(s for s in SERVED if name in s.source)


def check_replay(
    conversation: str, fmt: str, served: Served, provider: FakeProvider, replay: bytes
) -> None:
    (received,) = provider.requests_for(served.model)
    assert replay == expected_replay(fmt, received.body, served), conversation
    row = Conversation.objects.get(external_id=conversation)
    assert Exchange.objects.filter(conversation=row).count() == 1


def test_the_capture_table_is_the_python_clients() -> None:
    from console_client._capture_table import BINARY, ENDPOINT, PATHS

    table = json.loads((PACKAGE / "src" / "capture-table.json").read_text())
    assert [(row["suffix"], row["format"]) for row in table["paths"]] == list(PATHS)
    assert (table["endpoint"], table["binary"]) == (list(ENDPOINT), list(BINARY))


@pytest.mark.slow
def test_the_packages_own_tests_pass() -> None:
    """``node --test`` in clients/js (the tee, delivery, spool, live, history, the SDKs against
    a fake console, the types): run here so ``make test`` runs them."""
    install()
    assert NODE is not None
    run = subprocess.run([NODE, "--test"], cwd=PACKAGE, capture_output=True, text=True, timeout=900)
    summary = [line for line in run.stdout.splitlines() if line.startswith("# ")]
    assert run.returncode == 0, f"{run.stdout[-8000:]}\n{run.stderr[-4000:]}"
    assert "# fail 0" in summary and any(
        line.startswith("# pass ") and int(line.split()[-1]) > 20 for line in summary
    ), summary


@pytest.mark.slow
def test_every_sdk_arrives_byte_for_byte(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    install()
    calls: list[dict[str, Any]] = []
    expected: dict[str, tuple[str, Served]] = {}
    for sdk, name in AI_SDK.items():
        served = pick(name)
        model = f"{sdk}-{served.model}"
        provider.route(model, served.reply(chunk=61))
        conversation = f"js-{model}"[:200]
        calls.append(
            {"sdk": sdk, "conversation": conversation, "customer": "cus-js", "model": model}
        )
        expected[conversation] = (served.format, Served(model, served.format, served.body, True))
    for served in SERVED:
        if served.format not in OFFICIAL:
            continue  # no official JS SDK of that format among the harness's packages (Gemini)
        conversation = f"js-official-{served.model}"
        provider.route(served.model, served.reply())
        calls.append(
            {
                "sdk": OFFICIAL[served.format],
                "conversation": conversation,
                "customer": "cus-js",
                "model": served.model,
                "stream": served.streamed,
                "labels": {"queue": "node"},
            }
        )
        expected[conversation] = (served.format, served)
    out = drive(
        {
            "provider": provider.url,
            "console": live_console.url,
            "token": token,
            "spoolDir": str(tmp_path / "spool"),
            "calls": calls,
            "history": list(expected),
        }
    )
    errors = [a["error"] for a in out["answers"] if "error" in a]
    assert not errors, "\n".join(errors)
    assert out["flushed"], out["stderr"]
    counts = out["counters"]
    assert (counts["captured"], counts["sent"], counts["dropped"], counts["rejected"]) == (
        len(calls),
        len(calls),
        0,
        0,
    ), counts
    for conversation, (fmt, served) in expected.items():
        replay = base64.b64decode(out["history"][conversation])
        check_replay(conversation, fmt, served, provider, replay)
    assert set(
        Conversation.objects.filter(external_id__startswith="js-official-").values_list(
            "queue", flat=True
        )
    ) == {"node"}


@pytest.mark.slow
def test_a_live_stream_reaches_the_live_view(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    """The second call of a conversation is watched live (the first makes the conversation):
    its chunks reach the console while it streams, and the live view's events carry the
    answer's visible text, never its thinking."""
    install()
    served = pick("anthropic-clear-thinking")
    calls = []
    for sdk, model in (("ai-anthropic", "live-ai"), ("anthropic", "live-official")):
        provider.route(model, served.reply(chunk=61, chunk_delay=0.005))
        for n in range(2):
            calls.append(
                {
                    "sdk": sdk,
                    "conversation": f"js-{model}",
                    "customer": "cus-live",
                    "model": model,
                    "stream": True,
                    # The second waits for the first exchange to be stored: until then the
                    # console keeps no live chunk of a conversation it does not know (a race
                    # the first exchange's post could lose, as it once did in CI).
                    "settle": n == 1,
                }
            )
    out = drive(
        {
            "provider": provider.url,
            "console": live_console.url,
            "token": token,
            "spoolDir": str(tmp_path / "spool"),
            "live": True,
            "calls": calls,
        }
    )
    assert not [a for a in out["answers"] if "error" in a], out["answers"]
    counts = out["counters"]
    assert (counts["sent"], counts["live_dropped"]) == (4, 0), counts
    assert counts["live_sent"] >= 4  # at least one chunk per call (more when the console is quick)
    events = [
        json.loads(line[6:])
        for line in served.body.decode().splitlines()
        if line.startswith("data: ")
    ]
    said = "".join(
        e["delta"]["text"] for e in events if e.get("delta", {}).get("type") == "text_delta"
    )
    thought = "".join(
        e["delta"]["thinking"] for e in events if e.get("delta", {}).get("type") == "thinking_delta"
    )
    for model in ("live-ai", "live-official"):
        row = Conversation.objects.get(external_id=f"js-{model}")
        first, second = Exchange.objects.filter(conversation=row).order_by("ordinal")
        assert first.live_first_text_ms is None
        assert second.live_first_text_ms is not None and second.live_thinking_ms is not None
        # The log the live view serves (a Redis kept across runs may hold an older one's too).
        kept = state.events_after(row.pk, 0)
        published = [e for e in kept if e.get("exchange") == kept[-1].get("exchange")]
        text = "".join(e.get("text", "") for e in published if e.get("type") == "text")
        assert text == said, published
        assert any(e.get("type") == "thinking" for e in published)
        assert thought[:40] not in json.dumps(published)


@pytest.mark.slow
def test_with_the_console_stopped_calls_succeed_and_the_spool_drains_after_a_restart(
    provider: FakeProvider, console_factory: Any, token: str, tmp_path: Path
) -> None:
    install()
    console = console_factory(port=free_port())  # not started: nothing listens on its port
    spool = tmp_path / "spool"
    chosen = [
        pick("anthropic-clear-thinking"),
        pick("deepseek-reasoning.json"),
        pick("openai-reasoning-encrypted-content.1.json"),
    ]
    calls = []
    for served in chosen:
        provider.route(served.model, served.reply())
        calls.append(
            {
                "sdk": OFFICIAL[served.format],
                "conversation": f"js-down-{served.model}",
                "customer": "cus-down",
                "model": served.model,
                "stream": served.streamed,
            }
        )
    calls.append(
        {
            "sdk": "ai-anthropic",
            "conversation": "js-down-ai",
            "customer": "cus-down",
            "model": chosen[0].model,
        }
    )
    plan = {
        "provider": provider.url,
        "console": console.url,
        "token": token,
        "spoolDir": str(spool),
        "calls": calls,
        "flush": 1,
    }
    down = drive(plan)
    assert all(a.get("answer") for a in down["answers"]), down["answers"]
    assert not down["flushed"]
    assert down["counters"]["spooled"] == len(calls), down["counters"]
    assert down["counters"]["dropped"] == 0
    assert len(list(spool.rglob("*.exchange"))) == len(calls)
    assert not Exchange.objects.exists()

    console.start()
    # A later process of the backend, on the same spool, with nothing new to send.
    up = drive({**plan, "calls": [], "flush": 60})
    assert up["flushed"], up["stderr"]
    assert up["counters"]["sent"] == len(calls), up["counters"]
    assert not list(spool.rglob("*.exchange"))
    for call, served in zip(calls, [*chosen, chosen[0]], strict=True):
        replay = drive({**plan, "calls": [], "history": [call["conversation"]]})["history"]
        # Two calls share the recording of the AI SDK's: the replay is one of theirs.
        received = provider.requests_for(served.model)
        assert base64.b64decode(replay[call["conversation"]]) in {
            expected_replay(served.format, r.body, served) for r in received
        }


@pytest.mark.slow
def test_npm_installs_the_package_from_the_repository(tmp_path: Path) -> None:
    """``npm install ./clients/js`` in a fresh folder: no dependency comes with it, the module
    and its types resolve, and the published files are the sources, not the tests."""
    need_node()
    assert NPM is not None and NODE is not None
    app = tmp_path / "backend"
    app.mkdir()
    (app / "package.json").write_text('{"name": "backend", "private": true, "type": "module"}')
    npm = subprocess.run(
        [NPM, "install", "--no-audit", "--no-fund", str(PACKAGE)],
        cwd=app,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert npm.returncode == 0, npm.stderr
    installed = json.loads((app / "package.json").read_text())["dependencies"]
    assert list(installed) == ["@support-console/client"]
    lock = json.loads((app / "package-lock.json").read_text())
    packages = [p for p in lock["packages"] if p.startswith("node_modules/")]
    assert packages == ["node_modules/@support-console/client"], packages
    probe = (
        "import * as c from '@support-console/client';"
        "const r = import.meta.resolve('@support-console/client');"
        "console.log(JSON.stringify({exports: Object.keys(c).sort(), resolved: r}));"
    )
    node = subprocess.run(
        [NODE, "--input-type=module", "-e", probe],
        cwd=app,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert node.returncode == 0, node.stderr
    found = json.loads(node.stdout)
    assert {
        "consoleFetch",
        "withConversation",
        "captureUIMessageStream",
        "history",
        "flush",
        "counters",
        "shutdown",
    } <= set(found["exports"])
    pack = subprocess.run(
        [NPM, "pack", "--dry-run", "--json"],
        cwd=PACKAGE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pack.returncode == 0, pack.stderr
    files = {f["path"] for f in json.loads(pack.stdout)[0]["files"]}
    assert {"src/index.js", "src/index.d.ts", "src/capture-table.json", "package.json"} <= files
    assert not [f for f in files if f.startswith(("tests/", "e2e/", "node_modules/"))], files
