"""A real Celery worker is SIGKILLed in the middle of a seal batch; the next worker seals every
row exactly once and the log verifies (real worker and beat processes over Redis: the retention
tests' clock harness)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.models import AuditDigest, AuditEvent, AuditSeal
from audit.verify import verify_chain
from tests.retention.clock import Clock, wait_for

from .conftest import write

pytestmark = pytest.mark.slow


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_a_worker_killed_mid_seal_leaves_nothing_sealed_twice_or_skipped(
    transactional_db: Any, clock: Clock, tmp_path: Path
) -> None:
    clock.env.update(AUDIT_SEAL_INTERVAL_SECONDS="1")
    first = write(30)
    marker = tmp_path / "crashed-at"
    doomed = clock.worker(
        "doomed", include="tests.audit.sealcrash", env={"CRASH_MARKER": str(marker)}
    )
    clock.beat()
    wait_for("the sealer to pause mid-batch", marker.exists, clock)
    # Its seals were inserted in the batch's transaction: none of them is committed.
    assert AuditSeal.objects.count() == 0
    clock.kill(doomed)
    assert AuditSeal.objects.count() == 0 and AuditDigest.objects.count() == 0

    second = write(20)  # rows keep arriving while no sealer runs
    clock.worker("survivor")
    total = len(first) + len(second)
    wait_for("every row to be sealed", lambda: AuditSeal.objects.count() == total, clock)

    seals = list(AuditSeal.objects.order_by("position").values_list("position", "event_id"))
    assert [p for p, _ in seals] == list(range(1, total + 1))
    assert sorted(e for _, e in seals) == sorted(AuditEvent.objects.values_list("id", flat=True))
    report = verify_chain()
    assert report.ok, report.problems
    assert (report.verified, report.unsealed) == (total, 0)
