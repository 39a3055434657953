"""Queue grants: the grant_queue command and the admin's queue page, both audited."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from audit.models import AuditEvent
from conversations.models import Queue
from tests.console.conftest import World

pytestmark = pytest.mark.django_db(databases="__all__")


def test_grant_queue_command_for_a_user_and_a_group(client: Any, world: World) -> None:
    out = io.StringIO()
    call_command("grant_queue", "other_agent", "billing", stdout=out)
    assert "user other_agent now sees queue billing" in out.getvalue()
    client.force_login(world.users["other_agent"])
    assert client.get(f"/conversations/{world.billing.pk}/").status_code == 200
    call_command("grant_queue", "other_agent", "billing", "--revoke", stdout=io.StringIO())
    client.force_login(world.users["other_agent"])
    assert client.get(f"/conversations/{world.billing.pk}/").status_code == 404
    call_command("grant_queue", "support_agent", "returns", stdout=io.StringIO())
    assert Queue.objects.filter(name="returns").exists()  # created on first grant
    codes = list(
        AuditEvent.objects.filter(code__startswith="queue.").values_list("code", "details")
    )
    assert ("queue.granted", {"queue": "billing", "user": world.users["other_agent"].pk}) in codes
    assert ("queue.revoked", {"queue": "billing", "user": world.users["other_agent"].pk}) in codes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody", "billing"], "no user or group named 'nobody'"),
        (["agent", ""], "1 to 100"),
        (["reviewer", "billing"], "both a user and a group"),
    ],
)
def test_grant_queue_command_errors(world: World, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("grant_queue", *args, stdout=io.StringIO())


def test_admin_queue_page_grants_and_revokes(client: Any, world: World) -> None:
    queue = Queue.objects.get(name="shipping")
    client.force_login(world.users["admin"])
    agents = Group.objects.get(name="support_agent")
    response = client.post(
        f"/admin/conversations/queue/{queue.pk}/change/",
        {"name": "shipping", "users": [world.users["agent"].pk], "groups": [agents.pk]},
    )
    assert response.status_code == 302, response.content[:300]
    client.force_login(world.users["agent"])
    assert client.get(f"/conversations/{world.shipping.pk}/").status_code == 200
    client.force_login(world.users["admin"])
    client.post(
        f"/admin/conversations/queue/{queue.pk}/change/",
        {"name": "shipping", "users": [], "groups": []},
    )
    client.force_login(world.users["agent"])
    assert client.get(f"/conversations/{world.shipping.pk}/").status_code == 404
    granted = AuditEvent.objects.filter(
        code="queue.granted", actor_id=world.users["admin"].pk
    ).count()
    revoked = AuditEvent.objects.filter(
        code="queue.revoked", actor_id=world.users["admin"].pk
    ).count()
    # The other agent's own grant of shipping stays: only what the form changed was revoked.
    assert (granted, revoked) == (2, 3)
