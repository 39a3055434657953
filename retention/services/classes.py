"""Retention classes: how long a queue's (or one conversation's) conversations are kept, set by
admins. The clock reads them at its next tick (``clock.py``); a change is audited."""

from __future__ import annotations

from typing import Any

from django.db import transaction

import audit

from ..models import RetentionClass


@transaction.atomic
def retention_class_save(*, retention_class: RetentionClass, actor: Any = None) -> RetentionClass:
    """Save a retention class (``retention_class.changed``)."""
    retention_class.full_clean()
    retention_class.save()
    audit.record(
        "retention_class.changed",
        actor=actor,
        change="saved",
        retention_class=retention_class.pk,
        queue=retention_class.queue,
        days=retention_class.days,
    )
    return retention_class


@transaction.atomic
def retention_class_delete(*, retention_class: RetentionClass, actor: Any = None) -> None:
    pk, queue = retention_class.pk, retention_class.queue
    retention_class.delete()
    audit.record(
        "retention_class.changed", actor=actor, change="deleted", retention_class=pk, queue=queue
    )
