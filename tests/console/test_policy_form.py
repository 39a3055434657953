"""Admin: several fields of one tool in one form, saved as one change (one job, one audit row);
a wrong line saves nothing."""

from __future__ import annotations

from typing import Any

import pytest

from audit.models import AuditEvent
from conversations.models import FieldPolicy, ReprojectionJob

pytestmark = pytest.mark.django_db

URL = "/admin/conversations/fieldpolicy/several/"


def test_three_fields_in_one_save(client: Any, world: Any) -> None:
    client.force_login(world.users["admin"])
    assert client.get(URL).status_code == 200
    r = client.post(
        URL,
        {
            "tool_name": "get_order",
            "block_type": "*",
            "side": "output",
            "lines": "$.order_id identifier order ids\n$.status status\n\n$.eta display when",
        },
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    rows = {p.path: p.storage_class for p in FieldPolicy.objects.filter(tool_name="get_order")}
    assert rows == {"$.order_id": "identifier", "$.status": "status", "$.eta": "display"}
    assert ReprojectionJob.objects.count() == 1
    event = AuditEvent.objects.get(code="policy.changed")
    assert "$.order_id" in event.details["policy"] and "$.eta" in event.details["policy"]


@pytest.mark.parametrize(
    "lines",
    [
        "$.order_id identifier\n$.status nonsense",
        "$.a status\n$.a display",
        "only-a-path",
        "$..x status",
    ],
)
def test_a_wrong_line_saves_nothing(client: Any, world: Any, lines: str) -> None:
    client.force_login(world.users["admin"])
    body = {"tool_name": "get_order", "block_type": "*", "side": "output", "lines": lines}
    r = client.post(URL, body)
    assert r.status_code == 400
    assert "line " in r.content.decode()
    assert not FieldPolicy.objects.filter(tool_name="get_order").exists()
    assert not ReprojectionJob.objects.exists()


def test_others_may_not(client: Any, world: Any) -> None:
    client.force_login(world.users["agent"])
    assert client.get(URL).status_code in (302, 403, 404)
    assert client.post(URL, {"lines": "$.a status"}).status_code in (302, 403, 404)
    assert not FieldPolicy.objects.exists()
