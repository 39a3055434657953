"""The retention clock's task: enqueued by the one beat entry (console/celery.py).

It takes no arguments and holds no state: everything it needs is in PostgreSQL, claimed with
``select_for_update(skip_locked=True)``, so a duplicated, retried or crashed tick is harmless
(``acks_late``: a tick lost with its worker is delivered again).
"""

from __future__ import annotations

from celery import shared_task

from .services import retention_tick as _tick


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=3000, time_limit=3600)
def retention_tick() -> dict[str, int]:
    return _tick()
