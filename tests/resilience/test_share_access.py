"""Case 4: a share link lives only while its creator could still open the conversation (active,
a reader's role, the queue's grant): checked at every opening, 410 otherwise; deactivating the
creator revokes their links (audited). Nothing but the opening's audit row is stored."""

from __future__ import annotations

from typing import Any

import pytest

from audit.models import AuditEvent
from console.people.services.page import person_deactivate
from conversations.models import ShareLink
from conversations.services import queue_grant
from conversations.sharing.services import share_link_create
from tests.conftest import table_counts

pytestmark = pytest.mark.django_db


def _link(world: Any) -> tuple[ShareLink, str]:
    return share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)


def _refused_and_nothing_stored(client: Any, token: str, why: bytes) -> None:
    before = table_counts()
    r = client.get(f"/s/{token}/")
    assert r.status_code == 410
    assert why in r.content
    assert b"Let me look up your order" not in r.content
    changed = {k: v - before[k] for k, v in table_counts().items() if v != before[k]}
    assert changed == {"default.audit_auditevent": 1}  # the opening's row, nothing else
    assert AuditEvent.objects.filter(code="share_link.opened").latest("pk").details["outcome"] in (
        "withdrawn",
        "revoked",
    )


def _pages_work(client: Any, world: Any) -> None:
    client.force_login(world.users["admin"])
    assert client.get("/").status_code == 200
    assert client.get(f"/conversations/{world.billing.pk}/").status_code == 200
    assert client.get("/compliance/share-links/").status_code == 200


def test_a_link_ends_with_its_creators_queue_grant(client: Any, world: Any) -> None:
    link, token = _link(world)
    assert client.get(f"/s/{token}/").status_code == 200
    queue_grant(principal=world.users["agent"], queue_name="billing", revoke=True)
    _refused_and_nothing_stored(client, token, b"no longer valid")
    link.refresh_from_db()
    assert link.opened_count == 1
    # the grant back: the link opens again (it was withdrawn, not revoked)
    queue_grant(principal=world.users["agent"], queue_name="billing")
    assert client.get(f"/s/{token}/").status_code == 200
    _pages_work(client, world)


def test_a_link_ends_with_its_creators_role(client: Any, world: Any) -> None:
    _, token = _link(world)
    world.users["agent"].groups.clear()
    _refused_and_nothing_stored(client, token, b"no longer valid")
    _pages_work(client, world)


def test_a_link_ends_with_its_creators_account(client: Any, world: Any) -> None:
    _, token = _link(world)
    _other, other_token = share_link_create(
        actor=world.users["reviewer"], conversation_id=world.billing.pk
    )
    agent = world.users["agent"]
    agent.is_active = False  # deactivated by hand, not through the People page
    agent.save(update_fields=["is_active"])
    _refused_and_nothing_stored(client, token, b"no longer valid")
    agent.delete()  # the creator gone: SET_NULL on the link, still refused
    _refused_and_nothing_stored(client, token, b"no longer valid")
    assert client.get(f"/s/{other_token}/").status_code == 200  # others' links unaffected
    _pages_work(client, world)


def test_deactivation_revokes_the_creators_links(client: Any, world: Any) -> None:
    link, token = _link(world)
    person_deactivate(user=world.users["agent"], actor=world.users["admin"], reason="left")
    link.refresh_from_db()
    assert link.revoked_at is not None
    row = AuditEvent.objects.filter(code="share_link.revoked").latest("pk")
    assert row.details == {"link": link.pk, "reason": "creator lost access"}
    _refused_and_nothing_stored(client, token, b"revoked")
    _pages_work(client, world)
