"""The console tests' small world (roles, users, two queues with planted markers), reused; and
the two rules the data migration ships, restored when a transactional test's flush (another
test's, in this process) has emptied the table."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from tests.console.conftest import world

__all__ = ["loopback_receivers_allowed", "shipped_rules", "world"]


@pytest.fixture(autouse=True)
def loopback_receivers_allowed(settings: Any) -> None:
    """The tests' webhook receivers listen on 127.0.0.1, an internal address the console
    refuses unless NOTIFY_ALLOWED_HOSTS names it (conversations/monitoring/destinations.py)."""
    settings.NOTIFY_ALLOWED_HOSTS = ["127.0.0.1"]


@pytest.fixture(autouse=True)
def shipped_rules(request: Any) -> None:
    if "db" not in request.fixturenames and "transactional_db" not in request.fixturenames:
        marker = request.node.get_closest_marker("django_db")
        if marker is None:
            return
        request.getfixturevalue("db")
    from conversations.models import AlertRule

    shipped = importlib.import_module(
        "conversations.migrations.0001_squashed_0033_review_request_expired"
    )
    for rule in shipped.RULES:
        AlertRule.objects.get_or_create(name=rule["name"], defaults=rule)
