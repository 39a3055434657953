"""Defence in depth: a row already stored out of Python's range (an older version accepted year
10000, or a restore brought one back) no longer takes the queue down. The list, the search, the
conversation page, the admin's changelists and the erasure of that conversation all still work
(conversations/timestamps.py reads such an instant clamped)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client

from conversations import bounds
from conversations.models import Conversation, Exchange
from retention.models import DeletionRequest
from retention.services import deletion_request_submit, retention_tick
from tests.console.conftest import World, client_for

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = [
    ("10000-01-01 09:59:59+00", bounds.CLAMP_MAX),  # "9999-12-31T23:59:59-14:00", stored
    ("0001-12-31 10:00:00+00 BC", bounds.CLAMP_MIN),  # "0001-01-01T00:00:00+14:00", stored
]


def _restore(conversation: Conversation, stamp: str) -> None:
    """Write the instant straight into the tables, as a restore of an older dump would."""
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE conversations_conversation SET last_activity_at = %s::timestamptz, "
            "status_at = %s::timestamptz WHERE id = %s",
            [stamp, stamp, conversation.pk],
        )
        cur.execute(
            "UPDATE conversations_exchange SET started_at = %s::timestamptz "
            "WHERE conversation_id = %s",
            [stamp, conversation.pk],
        )


@pytest.mark.parametrize(("stamp", "clamped"), OUT_OF_RANGE, ids=["year-10000", "year-1-bc"])
def test_pages_admin_and_erasure_work_on_an_out_of_range_row(
    client: Client, world: World, stamp: str, clamped: Any
) -> None:
    _restore(world.billing, stamp)
    row = Conversation.objects.get(pk=world.billing.pk)
    assert row.last_activity_at == clamped
    assert Exchange.objects.get(conversation=row).started_at == clamped

    client_for(client, world, "agent")
    for url in ("/", "/?q=answer", "/?queue=billing", f"/conversations/{row.pk}/"):
        response = client.get(url)
        assert response.status_code == 200, url
    listing = client.get("/").content.decode()
    assert f"/conversations/{row.pk}/" in listing  # the row is listed, not hidden
    page_two = client.get("/?since=2000-01-01&until=2026-12-02")
    assert page_two.status_code == 200
    client_for(client, world, "admin")
    for url in (
        "/admin/conversations/conversation/",
        "/admin/conversations/exchange/",
        f"/admin/conversations/conversation/{row.pk}/change/",
        "/admin/conversations/conversation/?queue=billing",
    ):
        assert client.get(url).status_code == 200, url
    client_for(client, world, "compliance")
    assert client.get("/audit/").status_code == 200

    request = deletion_request_submit(
        reason="GDPR art. 17", conversations=[row.external_id], reference="ZD-restore"
    )
    retention_tick()
    request.refresh_from_db()
    assert request.status == DeletionRequest.Status.COMPLETED, request.error
    assert not Conversation.objects.filter(pk=row.pk).exists()
    assert client.get(f"/compliance/deletions/{request.pk}/").status_code == 200


def test_the_loader_is_on_every_connection() -> None:
    with connection.cursor() as cur:
        cur.execute("SELECT '10000-06-01 00:00:00+00'::timestamptz, now()")
        far, now = cur.fetchone()
    assert far == bounds.CLAMP_MAX
    assert bounds.CLAMP_MIN < now < bounds.CLAMP_MAX
