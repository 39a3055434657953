"""Database faults against servers of the test's own: run by tests/ops/test_database_faults.py in a
pytest process of its own whose main database is a primary the test made
(bench/pgcluster.py), whose ``DATABASE_REPLICA_URLS`` names that primary's streaming replica, and
which may stop and start both (``FAULTS_PRIMARY``, ``FAULTS_REPLICA``: data directory, port and
log of each). The machine's shared server is never touched. Not collected by the suite itself
(its name does not start with ``test_``).

- a replica that stops answering: the page whose read failed is read again on the primary (200,
  not 500), the replica is set aside and not asked again through its pool, and serves pages again
  once it is back;
- an erasure made by a process configured without replicas (a worker without
  ``DATABASE_REPLICA_URLS``), replay paused and the lag bound lifted: the web's pages, exports and
  searches still show nothing erased (the fence does not depend on the erasing process);
- a primary stopped then started: ``POST /api/v1/exchanges`` and live chunks answer 503 with
  ``Retry-After`` meanwhile (never 500), and store once it is back.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import close_old_connections, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from prometheus_client import REGISTRY
from rest_framework.test import APIClient

from bench import pgcluster
from conversations import replicas as replica_router
from conversations.models import Conversation
from retention.services import conversation_erase
from tests.conftest import post_json
from tests.factories import ConversationFactory, ExchangeBodyFactory, UserFactory, roles
from tests.ops.replication import (
    caught_up,
    fresh_replica,
    pause_replay,
    resume_replay,
    server,
)

if not getattr(settings, "DATABASE_REPLICAS", None) or not os.environ.get("FAULTS_PRIMARY"):
    pytest.skip("run by tests/ops/test_database_faults.py", allow_module_level=True)

pytestmark = pytest.mark.django_db(transaction=True, databases="__all__")
REPLICA = settings.DATABASE_REPLICAS[0]


def _cluster(name: str, spec: str) -> pgcluster.Cluster:
    data, port, log = spec.split(os.pathsep)
    return pgcluster.Cluster(name, Path(data), int(port), Path(log))


PRIMARY_SERVER = _cluster("primary", os.environ["FAULTS_PRIMARY"])
REPLICA_SERVER = _cluster("replica", os.environ["FAULTS_REPLICA"])


def pages(outcome: str) -> float:
    return REGISTRY.get_sample_value("console_replica_pages_total", {"outcome": outcome}) or 0.0


@contextmanager
def replica_queries() -> Iterator[CaptureQueriesContext]:
    with ExitStack() as stack:
        yield stack.enter_context(CaptureQueriesContext(connections[REPLICA]))


def _page_urls(pk: int) -> list[str]:
    return ["/", f"/conversations/{pk}/", f"/conversations/{pk}/export.md", "/?q=cus-faults"]


@pytest.fixture
def browser() -> Client:
    """A browser: a 500 is an answer it sees, not an exception re-raised by the test client."""
    roles()
    agent = UserFactory(groups=["support_agent"], queues=["billing"])
    client = Client(raise_request_exception=False)
    client.force_login(agent)
    return client


def test_a_replica_that_stops_answering_costs_nothing_but_its_share(
    browser: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replica_router, "_DOWN_SECONDS", 0.5)
    conversation = ConversationFactory(
        body=ExchangeBodyFactory(customer="cus-faults", text="MARKER-FAULTS-PAGE")
    )
    fresh_replica()
    on_replica = pages("replica")
    assert browser.get(f"/conversations/{conversation.pk}/").status_code == 200
    assert pages("replica") == on_replica + 1  # the verdict "fresh" is now kept for a while

    REPLICA_SERVER.stop()
    try:
        failed = pages("failed")
        for url in _page_urls(conversation.pk):
            response = browser.get(url)
            assert response.status_code == 200, (url, response.status_code)
            assert "MARKER-FAULTS-PAGE" in response.content.decode() or url.startswith("/?")
        # The first page's read failed on the replica and was read again on the primary; the
        # pages after it went to the primary without asking the replica through its pool (a
        # replica set aside is asked by a probe of its own, refused at once).
        assert pages("failed") == failed + 1
        assert replica_router._seen[REPLICA].aside
        # While it is down, every page goes to the primary at once ("unavailable"), none fails.
        unavailable = pages("unavailable")
        for url in _page_urls(conversation.pk):
            assert browser.get(url).status_code == 200
        assert pages("unavailable") == unavailable + len(_page_urls(conversation.pk))
        assert pages("failed") == failed + 1
    finally:
        REPLICA_SERVER.start()
        REPLICA_SERVER.wait_ready()
    caught_up()
    # Back: once its set-aside period is over and a probe finds it fresh, it serves pages again.
    deadline = time.monotonic() + 60
    while True:
        before = pages("replica")
        assert browser.get(f"/conversations/{conversation.pk}/").status_code == 200
        if pages("replica") == before + 1:
            break
        assert time.monotonic() < deadline, "the replica never served a page again"
        time.sleep(0.2)


def test_an_erasure_by_a_process_without_replicas_still_fences_them(
    browser: Client, settings: Any
) -> None:
    erased = ConversationFactory(
        body=ExchangeBodyFactory(
            conversation="faults-erased",
            customer="cus-faults-erased",
            text="MARKER-FAULTS-ERASED order ORD-77123",
        )
    )
    ConversationFactory(
        body=ExchangeBodyFactory(
            conversation="faults-kept", customer="cus-faults-kept", text="MARKER-FAULTS-KEPT"
        )
    )
    fresh_replica()
    assert "MARKER-FAULTS-ERASED" in browser.get("/").content.decode()
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 3600.0  # the lag bound lifted: the fence alone
    pause_replay()
    try:
        # The erasing process (a worker) knows of no replica.
        configured = settings.DATABASE_REPLICAS
        settings.DATABASE_REPLICAS = []
        try:
            conversation_erase(erased.pk)
        finally:
            settings.DATABASE_REPLICAS = configured
        with psycopg.connect(**server(REPLICA, connections[REPLICA].settings_dict["NAME"])) as conn:
            held = conn.execute(
                "SELECT count(*) FROM conversations_block WHERE text LIKE %s",
                ["%MARKER-FAULTS-ERASED%"],
            ).fetchone()[0]  # type: ignore[index]
        assert held >= 1  # the replica, held behind, still has it
        urls = [
            "/",
            f"/conversations/{erased.pk}/",
            f"/conversations/{erased.pk}/export.md",
            "/?q=cus-faults-erased",
            "/?q=faults-erased",
            "/?q=ORD-77123",
        ]
        with replica_queries() as q:
            for url in urls:
                response = browser.get(url)
                assert response.status_code in (200, 404), url
                text = response.content.decode()
                assert "MARKER-FAULTS-ERASED" not in text, url
                assert f"/conversations/{erased.pk}/" not in text.replace(url, ""), url
        assert not any("conversations_block" in s["sql"] for s in q.captured_queries)
        assert "MARKER-FAULTS-KEPT" in browser.get("/").content.decode()
    finally:
        resume_replay()


def test_a_primary_restart_answers_503_with_retry_after(api: APIClient) -> None:
    body = ExchangeBodyFactory(conversation="faults-restart", customer="cus-faults-restart")
    assert post_json(api, "/api/v1/exchanges", body).status_code == 201
    chunk = {
        "conversation": "faults-restart",
        "customer": "cus-faults-restart",
        "format": "anthropic.messages",
        "exchange": "call-9",
        "seq": 0,
        "chunk": 'data: {"type":"message_start","message":{"id":"m","content":[]}}\n\n',
    }
    PRIMARY_SERVER.stop()
    try:
        for attempt in range(2):  # the broken connection, then a refused one
            again = {**body, "conversation": f"faults-restart-{attempt}"}
            for url, sent in (("/api/v1/exchanges", again), ("/api/v1/live/chunks", chunk)):
                response = post_json(api, url, sent)
                assert response.status_code == 503, (url, response.status_code, response.content)
                assert response["Retry-After"] == "1"
                assert response.json()["error"] == "unavailable"
                assert set(response.json()) == {"error", "detail", "field", "at"}
    finally:
        PRIMARY_SERVER.start()
        PRIMARY_SERVER.wait_ready()
    # Back: sent again as the client does after Retry-After, it is stored (a pool may hand out
    # a connection the restart broke first: that answer is a 503 too, never a 500).
    again = {**body, "conversation": "faults-restart-0"}
    answers = []
    for _ in range(2 * settings.DATABASE_POOL_SIZE + 2):
        answers.append(post_json(api, "/api/v1/exchanges", again))
        if answers[-1].status_code != 503:
            break
        assert answers[-1]["Retry-After"] == "1"
        close_old_connections()  # what each request's end does (the test client skips it)
        time.sleep(0.1)
    assert answers[-1].status_code == 201, [a.status_code for a in answers]
    assert Conversation.objects.filter(external_id__startswith="faults-restart").count() == 2
    # The test's own connections, broken by the restart, are not reused by its tear-down.
    connections.close_all()
    for connection in connections.all():
        if getattr(connection, "pool", None) is not None:
            connection.close_pool()
