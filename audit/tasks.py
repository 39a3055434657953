"""The sealer's task: enqueued by the ``audit-seal`` beat entry (console/celery.py).

No arguments, no state: the frontier lives in the last digest, and a second sealer running at
the same time finds the sealer lock taken and returns. A tick lost with its worker is harmless:
the next one seals what it would have.
"""

from __future__ import annotations

from celery import shared_task

from .sealer import seal_pending


@shared_task(ignore_result=True, soft_time_limit=120, time_limit=150)
def audit_seal() -> dict[str, int]:
    report = seal_pending()
    return {"rows": report.rows, "batches": report.batches, "busy": int(report.busy)}
