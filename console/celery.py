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

# The one schedule. Its only entry is the retention clock: every CLOCK_INTERVAL_SECONDS it enqueues
# one tick, which executes due deletion requests and erases conversations past their retention
# through the one erase path (retention/services/erase.py). The tick's state lives in PostgreSQL,
# so a missed or doubled tick is harmless.
app.conf.beat_schedule = {
    "retention-tick": {
        "task": "retention.tasks.retention_tick",
        "schedule": float(settings.CLOCK_INTERVAL_SECONDS),
    },
}
