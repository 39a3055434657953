"""The Celery app and the one beat schedule of the project.

Every periodic job is declared here, each with a comment saying why it exists. Tasks live in each
app's ``tasks.py`` and are found by autodiscovery (no app imports ``console``).
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The one schedule. The retention clock (deletion requests and expired retention, one erase
# path) will be its only entry; until it exists there is nothing periodic to run.
app.conf.beat_schedule = {}
