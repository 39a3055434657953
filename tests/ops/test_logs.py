"""LOG_FORMAT=json: one JSON object per line, each with the request id of the request it was
written in; the request line names the route, never a body or a path with its ids."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import database_url

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db

SCRIPT = r"""
import logging, os
import django
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()
from django.test import Client
client = Client()
client.get("/healthz", HTTP_X_REQUEST_ID="req-json-1")
client.post(
    "/api/v1/exchanges",
    data='{"conversation": "BODY-MARKER-9f2e", "customer": "cus-BODY-MARKER"}',
    content_type="application/json",
    HTTP_X_REQUEST_ID="req-json-2",
)
client.get("/s/SHARE-TOKEN-MARKER-41aa/", HTTP_X_REQUEST_ID="req-json-3")
logging.getLogger("console.test").warning("outside any request", extra={"answer": 42})
"""


def _run(**env: str) -> subprocess.CompletedProcess[str]:
    """The script in a process of its own, on the test databases."""
    databases = {"DATABASE_URL": database_url("default"), "KEYS_DATABASE_URL": database_url("keys")}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", **databases, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_json_logs_are_one_object_per_line_with_the_request_id() -> None:
    done = _run(LOG_FORMAT="json")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is one object
    requests = {r["request_id"]: r for r in records if r["logger"] == "console.request"}
    assert requests["req-json-1"]["route"] == "healthz"
    assert requests["req-json-1"]["status"] == 200
    assert requests["req-json-2"]["route"] == "api-exchange-create"
    assert requests["req-json-2"]["status"] == 401
    assert requests["req-json-3"]["route"] == "share-page"
    for r in requests.values():
        assert {"time", "level", "message", "method", "duration_ms"} <= set(r)
    outside = next(r for r in records if r["logger"] == "console.test")
    assert outside["request_id"] == "" and outside["answer"] == 42
    # No body, no path with its ids or tokens.
    assert "BODY-MARKER" not in done.stderr
    assert "SHARE-TOKEN-MARKER" not in done.stderr


def test_an_unknown_log_format_is_refused_at_start() -> None:
    done = _run(LOG_FORMAT="xml")
    assert done.returncode != 0
    assert "LOG_FORMAT must be plain or json, not 'xml'" in done.stderr
