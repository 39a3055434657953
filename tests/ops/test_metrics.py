"""/metrics: Prometheus' text format, parsed by prometheus-client's own parser; counters that move
with an ingest, a refused chunk and a page view; figures read from the stores; a token of scope
metrics or an allowed address, and nothing that names a customer."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from rest_framework.test import APIClient

from console.ops import beat
from conversations.models import Conversation, ServiceToken
from conversations.services import service_token_create
from retention.models import DeletionRequest
from retention.services import deletion_request_submit
from tests.conftest import database_url, post_json
from tests.factories import ExchangeBodyFactory, UserFactory, roles

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
MARKER_CUSTOMER = "cus-METRICS-MARKER-5d1e"
MARKER_CONVERSATION = "conv-METRICS-MARKER-77ab"


@pytest.fixture
def metrics_token() -> str:
    _, token = service_token_create(name="prometheus", scope=ServiceToken.Scope.METRICS)
    return token


def scrape(token: str) -> dict[str, list[Sample]]:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return parse(response.content.decode())


def parse(text: str) -> dict[str, list[Sample]]:
    families = {}
    for family in text_string_to_metric_families(text):
        families[family.name] = list(family.samples)
    return families


def value(families: dict[str, list[Sample]], sample: str, **labels: str) -> float:
    """The sum of the samples of that name carrying these labels (0 when none: a counter no one
    has moved yet)."""
    return sum(
        s.value
        for samples in families.values()
        for s in samples
        if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items())
    )


def test_refused_without_a_token_or_an_allowed_address(
    client: Client, settings: Any, service_token: str
) -> None:
    settings.METRICS_ALLOWED_IPS = []
    bare = client.get("/metrics")
    assert bare.status_code == 401
    assert bare.json()["error"] == "not_authenticated"
    assert bare["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert b"console_" not in bare.content
    # A chat backend's token does not open it.
    ingest = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {service_token}")
    assert ingest.status_code == 403
    assert ingest.json()["error"] == "permission_denied"
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401
    # An address outside the allowed networks neither.
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.7").status_code == 401


def test_open_to_a_metrics_token_and_to_an_allowed_address(
    client: Client, settings: Any, metrics_token: str
) -> None:
    settings.METRICS_ALLOWED_IPS = []
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}").status_code == 200
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8", "192.0.2.7"]
    assert client.get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.7").status_code == 200
    # Scraped by the process's address, over plain HTTP (no ALLOWED_HOSTS, no HTTPS redirect).
    assert (
        client.get("/metrics", REMOTE_ADDR="192.0.2.7", HTTP_HOST="10.0.0.5:8000").status_code
        == 200
    )
    assert client.post("/metrics", REMOTE_ADDR="192.0.2.7").status_code == 405


def test_counters_move_with_an_ingest_a_refused_chunk_and_a_page_view(
    api: APIClient, metrics_token: str
) -> None:
    roles()
    agent = UserFactory(groups=["support_agent"], queues=["billing"])
    before = scrape(metrics_token)

    body = ExchangeBodyFactory(
        conversation=MARKER_CONVERSATION, customer=MARKER_CUSTOMER, queue="billing"
    )
    assert post_json(api, "/api/v1/exchanges", body).status_code == 201
    assert post_json(api, "/api/v1/exchanges", {**body, "format": "nope"}).status_code == 400
    chunk = {"conversation": MARKER_CONVERSATION, "customer": MARKER_CUSTOMER, "seq": 0}
    refused = post_json(api, "/api/v1/live/chunks", chunk)
    assert refused.status_code == 400
    code = refused.json()["error"]
    page = Client()
    page.force_login(agent)
    pk = Conversation.objects.get(external_id=MARKER_CONVERSATION).pk
    assert page.get(f"/conversations/{pk}/").status_code == 200

    after = scrape(metrics_token)

    def moved(sample: str, **labels: str) -> float:
        return value(after, sample, **labels) - value(before, sample, **labels)

    assert moved("console_exchanges_ingested_total", result="stored") == 1
    assert moved("console_exchanges_refused_total") == 1
    assert moved("console_live_chunks_refused_total", code=code) == 1
    assert moved("console_live_chunks_ingested_total") == 0
    assert (
        moved(
            "console_http_request_duration_seconds_count",
            route="conversation-detail",
            method="GET",
        )
        == 1
    )
    assert moved("console_http_responses_total", route="api-exchange-create", status="201") == 1


def test_a_method_no_one_knows_adds_no_series(client: Client, metrics_token: str) -> None:
    """Any client may send any method token (upper or lower case, 36 characters: uvicorn passes
    them on): each is counted as ``other``, so the scrape keeps its size however many arrive."""
    client.generic("PZZREPRO0", "/healthz")  # the "other" series exist from here on
    scrape(metrics_token)  # and the scrape's own
    before = scrape(metrics_token)
    methods = [f"PZZREPRO{i}" for i in range(1, 101)]
    methods += [f"p{uuid.uuid4()}"[:36] for _ in range(50)]
    methods += ["TRACE", "PROPFIND", "get", "Post"]  # Django upper-cases: GET and POST
    for method in methods:
        assert client.generic(method, "/healthz").status_code == 200
    client.generic("PZZREPRO404", "/no-such-page/")
    after = scrape(metrics_token)

    def series(families: dict[str, list[Sample]]) -> set[tuple[str, tuple[Any, ...]]]:
        return {
            (s.name, tuple(sorted(s.labels.items())))
            for samples in families.values()
            for s in samples
        }

    seen = {s.labels.get("method") for samples in after.values() for s in samples}
    assert seen - {None} <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}
    # The healthz "other" series counted every one; the unknown path's adds its route's only.
    assert (
        value(after, "console_http_responses_total", route="healthz", method="other")
        - value(before, "console_http_responses_total", route="healthz", method="other")
        == len(methods) - 2
    )
    # What is new: the healthz route's GET and POST, and the unknown path's "other": fixed words.
    added = [dict(labels) for _, labels in series(after) - series(before)]
    assert added
    assert {(labels["route"], labels["method"]) for labels in added} == {
        ("healthz", "GET"),
        ("healthz", "POST"),
        ("unmatched", "other"),
    }


def test_the_stores_figures_are_read_at_scrape_time(metrics_token: str) -> None:
    beat.heartbeat_write()
    before = scrape(metrics_token)
    request = deletion_request_submit(
        customer="cus-metrics-deletion", reason="metrics test", actor=None
    )
    DeletionRequest.objects.filter(pk=request.pk).update(
        requested_at=timezone.now() - timedelta(hours=2)
    )
    after = scrape(metrics_token)
    assert value(after, "console_deletion_requests", state="pending") == (
        value(before, "console_deletion_requests", state="pending") + 1
    )
    age = value(after, "console_deletion_request_oldest_age_seconds", state="pending")
    assert 2 * 3600 <= age < 3 * 3600
    assert value(after, "console_deletion_request_oldest_age_seconds", state="running") == 0
    for state in ("sent", "pending", "failed"):
        assert any(
            s.labels == {"channel": "webhook", "state": state}
            for s in after["console_notifications"]
        )
    assert [s.labels for s in after["console_celery_queue_length"]] == [{"queue": "celery"}]
    assert value(after, "console_beat_heartbeat_age_seconds") < 60
    assert "console_audit_sealer_lag_seconds" in after
    assert "console_audit_unsealed_rows" in after
    assert {s.labels["part"]: s.value for s in after["console_scrape_error"]} == {
        "sealer": 0,
        "deletions": 0,
        "notifications": 0,
        "celery": 0,
        "beat": 0,
    }


def test_a_store_that_cannot_be_read_is_named_not_a_failed_scrape(
    metrics_token: str, settings: Any
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.REDIS_URL = settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{port}/0"
    families = scrape(metrics_token)
    errors = {s.labels["part"]: s.value for s in families["console_scrape_error"]}
    assert errors["celery"] == 1 and errors["beat"] == 1
    assert errors["deletions"] == 0
    assert "console_celery_queue_length" not in families


def test_every_family_is_described_and_none_names_a_customer(
    api: APIClient, metrics_token: str
) -> None:
    post_json(
        api,
        "/api/v1/exchanges",
        ExchangeBodyFactory(conversation=MARKER_CONVERSATION, customer=MARKER_CUSTOMER),
    )
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}")
    text = response.content.decode()
    assert "METRICS-MARKER" not in text
    pk = str(Conversation.objects.get(external_id=MARKER_CONVERSATION).pk)
    ours = [f for f in text_string_to_metric_families(text) if f.name.startswith("console_")]
    assert len(ours) >= 15
    for family in ours:
        assert family.documentation, family.name
        for sample in family.samples:
            for label, v in sample.labels.items():
                assert label in {
                    "route",
                    "method",
                    "status",
                    "result",
                    "code",
                    "state",
                    "channel",
                    "queue",
                    "part",
                    "outcome",
                    "le",
                }, (family.name, label)
                assert MARKER_CUSTOMER not in v and v != pk, (family.name, label, v)


# --- several processes ------------------------------------------------------------------------


def _get(port: int, path: str, token: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_counts_are_summed_over_the_web_workers(
    metrics_token: str, tmp_path: Path, settings: Any
) -> None:
    """uvicorn with two workers and PROMETHEUS_MULTIPROC_DIR: every request counted once, whichever
    worker answered it and whichever answers the scrape."""
    directory = tmp_path / "metrics"
    directory.mkdir()
    from bench.pgcluster import free_port

    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url("default"),
        "KEYS_DATABASE_URL": database_url("keys"),
        "REDIS_URL": settings.REDIS_URL,
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
        "DJANGO_SETTINGS_MODULE": "console.settings",
    }
    log = (tmp_path / "uvicorn.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "console.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "2",
            "--no-access-log",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        answered = 0  # every /healthz the server answered
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(port, "/healthz")[0] == 200:
                    answered += 1
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.2)
        # Until both workers have answered one (each writes a file of its own), then 40 more.
        while len(list(directory.glob("counter_*.db"))) < 2:
            assert _get(port, "/healthz")[0] == 200
            answered += 1
            assert time.monotonic() < deadline, "one worker answered everything"
        for _ in range(40):
            assert _get(port, "/healthz")[0] == 200
            answered += 1
        # Each scrape, whichever worker answers it, sums both: no worker alone answered them all.
        for _ in range(6):
            status, body = _get(port, "/metrics", metrics_token)
            assert status == 200, body
            families = parse(body.decode())
            assert value(families, "console_http_responses_total", route="healthz") == answered
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def test_live_viewers_count_the_streams_open(world: Any, settings: Any) -> None:
    from prometheus_client import REGISTRY

    settings.LIVE_KEY_PREFIX = f"test-live-{uuid.uuid4().hex[:12]}"  # the live tests' way

    from tests.live.test_sse import read_sse

    def viewers() -> float:
        return REGISTRY.get_sample_value("console_live_viewers") or 0.0

    before = viewers()
    seen: list[float] = []
    status, *_ = read_sse(
        world.users["admin"],
        world.billing.pk,
        until=lambda events: bool(seen),
        during=lambda: seen.append(viewers()),
    )
    assert status == 200
    assert seen == [before + 1]  # while the stream was open
    assert viewers() == before  # and once it closed
