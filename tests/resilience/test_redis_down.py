"""Case 13: with Redis stopped (a server of the test's own, never the shared one), ingest and
the pages answer 2xx: a failed cache read falls back to the database (the field policies'
version, the list's choices), the live close of an exchange's POST is skipped, "Live now" is
empty; a live chunk is a 503 in the error shape. Once Redis is back, all of it works again."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.models import Conversation, Exchange
from tests.conftest import post_json
from tests.factories import ExchangeBodyFactory
from tests.resilience.redis_server import RedisServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture
def own_redis(tmp_path: Path, settings: Any) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    shared_url, shared_caches = settings.REDIS_URL, copy.deepcopy(settings.CACHES)
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["LOCATION"] = server.url()
    settings.REDIS_URL, settings.CACHES = server.url(), caches
    try:
        yield server
    finally:
        settings.REDIS_URL, settings.CACHES = shared_url, shared_caches
        server.stop()


def _pages(client: Any, world: Any, pk: int) -> None:
    client.force_login(world.users["admin"])
    for url in ("/", "/?q=order", f"/conversations/{pk}/", "/live/"):
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)


def test_ingest_and_pages_answer_with_redis_stopped(
    api: APIClient, client: Any, world: Any, own_redis: RedisServer
) -> None:
    r = post_json(api, "/api/v1/exchanges", ExchangeBodyFactory(conversation="redis-up"))
    assert r.status_code == 201, r.json()
    _pages(client, world, world.billing.pk)  # the version and the choices are in Redis now

    own_redis.stop()
    for name in ("redis-down-1", "redis-down-2"):
        body = ExchangeBodyFactory(conversation=name)
        body["live_exchange"] = "call-1"
        r = post_json(api, "/api/v1/exchanges", body)
        assert r.status_code == 201, r.content[:500]
        assert Exchange.objects.filter(conversation__external_id=name).count() == 1
    pk = Conversation.objects.get(external_id="redis-down-1").pk
    _pages(client, world, pk)
    # Signing in still works (the login throttle's counts live in the cache).
    client.logout()
    signin = client.post("/login/", {"username": "admin", "password": "wrong"})
    assert signin.status_code in (200, 302)
    client.force_login(world.users["admin"])
    # The exposure map and the subject-access report answer, saying what they could not count.
    assert client.get(f"/conversations/{pk}/exposure/").status_code == 200
    report = client.post(
        "/compliance/subject-access/",
        {"customer": "cus-redis-down-1", "purpose": "redis down", "format": "json"},
    )
    assert report.status_code == 200 and b"Redis did not answer" in report.content
    chunk = {
        "conversation": "redis-down-1",
        "customer": "cus-redis-down-1",
        "format": "anthropic.messages",
        "exchange": "call-2",
        "seq": 0,
        "chunk": "data: {}\n\n",
    }
    r = post_json(api, "/api/v1/live/chunks", chunk)
    assert r.status_code == 503
    assert r.json()["error"] == "unavailable" and set(r.json()) == {
        "error",
        "detail",
        "field",
        "at",
    }

    own_redis.start()
    r = post_json(api, "/api/v1/exchanges", ExchangeBodyFactory(conversation="redis-back"))
    assert r.status_code == 201
    r = post_json(api, "/api/v1/live/chunks", chunk)
    assert r.status_code == 202, r.json()
    _pages(client, world, pk)
