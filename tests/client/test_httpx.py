"""The same exchanges through the last SDK releases built on ``httpx`` (anthropic 0.125, openai
2.54), in a child process: one interpreter cannot import two releases of a package, and the
project's virtualenv holds the current ones (on ``httpx2``).

The old releases are installed once, by pip from the package index, into
``.venv/console-client-legacy-sdks-<hash of legacy-sdks.txt>`` (with ``--no-deps``: the rest comes
from the virtualenv), and put first on the child's ``PYTHONPATH``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import console_client
import pytest

from conversations.formats import get
from conversations.models import Conversation, Exchange
from tests.installs import exclusive

from .calls import Call, sdk_formats
from .conftest import ROOT, ConsoleServer, all_served, expected_replay
from .provider import FakeProvider

pytestmark = pytest.mark.slow

PINS = Path(__file__).with_name("legacy-sdks.txt")


@pytest.fixture(scope="session")
def legacy_sdks() -> Path:
    digest = hashlib.sha256(PINS.read_bytes()).hexdigest()[:12]
    target = ROOT / ".venv" / f"console-client-legacy-sdks-{digest}"
    with exclusive(target.with_name(target.name + ".lock")):
        if not target.exists():
            _install(target)
    return target


def _install(target: Path) -> None:
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    pip = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--target",
            str(partial),
            "-r",
            str(PINS),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert pip.returncode == 0, f"pip could not install {PINS.name}:\n{pip.stdout}\n{pip.stderr}"
    partial.rename(target)


def _pins() -> dict[str, str]:
    """The SDK releases legacy-sdks.txt pins (``name==version``), but for their dependencies."""
    pins = {}
    for line in PINS.read_text().splitlines():
        name, _, version = line.partition("==")
        if version and not line.startswith("#"):
            pins[name.strip()] = version.strip()
    return pins


def _legacy_formats() -> list[str]:
    """The formats whose kit's SDK has a last release on httpx pinned in legacy-sdks.txt."""
    return [f for f in sdk_formats() if get(f).kit.sdk.package in _pins()]  # type: ignore[union-attr]


def test_sdks_on_httpx(
    legacy_sdks: Path,
    provider: FakeProvider,
    live_console: ConsoleServer,
    token: str,
    tmp_path: Path,
) -> None:
    chosen = []
    for fmt in _legacy_formats():
        of_format = [s for s in all_served() if s.format == fmt]
        chosen += [
            next(s for s in of_format if s.streamed),
            next(s for s in of_format if not s.streamed),
        ]
    calls = []
    for i, s in enumerate(chosen):
        provider.route(s.model, s.reply())
        calls.append(
            Call(
                f"conv-httpx-{i}",
                "cus-httpx",
                s.format,
                s.model,
                s.streamed,
                {"queue": "legacy"},
                i % 2 == 1,
            )
        )
    plan = {
        "provider_url": provider.url,
        "url": live_console.url,
        "token": token,
        "options": {"spool_dir": str(tmp_path), "backoff": 0.05, "backoff_max": 0.2},
        "calls": [c.__dict__ for c in calls],
    }
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(legacy_sdks), str(ROOT)])}
    child = subprocess.run(
        [sys.executable, "-m", "tests.client.calls"],
        input=json.dumps(plan),
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["versions"] == _pins() == {"anthropic": "0.125.0", "openai": "2.54.0"}
    assert (report["library"], report["transport"]) == ("httpx", "CaptureTransport")
    assert report["delivered"] and all(report["answers"])
    assert report["counters"]["sent"] == len(calls) == Exchange.objects.count()
    for call, s in zip(calls, chosen, strict=True):
        (received,) = provider.requests_for(s.model)
        replay = console_client.history(call.conversation, url=live_console.url, token=token)
        assert replay.raw == expected_replay(s.format, received.body, s), s.source
        assert Conversation.objects.get(external_id=call.conversation).queue == "legacy"
