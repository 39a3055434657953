"""The replica router's settings and fallbacks, without a replica: a process configured with
``DATABASE_REPLICA_URLS`` naming a server that does not answer, or one that is no replica (the
primary itself), reads every page on the primary; so does one whose fence Redis cannot give.
(tests/ops/test_replica.py runs the router against a real streaming replica.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conversations.replicas import ReplicaRouter, replica_fence_raise, replica_reads
from tests.conftest import database_url

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db

SCRIPT = r"""
import json, django, django.db
django.setup()
from django.conf import settings
from django.db import connections
from conversations.models import Conversation, DataKey
from conversations.replicas import ReplicaRouter, replica_reads
from audit.models import AuditEvent

router = ReplicaRouter()
out = {
    "replicas": settings.DATABASE_REPLICAS,
    "mirror": settings.DATABASES["replica_0"]["TEST"],
    "timeout": settings.DATABASES["replica_0"]["OPTIONS"].get("connect_timeout"),
    "migrate": router.allow_migrate("replica_0", "conversations", "conversation"),
    "outside": router.db_for_read(Conversation),
}
with replica_reads() as scope:
    out["key"] = django.db.router.db_for_read(DataKey)
    out["audit"] = django.db.router.db_for_read(AuditEvent)
    Conversation.objects.count()
    out["alias"], out["outcome"] = scope.alias, scope.outcome
with replica_reads(enabled=False) as scope:
    Conversation.objects.count()
    out["disabled"] = scope.decided
print(json.dumps(out))
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(replica_url: str, **env: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "DATABASE_URL": database_url("default"),
            "KEYS_DATABASE_URL": database_url("keys"),
            "DATABASE_REPLICA_URLS": replica_url,
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_replica_that_does_not_answer_leaves_the_page_on_the_primary() -> None:
    out = _run(f"postgres://postgres@127.0.0.1:{_closed_port()}/console")
    assert out["replicas"] == ["replica_0"]
    assert out["mirror"]["MIRROR"] == "default"  # tests read the default test database
    assert out["timeout"] == 2
    assert out["migrate"] is False  # never migrated: it follows the primary
    assert out["outside"] is None  # outside a reading page: the primary, as without replicas
    assert out["key"] == "keys"  # data keys: on the primary's keys database, in the scope too
    assert out["audit"] == "default"
    assert (out["alias"], out["outcome"]) == ("default", "unavailable")
    assert out["disabled"] is False  # a scope left off decides nothing


def test_a_server_that_is_no_replica_is_not_read_as_one() -> None:
    out = _run(database_url("default"))  # the primary itself
    assert (out["alias"], out["outcome"]) == ("default", "unavailable")


def test_without_the_fence_no_replica_is_used() -> None:
    out = _run(database_url("default"), REDIS_URL=f"redis://127.0.0.1:{_closed_port()}/0")
    assert (out["alias"], out["outcome"]) == ("default", "unavailable")


def test_without_replicas_the_router_changes_nothing_but_the_fence_is_raised(
    django_assert_num_queries: Any,
) -> None:
    """A process that reads no replica (a worker configured without DATABASE_REPLICA_URLS) still
    raises the fence: the web processes that read replicas compare with it."""
    from django.conf import settings

    from conversations.replicas import _fence_key, _redis

    fences = _redis(settings.REDIS_URL)
    fences.delete(_fence_key())
    router = ReplicaRouter()
    with django_assert_num_queries(1):  # the primary's WAL position
        replica_fence_raise()
    raised = fences.get(_fence_key())
    assert raised is not None and int(raised, 16) > 0
    with replica_reads() as scope:
        from conversations.models import Conversation

        assert router.db_for_read(Conversation) == "default"
        assert scope.outcome == "none"
