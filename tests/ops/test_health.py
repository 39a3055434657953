"""/healthz and /readyz: unauthenticated, cheap, no data; 503 naming the part that fails."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from audit.models import AuditEvent
from audit.sealer import seal_pending
from console.ops import beat
from conversations.keystore.routers import KEYS_DB
from conversations.models import ServiceToken
from conversations.services import service_token_create


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(client: Client, **extra: Any) -> tuple[int, dict[str, Any]]:
    response = client.get("/readyz", **extra)
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    return response.status_code, json.loads(response.content)


ALL_CHECKS = ["database", "keys", "redis", "beat", "sealer"]


@pytest.fixture
def beating() -> None:
    beat.heartbeat_write()


@pytest.fixture
def every_check(settings: Any) -> None:
    """The operator's opt-in: the beat and the sealer gate readiness too."""
    settings.READY_CHECKS = ALL_CHECKS


def test_healthz_answers_without_asking_anything(
    client: Client, django_assert_num_queries: Any
) -> None:
    # Addressed as a probe does: by the process's own address, over plain HTTP.
    with django_assert_num_queries(0):
        response = client.get("/healthz", HTTP_HOST="10.1.2.3:8000")
    assert response.status_code == 200
    assert json.loads(response.content) == {"status": "ok"}
    assert response["X-Request-ID"]


def test_healthz_stays_up_when_every_dependency_is_down(client: Client, settings: Any) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    assert client.get("/healthz").status_code == 200


def test_readyz_is_200_when_every_part_is_up(
    client: Client, beating: None, django_assert_num_queries: Any, settings: Any
) -> None:
    # By default: what this process needs to serve, SELECT 1 on each database and a PING.
    with django_assert_num_queries(1), CaptureQueriesContext(connections[KEYS_DB]) as keys:
        status, body = _ready(client, HTTP_HOST="10.1.2.3")
    assert len(keys) == 1
    assert status == 200, body
    assert body == {"status": "ready", "checks": {"database": "ok", "keys": "ok", "redis": "ok"}}
    # Opted in: the last digest and the oldest unsealed row for the sealer, too.
    settings.READY_CHECKS = ALL_CHECKS
    with django_assert_num_queries(3):
        status, body = _ready(client)
    assert status == 200, body
    assert body == {
        "status": "ready",
        "checks": {"database": "ok", "keys": "ok", "redis": "ok", "beat": "ok", "sealer": "ok"},
    }


@pytest.mark.django_db(transaction=True)
def test_a_stopped_beat_and_sealer_leave_this_process_ready_by_default(
    client: Client, settings: Any
) -> None:
    """The beat stopped an hour ago and an audit row has waited an hour for its seal: the web
    process can still serve, so by default it stays in the load balancer; the clock's health is
    in the metrics (and their alerts); an operator who opted in sees 503."""
    beat.heartbeat_write(at=time.time() - 3600)
    seal_pending()
    AuditEvent.objects.create(
        code="audit.viewed", actor_label="system", at=timezone.now() - timedelta(hours=1)
    )
    status, body = _ready(client)
    assert status == 200, body
    assert set(body["checks"]) == {"database", "keys", "redis"}
    _, token = service_token_create(name="prometheus", scope=ServiceToken.Scope.METRICS)
    scrape = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    figures = {
        sample.name: sample.value
        for family in text_string_to_metric_families(scrape.content.decode())
        for sample in family.samples
    }
    assert figures["console_beat_heartbeat_age_seconds"] > 3000
    assert figures["console_audit_sealer_lag_seconds"] > 3000
    settings.READY_CHECKS = ALL_CHECKS
    status, body = _ready(client)
    assert status == 503
    assert body["failing"] == ["beat", "sealer"]
    seal_pending()


def test_readyz_names_redis_when_it_is_unreachable(
    client: Client, beating: None, settings: Any, every_check: None
) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    status, body = _ready(client)
    assert status == 503
    assert body["status"] == "unavailable"
    assert body["failing"] == ["redis"]
    assert body["checks"]["redis"] == "unreachable"
    assert body["checks"]["beat"] == "unknown"  # its heartbeat is in Redis: not failed twice
    assert body["checks"]["database"] == "ok"


@pytest.mark.slow
def test_readyz_follows_a_redis_server_that_stops(
    client: Client, settings: Any, tmp_path: Path
) -> None:
    """A Redis server of the test's own, up then stopped: the cached connection of the check
    finds it gone (the shared Redis is never touched)."""
    port = _closed_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    try:
        settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
        for _ in range(100):
            try:
                beat.heartbeat_write()
                break
            except Exception:
                time.sleep(0.05)
        status, body = _ready(client)
        assert status == 200, body
        server.terminate()
        server.wait(timeout=10)
        status, body = _ready(client)
        assert status == 503
        assert body["failing"] == ["redis"]
    finally:
        if server.poll() is None:
            server.kill()


def test_readyz_names_the_beat_when_its_heartbeat_is_old(
    client: Client, settings: Any, every_check: None
) -> None:
    beat.heartbeat_write(at=time.time() - 3600)
    status, body = _ready(client)
    assert status == 503
    assert body["failing"] == ["beat"]
    assert body["checks"]["beat"].startswith("last heartbeat")
    # Without the opt-in (the default), the beat is left out.
    settings.READY_CHECKS = ["database", "keys", "redis"]
    status, body = _ready(client)
    assert status == 200
    assert set(body["checks"]) == {"database", "keys", "redis"}


@pytest.mark.django_db(transaction=True)
def test_readyz_names_the_sealer_when_it_is_behind(
    client: Client, beating: None, every_check: None
) -> None:
    seal_pending()
    # A committed row an hour old that no sealer has chained (the sealer stopped).
    AuditEvent.objects.create(
        code="audit.viewed", actor_label="system", at=timezone.now() - timedelta(hours=1)
    )
    status, body = _ready(client)
    assert status == 503
    assert body["failing"] == ["sealer"]
    assert body["checks"]["sealer"].startswith("behind")
    seal_pending()
    status, body = _ready(client)
    assert status == 200, body


def test_readyz_holds_no_data(client: Client, beating: None, settings: Any) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    _, body = _ready(client)
    text = json.dumps(body)
    assert "127.0.0.1" not in text and str(settings.REDIS_URL) not in text
    assert set(body) == {"status", "failing", "checks"}


def test_the_request_id_comes_back(client: Client) -> None:
    given = client.get("/healthz", HTTP_X_REQUEST_ID="lb-7f3a.42")
    assert given["X-Request-ID"] == "lb-7f3a.42"
    # Not an id: a fresh one instead.
    odd = client.get("/healthz", HTTP_X_REQUEST_ID="two words\nand a line")
    assert odd["X-Request-ID"] != "two words\nand a line"
    assert len(odd["X-Request-ID"]) == 32


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_beat_writes_the_heartbeat_readyz_reads(
    clock: Any, settings: Any, every_check: None
) -> None:
    """``celery -A console beat`` as the project runs it (its scheduler is the settings'
    HeartbeatScheduler): no heartbeat before it starts, one once it ticks, /readyz then ready."""
    from tests.retention.clock import private_redis_url, wait_for

    settings.REDIS_URL = private_redis_url()  # the beat's Redis database (the clock fixture's)
    client = Client()
    status, body = _ready(client)
    assert status == 503 and body["checks"]["beat"] == "no heartbeat"
    clock.beat()
    wait_for("the beat's heartbeat", lambda: beat.heartbeat_age() is not None, clock)
    seal_pending()
    status, body = _ready(client)
    assert status == 200, body
