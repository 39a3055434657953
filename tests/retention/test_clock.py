"""The retention clock's one beat entry and the tick task."""

from __future__ import annotations

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from console.celery import app
from retention.models import DeletionRequest
from retention.services import deletion_request_submit
from retention.tasks import retention_tick
from tests.factories import post_exchange


def test_the_one_beat_entry_enqueues_the_tick() -> None:
    # The retention clock's one entry; the audit sealer has its own (tests/audit).
    assert sorted(app.conf.beat_schedule) == ["audit-seal", "monitoring-tick", "retention-tick"]
    seal = app.conf.beat_schedule["audit-seal"]
    assert seal["task"] == "audit.tasks.audit_seal"
    assert seal["schedule"] == float(settings.AUDIT_SEAL_INTERVAL_SECONDS)
    entry = app.conf.beat_schedule["retention-tick"]
    assert entry["task"] == "retention.tasks.retention_tick"
    assert entry["schedule"] == float(settings.CLOCK_INTERVAL_SECONDS)
    assert retention_tick.name == "retention.tasks.retention_tick"
    assert retention_tick.acks_late is True


@pytest.mark.django_db
def test_the_task_runs_one_tick(api: APIClient) -> None:
    post_exchange(api, conversation="conv-task", customer="cus-task", text="MARK-T")
    request = deletion_request_submit(conversations=["conv-task"], reason="x")
    done = retention_tick.run()
    assert done["completed"] == 1
    assert DeletionRequest.objects.get(pk=request.pk).status == "completed"
