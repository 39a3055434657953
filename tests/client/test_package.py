"""``pip install ./clients/python`` gives a package of its own: no Django, no dependency at all,
importable from where pip put it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow


def test_pip_installs_the_client_alone(tmp_path: Path) -> None:
    # From a copy: building in place would leave build/ and *.egg-info in the working tree.
    source = tmp_path / "source"
    shutil.copytree(
        ROOT / "clients" / "python",
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    target = tmp_path / "site"
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
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stderr
    probe = (
        "import importlib.metadata as m, json, sys;"
        f"sys.path.insert(0, {str(target)!r});"
        "import console_client;"
        f"dist = next(m.distributions(path=[{str(target)!r}]));"
        "print(json.dumps({'file': console_client.__file__, 'name': dist.metadata['Name'],"
        " 'requires': dist.requires or [], 'django': 'django' in sys.modules}))"
    )
    child = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert child.returncode == 0, child.stderr
    found = json.loads(child.stdout)
    assert found["file"].startswith(str(target))
    assert found["name"] == "console-client"
    assert not found["django"]
    assert found["requires"] == []  # not even an HTTP library: the SDK brings its own
    sources = "".join(p.read_text() for p in (target / "console_client").glob("*.py"))
    assert "django" not in sources.lower()
    assert (target / "console_client" / "py.typed").exists()
