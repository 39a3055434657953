"""The list exported as CSV (issue 35): the rows the page's filters select, through the list's
audited selector (audited, page "list-export"), the last message as the projection redacted it and
nothing of a reasoning block or a dropped field."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from audit.models import AuditEvent
from tests.console.conftest import (
    DROPPED_MARKER,
    PII,
    REASONING_MARKER,
    SIGNATURE_MARKER,
    World,
    client_for,
    world,  # noqa: F401  (roles, users and two conversations)
)

pytestmark = pytest.mark.django_db


def _rows(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_an_agent_exports_what_the_list_shows(client: Any, world: World) -> None:  # noqa: F811
    agent = client_for(client, world, "agent")
    response = agent.get("/conversations.csv?sort=output&min_output=1")
    rows = _rows(response)
    assert [r["conversation"] for r in rows] == [world.billing.external_id]
    row = rows[0]
    assert row["queue"] == "billing" and row["output_tokens"] == "121"
    assert row["last_message_by"] == "assistant" and "look up your order" in row["last_message"]
    body = response.content.decode()
    for planted in (REASONING_MARKER, SIGNATURE_MARKER, DROPPED_MARKER, *PII.values()):
        assert planted not in body
    event = AuditEvent.objects.order_by("-pk").first()
    assert event is not None and event.code == "conversation.listed"
    assert event.details == {"page": "list-export", "results": 1, "filters": ["min_output", "sort"]}
    # The page links its own view's export.
    page = agent.get("/?sort=output&min_output=1").content.decode()
    assert 'href="/conversations.csv?sort=output&amp;min_output=1"' in page


def test_nothing_of_other_queues_and_bad_input_stores_nothing(
    client: Any,
    world: World,  # noqa: F811
) -> None:
    other = client_for(client, world, "other_agent")
    exported = _rows(other.get("/conversations.csv"))
    assert world.billing.external_id not in [r["conversation"] for r in exported]
    before = AuditEvent.objects.count()
    bad = other.get("/conversations.csv?min_output=x")
    assert bad.status_code == 400 and b"min_output" in bad.content
    assert AuditEvent.objects.count() == before
    from django.test import Client

    assert Client().get("/conversations.csv").status_code == 302  # anonymous: the login page
