"""After a review, the reasoning it showed exists nowhere at rest: not in a pg_dump of the main
database, not in Redis, not in any log line captured at DEBUG during the test (invariant 3).
The page did show every marker, so the test would see one that escaped."""

from __future__ import annotations

import logging
from typing import Any

from django.db import connections
from django.test import Client

from tests.dumps import pg_dump, redis_dump
from tests.review.conftest import (
    HIDDEN,
    PURPOSE,
    SHOWN,
    fetched_response,
    make_world,
    review_url,
)
from tests.review.fake_provider import fake_openai

ALL = {**SHOWN, **HIDDEN}


def _debug_everywhere(caplog: Any) -> None:
    caplog.set_level(logging.DEBUG)
    for name in list(logging.root.manager.loggerDict):
        caplog.set_level(logging.DEBUG, logger=name)
    # SQL with its parameters, as a DEBUG deployment would log it.
    for alias in connections:
        connections[alias].force_debug_cursor = True


def test_after_a_review_no_marker_in_the_dumps_nor_the_logs(
    transactional_db: None, client: Client, settings: Any, caplog: Any
) -> None:
    world = make_world()
    names = ["anthropic", "openai", "chat", "aisdk", "fetch"]
    for name in names:
        world.grant(conversation=name)
    client.force_login(world.users["reviewer"])
    _debug_everywhere(caplog)
    shown = ""
    try:
        with fake_openai() as provider:
            settings.OPENAI_API_KEY = "sk-test-review-key-not-real"
            settings.OPENAI_BASE_URL = provider.url
            provider.json_route("resp_fetch_ok", fetched_response("resp_fetch_ok"))
            for name in names:
                response = client.post(review_url(world.conversations[name]), PURPOSE)
                assert response.status_code == 200, name
                shown += response.content.decode()
            assert len(provider.requests) == 1
    finally:
        for alias in connections:
            connections[alias].force_debug_cursor = False

    # Every marker of SHOWN was on a page: the content passed through this process.
    assert {name for name, marker in SHOWN.items() if marker in shown} == set(SHOWN)
    # The logs were captured (SQL included), and none holds a marker.
    assert any(r.name == "django.db.backends" for r in caplog.records)
    assert any("review.read" in r.getMessage() for r in caplog.records)
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in caplog.records)
    assert [name for name, marker in ALL.items() if marker in logged] == []

    dump = pg_dump("default")
    assert "audit_auditevent" in dump and "review.read" in dump
    assert [name for name, marker in ALL.items() if marker in dump] == []
    cache = redis_dump()
    assert [name for name, marker in ALL.items() if marker in cache] == []
