"""A Redis outage during an erasure (a server of the test's own, stopped; never the shared one):
forgetting the live streams is best effort, so the erasure completes on its first attempt, with
its receipt (its verification says Redis was not scanned) and the customer's conversations gone,
instead of failing and waiting out ``RETENTION_CLAIM_STALE_SECONDS`` with the conversations still
readable. Once Redis is back, the clock's sweep forgets whatever the erasure could not."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.live import state
from conversations.models import Conversation
from retention.models import DeletionRequest
from retention.services import deletion_request_submit
from retention.services.clock import retention_tick
from tests.live.conftest import chunk_body, stored_conversation
from tests.live.test_api_chunks import send
from tests.resilience.redis_server import RedisServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

OPEN = [
    {"type": "message_start", "message": {"id": "m", "content": []}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "On "}},
]


@pytest.fixture
def own_redis(tmp_path: Path, settings: Any) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["LOCATION"] = server.url()
    settings.REDIS_URL, settings.CACHES = server.url(), caches
    settings.LIVE_KEY_PREFIX = f"test-live-{uuid.uuid4().hex[:12]}"
    try:
        yield server
    finally:
        server.stop()


def test_an_erasure_completes_while_redis_is_down(
    api: APIClient, own_redis: RedisServer, settings: Any
) -> None:
    customer = "cus-redis-blip"
    ids = []
    for name in ("blip-1", "blip-2"):
        ids.append(stored_conversation(api, name))
        for seq, event in enumerate(OPEN):
            body = chunk_body(None, name, seq, f"data: {json.dumps(event)}\n\n")
            assert send(api, body).status_code == 202
    Conversation.objects.filter(pk__in=ids).update(customer_external_id=customer)
    assert set(ids) <= set(state.live_now())
    request = deletion_request_submit(customer=customer, reason="the customer asked")

    own_redis.stop()
    done = retention_tick()

    request.refresh_from_db()
    assert request.status == DeletionRequest.Status.COMPLETED, request.error
    assert request.attempts == 1 and done["completed"] == 1
    assert not Conversation.objects.filter(pk__in=ids).exists()
    assert request.receipt.conversations == 2
    assert request.receipt.verification["ok"] is True
    assert request.receipt.verification["redis"] is False  # said, not pretended
    assert done["live_forgotten"] == 0  # Redis down: nothing to sweep with

    # Redis back (a server that kept its keys would still hold them: put some back as a
    # surviving replica would), and the next tick's sweep forgets them.
    own_redis.start()
    r = state.client()
    for pk in ids:
        r.rpush(state.key("log", pk), "{}")
        r.zadd(state.key("now"), {str(pk): 1.0})
    assert retention_tick()["live_forgotten"] == 2
    assert not list(r.scan_iter(f"{settings.LIVE_KEY_PREFIX}:*"))
