"""Celery tasks of the conversation store. Each takes ids and calls one service, imported from
its room (never from ``services.py``, which enqueues these: no import cycle)."""

from __future__ import annotations

from celery import shared_task

from .projection.reproject import reprojection_run


@shared_task(acks_late=True, soft_time_limit=3600, time_limit=3700)
def reproject(job_id: int) -> None:
    """Re-project every conversation after a policy change (resumes where a crash left it)."""
    reprojection_run(job_id=job_id)


@shared_task(acks_late=True, soft_time_limit=300, time_limit=330)
def monitoring_tick() -> None:
    """Evaluate the alert rules and send what changed (conversations/monitoring/alerts.py)."""
    from .monitoring.alerts import monitoring_tick as tick

    tick()
