"""A worker that dies in the middle of an erasure gives its claim up with its database session
(retention/services/claims.py): the next tick resumes the request, without waiting for
``RETENTION_CLAIM_STALE_SECONDS`` (600 s here, as by default; the issue measured 656 s).

- In process: a claim held by a live session (another thread's connection) is left alone; once
  that session ends, the next claim takes the request over at once.
- Real processes (slow): a Celery worker SIGKILLed between two conversations of an erasure; the
  first tick of a new worker completes it (within one clock interval), exactly once.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from conversations.models import Conversation
from retention.models import DeletionRequest, Receipt
from retention.services import deletion_request_claim, deletion_request_submit, retention_tick
from tests.factories import post_exchange
from tests.retention.clock import SUBJECT, Clock, ingest_world, ticks, wait_for

STALE = "600"


def session_alive(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone() is not None


def wait_until(done: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_a_claim_is_released_with_its_session(api: APIClient, settings: Any) -> None:
    settings.RETENTION_CLAIM_STALE_SECONDS = int(STALE)
    for n in (1, 2):
        post_exchange(api, conversation=f"conv-dead-{n}", customer="cus-dead", text=f"MARK-D{n}")
    request = deletion_request_submit(customer="cus-dead", reason="dead worker")
    claimed: dict[str, Any] = {}
    holding, done = threading.Event(), threading.Event()

    def worker() -> None:
        claimed["request"] = deletion_request_claim()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            claimed["backend"] = cursor.fetchone()[0]
        holding.set()
        done.wait(30)
        connection.close()  # the worker's session ends: what a SIGKILL does to it

    thread = threading.Thread(target=worker)
    thread.start()
    assert holding.wait(30)
    assert claimed["request"].pk == request.pk
    assert deletion_request_claim() is None  # a live worker holds it: left alone
    assert retention_tick()["requests"] == 0
    done.set()
    thread.join(30)
    # The server ends a closed session a moment after the client hangs up (its locks go with
    # its process): under load the next statement can arrive first. A real next tick comes
    # seconds later; here, wait for the session to be gone, then tick at once.
    gone = wait_until(lambda: not session_alive(claimed["backend"]))
    assert gone, f"the worker's session {claimed['backend']} outlived its connection"
    result = retention_tick()  # the next tick, at once
    assert result["requests"] == 1
    request.refresh_from_db()
    assert (request.status, request.attempts) == ("completed", 2)
    assert Receipt.objects.filter(request=request).count() == 1
    assert not Conversation.objects.filter(customer_external_id="cus-dead").exists()
    assert retention_tick()["requests"] == 0  # nothing happens twice


@pytest.mark.slow
@pytest.mark.xdist_group("celery")
@pytest.mark.django_db(transaction=True, databases="__all__")
def test_a_worker_killed_mid_erasure_is_resumed_by_the_next_tick(
    transactional_db: Any, clock: Clock, tmp_path: Path
) -> None:
    clock.env.update(RETENTION_CLAIM_STALE_SECONDS=STALE, RETENTION_CHUNK="1")
    ingest_world()
    ids = list(
        Conversation.objects.filter(customer_external_id=SUBJECT).values_list("pk", flat=True)
    )
    assert len(ids) == 2
    marker = tmp_path / "crashed-at"
    doomed = clock.worker(
        "doomed",
        include="tests.retention.crashpoints",
        env={"CRASH_AT": "conversation_erased", "CRASH_MARKER": str(marker)},
    )
    clock.beat()
    wait_for("the doomed worker's first tick", lambda: bool(ticks(doomed)[1]), clock)
    request = deletion_request_submit(customer=SUBJECT, reason="killed mid-erasure")
    wait_for("the first conversation erased", marker.exists, clock)
    clock.kill(doomed)
    assert Conversation.objects.filter(pk__in=ids).count() == 1  # mid-erasure
    assert DeletionRequest.objects.get(pk=request.pk).status == "running"

    survivor = clock.worker("survivor")
    wait_for(
        "the request to complete",
        lambda: DeletionRequest.objects.get(pk=request.pk).status == "completed",
        clock,
    )
    # The survivor's first tick did it (one clock interval after it started, not 600 s). The
    # worker logs the tick's result after its transaction commits: wait for the line.
    done = r"retention_tick\[[0-9a-f-]+\] succeeded in [\d.]+s: (.*)"
    wait_for("the tick's log line", lambda: re.search(done, survivor.text()) is not None, clock)
    first = re.search(done, survivor.text())
    assert first is not None, survivor.text()
    assert "'requests': 1" in first.group(1), first.group(1)
    request.refresh_from_db()
    assert request.attempts == 2
    assert Receipt.objects.filter(request=request).count() == 1
    assert not Conversation.objects.filter(pk__in=ids).exists()
    # The clock goes on: two more ticks, nothing happens twice.
    seen = ticks(survivor)[1]
    wait_for("two more ticks", lambda: len(ticks(survivor)[1] - seen) >= 2, clock)
    assert Receipt.objects.filter(request=request).count() == 1
