"""The Node client (``clients/js``) for the tests: its dev dependencies (the AI SDK, the official
SDKs, TypeScript), installed once with ``npm ci`` from the committed ``package-lock.json`` into
``clients/js/node_modules`` (git-ignored; one installer at a time across pytest workers), and a
runner for ``clients/js/e2e/drive.mjs``."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.installs import exclusive

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "js"
NODE = shutil.which("node")
NPM = shutil.which("npm")


def need_node() -> None:
    if NODE is None or NPM is None:
        pytest.skip("the Node client's tests need Node (20 or later) and npm")


def install() -> Path:
    """``clients/js`` with its dev dependencies installed as the lock file pins them."""
    need_node()
    assert NPM is not None
    lock = (PACKAGE / "package-lock.json").read_bytes()
    marker = PACKAGE / "node_modules" / f".installed-{hashlib.sha256(lock).hexdigest()[:12]}"
    with exclusive(PACKAGE / ".install.lock"):
        if not marker.exists():
            npm = subprocess.run(
                [NPM, "ci", "--no-audit", "--no-fund", "--silent"],
                cwd=PACKAGE,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if npm.returncode != 0:
                pytest.fail(f"npm ci failed in clients/js:\n{npm.stdout}\n{npm.stderr}")
            marker.write_text("ok")
    return PACKAGE


def drive(plan: dict[str, Any], *, timeout: float = 300) -> dict[str, Any]:
    """Runs the plan through ``e2e/drive.mjs`` in a Node process of its own; its result."""
    assert NODE is not None
    node = subprocess.run(
        [NODE, str(PACKAGE / "e2e" / "drive.mjs")],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=PACKAGE,
    )
    assert node.returncode == 0, f"drive.mjs failed:\n{node.stdout}\n{node.stderr}"
    result: dict[str, Any] = json.loads(node.stdout.strip().splitlines()[-1])
    result["stderr"] = node.stderr
    return result
