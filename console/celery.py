"""The Celery app and the one beat schedule of the project.

Every periodic job is declared here, each with a comment saying why it exists. Tasks live in each
app's ``tasks.py`` and are found by autodiscovery (no app imports ``console``).
"""

from __future__ import annotations

import os

from celery import Celery
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The one schedule. The state of every entry lives in PostgreSQL, so a missed or doubled run is
# harmless.
app.conf.beat_schedule = {
    # The retention clock: every CLOCK_INTERVAL_SECONDS one tick executes due deletion requests
    # and erases conversations past their retention through the one erase path
    # (retention/services/erase.py).
    "retention-tick": {
        "task": "retention.tasks.retention_tick",
        "schedule": float(settings.CLOCK_INTERVAL_SECONDS),
    },
    # The audit sealer: chains the audit rows committed since the last run and signs the batch
    # (audit/sealer.py). Its own entry, every few seconds, because record() no longer chains on
    # the request path: the sooner rows are sealed, the shorter the window in which a row is
    # protected by the append-only trigger alone. A run that waited in the queue longer than an
    # interval is dropped (``expires``): the next one does its work.
    "audit-seal": {
        "task": "audit.tasks.audit_seal",
        "schedule": float(settings.AUDIT_SEAL_INTERVAL_SECONDS),
        "options": {"expires": float(settings.AUDIT_SEAL_INTERVAL_SECONDS)},
    },
    # The operational signals: evaluates the alert rules over the hourly rollups and sends what
    # changed state (and retries undelivered notifications: conversations/monitoring/alerts.py).
    # Its own entry, so a slow webhook never delays the retention clock or the sealer. State is
    # in PostgreSQL (alerts, notifications): a missed or doubled run is harmless.
    "monitoring-tick": {
        "task": "conversations.tasks.monitoring_tick",
        "schedule": float(settings.SIGNALS_INTERVAL_SECONDS),
        "options": {"expires": float(settings.SIGNALS_INTERVAL_SECONDS)},
    },
}
