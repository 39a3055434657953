"""Helpers for the audit tests: a row's hash computed independently of audit/hashing.py."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC
from typing import Any

import pytest
from django.contrib.auth.models import User

from audit.models import AuditEvent

GENESIS = "0" * 64


def expected_hash(event: AuditEvent) -> str:
    """The chain's hash as specified (sorted-key compact JSON, ISO UTC with microseconds)."""
    payload = {
        "id": event.id,
        "at": event.at.astimezone(UTC).isoformat(timespec="microseconds"),
        "code": event.code,
        "actor_id": event.actor_id,
        "actor_label": event.actor_label,
        "conversation_id": event.conversation_id,
        "subject_hash": event.subject_hash,
        "details": event.details,
        "prev_hash": event.prev_hash,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chain() -> list[AuditEvent]:
    return list(AuditEvent.objects.order_by("id"))


@pytest.fixture
def alice(db: Any) -> User:
    return User.objects.create_user("alice", password="x")
