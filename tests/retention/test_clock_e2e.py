"""The clock end to end: a real Celery worker and a real beat, separate processes over Redis (not
eager mode), against the test databases (``clock.py`` starts them).

A customer's deletion request completes within two ticks of the beat; the receipt counts what
existed; a pg_dump of the main database holds nothing of the subject afterwards while another
subject's data is intact. Two beats at once (and two workers) still execute the request once.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis
from django.test import override_settings

from audit.models import AuditEvent
from conversations.models import Conversation
from retention import registry
from retention.models import DeletionRequest, Receipt
from retention.services import deletion_request_submit
from tests.conftest import table_counts
from tests.dumps import pg_dump, redis_dump
from tests.retention.clock import (
    CONVERSATIONS,
    OTHER,
    POLL_SECONDS,
    SENT,
    SUBJECT,
    TEXTS,
    Clock,
    assert_other_subject_intact,
    assert_receipt_counts,
    ingest_world,
    private_redis_url,
    table_of,
    ticks,
    wait_for,
)

# Slow (real Celery processes), and one at a time: they share the clock's private Redis database
# (one xdist group runs on one worker, in order).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery")]


# --- Tests ------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_a_request_completes_within_two_ticks_of_the_real_clock(
    transactional_db: Any, clock: Clock, private_redis: redis.Redis
) -> None:
    ingest_world()
    ids = sorted(
        Conversation.objects.filter(customer_external_id=SUBJECT).values_list("pk", flat=True)
    )
    assert len(ids) == len(CONVERSATIONS)
    # What exists of the subject, per registered model, counted here (not by the code under test).
    existed = {entry.label: entry.rows(ids).count() for entry in registry.ALL}
    assert existed["conversations.message"] >= 4 and existed["conversations.datakey"] == 2
    tables_before = table_counts()
    before = pg_dump()
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS, *OTHER):
        assert value in before  # else the dump below would prove nothing

    worker = clock.worker()
    clock.beat()
    # The clock is running: the worker is up and has finished a tick (with nothing to do).
    wait_for("the worker's first tick", lambda: bool(ticks(worker)[1]), clock)

    received_before, _ = ticks(worker)
    started = time.monotonic()
    request = deletion_request_submit(customer=SUBJECT, reason="erasure request (e2e)")

    # Poll: the log is read before the status, so "the second tick after submission had
    # succeeded and the request was still not completed" is never a false alarm.
    deadline = started + POLL_SECONDS
    while True:
        received, succeeded = ticks(worker)
        status = DeletionRequest.objects.values_list("status", flat=True).get(pk=request.pk)
        after = [t for t in received if t not in received_before]
        if status == DeletionRequest.Status.COMPLETED:
            break
        assert status in ("pending", "running"), status
        assert not (len(after) >= 2 and after[1] in succeeded), (
            f"two ticks after submission succeeded ({after[:2]}), request still {status}"
        )
        clock.alive()
        assert time.monotonic() < deadline, f"not completed after {POLL_SECONDS}s ({status})"
        time.sleep(0.05)
    elapsed = time.monotonic() - started
    print(f"completed {elapsed:.2f}s after submission; ticks received since: {len(after)}")
    # Within two ticks of the beat, counted in ticks (the worker's log), not in seconds: a slow
    # machine stretches the seconds, never the count.
    assert len(after) <= 2

    request.refresh_from_db()
    assert request.attempts == 1
    assert request.subject == "" and request.conversation_external_ids == []
    receipt = Receipt.objects.get(request=request)
    # The receipt counts what existed: per model, and as measured by the tables themselves.
    assert_receipt_counts(receipt, existed)
    tables_after = table_counts()
    for entry in registry.ALL:
        removed = tables_before[table_of(entry)] - tables_after[table_of(entry)]
        assert removed == existed[entry.label], entry.label
    assert AuditEvent.objects.filter(code="deletion.executed", details__request=request.pk).count()
    assert not Conversation.objects.filter(pk__in=ids).exists()

    dump = pg_dump()
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS):
        assert value not in dump, value
    assert_other_subject_intact(dump)
    # Nor in the clock's Redis (broker queue and cache): every key and value, decoded.
    with override_settings(REDIS_URL=private_redis_url()):
        keys = redis_dump()
    assert "_kombu.binding.celery" in keys  # the broker of the clock was this database
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS):
        assert value not in keys, value


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_two_beats_at_once_still_execute_the_request_once(
    transactional_db: Any, clock: Clock
) -> None:
    ingest_world()
    workers = [clock.worker("worker-a"), clock.worker("worker-b")]
    beats = [clock.beat("beat-a"), clock.beat("beat-b")]
    wait_for(
        "both beats to send a tick and a worker to finish one",
        lambda: all(SENT.search(b.text()) for b in beats) and any(ticks(w)[1] for w in workers),
        clock,
    )

    request = deletion_request_submit(customer=SUBJECT, reason="erasure request (two beats)")
    wait_for(
        "the request to complete",
        lambda: DeletionRequest.objects.get(pk=request.pk).status == "completed",
        clock,
    )
    # Let both beats tick a few more times, then look again: nothing happened twice.
    done: set[str] = set().union(*(ticks(w)[1] for w in workers))
    wait_for(
        "four more ticks",
        lambda: len(set().union(*(ticks(w)[1] for w in workers)) - done) >= 4,
        clock,
    )

    request.refresh_from_db()
    assert request.status == "completed"
    assert request.attempts == 1
    assert Receipt.objects.filter(request=request).count() == 1
    assert Receipt.objects.count() == 1
    executed = AuditEvent.objects.filter(code="deletion.executed")
    assert executed.count() == 1
    assert executed.get().details["request"] == request.pk
    receipt = Receipt.objects.get()
    assert receipt.conversations == len(CONVERSATIONS)
    assert receipt.keys_destroyed == len(CONVERSATIONS)
    assert not Conversation.objects.filter(customer_external_id=SUBJECT).exists()
    assert_other_subject_intact(pg_dump())
    sent = [len(SENT.findall(b.text())) for b in beats]
    ran = [len(ticks(w)[1]) for w in workers]
    print(f"ticks sent per beat: {sent}; ticks run per worker: {ran}")
    assert all(n >= 2 for n in sent)
