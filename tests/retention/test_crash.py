"""The worker is killed (SIGKILL) at each step of an erase in turn (``crashpoints.py`` names the
steps); a new worker then completes the request exactly once: no row of the subject remains, the
receipt (one) counts what existed, one ``deletion.executed`` audit row, and the audit chain
verifies. Real Celery worker and beat processes over Redis (``clock.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.models import AuditEvent
from audit.verify import verify_chain
from conversations.models import Conversation
from retention import registry
from retention.models import DeletionRequest, Receipt, Tombstone
from retention.services import deletion_request_submit
from tests.dumps import pg_dump
from tests.retention.clock import (
    CONVERSATIONS,
    SUBJECT,
    TEXTS,
    Clock,
    assert_other_subject_intact,
    assert_receipt_counts,
    ingest_world,
    ticks,
    wait_for,
)
from tests.retention.crashpoints import STEPS

# Slow (real Celery processes), and one at a time: they share the clock's private Redis database
# (one xdist group runs on one worker, in order).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("celery")]

STALE_SECONDS = 3  # RETENTION_CLAIM_STALE_SECONDS of the workers: a dead claim is retaken soon


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.django_db(transaction=True, databases="__all__")
def test_a_worker_killed_at_each_step_of_the_erase(
    transactional_db: Any, clock: Clock, tmp_path: Path, step: str
) -> None:
    clock.env.update(RETENTION_CLAIM_STALE_SECONDS=str(STALE_SECONDS), RETENTION_CHUNK="1")
    ingest_world()
    ids = sorted(
        Conversation.objects.filter(customer_external_id=SUBJECT).values_list("pk", flat=True)
    )
    existed = {entry.label: entry.rows(ids).count() for entry in registry.ALL}
    assert existed["conversations.datakey"] == len(CONVERSATIONS) == len(ids)

    marker = tmp_path / "crashed-at"
    doomed = clock.worker(
        "doomed",
        include="tests.retention.crashpoints",
        env={"CRASH_AT": step, "CRASH_MARKER": str(marker)},
    )
    clock.beat()
    wait_for("the doomed worker's first tick", lambda: bool(ticks(doomed)[1]), clock)
    request = deletion_request_submit(customer=SUBJECT, reason=f"crash test at {step}")
    wait_for(f"the worker to reach {step}", marker.exists, clock)
    assert marker.read_text() == step

    clock.kill(doomed)

    status = DeletionRequest.objects.values_list("status", flat=True).get(pk=request.pk)
    assert status == ("completed" if step == "receipt_issued" else "running")
    left = Conversation.objects.filter(pk__in=ids).count()
    assert left == {"conversation_erased": 1, "verified": 0, "receipt_issued": 0}.get(step, 2)
    if step != "claimed":
        assert Tombstone.objects.filter(kind="customer").exists()

    survivor = clock.worker("survivor")
    wait_for(
        "the request to complete",
        lambda: DeletionRequest.objects.get(pk=request.pk).status == "completed",
        clock,
    )
    # Two more ticks on the survivor: nothing happens twice.
    done = ticks(survivor)[1]
    wait_for("two more ticks", lambda: len(ticks(survivor)[1] - done) >= 2, clock)

    request.refresh_from_db()
    assert request.status == "completed"
    assert request.attempts == (1 if step == "receipt_issued" else 2)
    assert request.subject == "" and request.conversation_external_ids == []
    receipt = Receipt.objects.get()
    assert receipt.request_id == request.pk
    assert_receipt_counts(receipt, existed)
    for entry in registry.ALL:
        assert not entry.rows(ids).exists(), entry.label
    assert not Conversation.objects.filter(customer_external_id=SUBJECT).exists()
    executed = AuditEvent.objects.filter(code="deletion.executed")
    assert [e.details["request"] for e in executed] == [request.pk]
    chain = verify_chain()
    assert chain.ok, (chain.broken_id, chain.problem)

    dump = pg_dump()
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS):
        assert value not in dump, value
    assert_other_subject_intact(dump)
