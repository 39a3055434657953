"""Export, share links and work notes (conversations/sharing/): text only, through the one
projection, audited; links signed, hashed at rest, expiring, revocable, erased with their
conversation; work notes refused at save when they name a field a note may not show."""

from __future__ import annotations

import io
import json
import secrets
from datetime import timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from audit.models import AuditEvent
from conversations.models import FieldPolicy, ShareLink, WorkNote
from conversations.services import field_policy_save, reprojection_run
from conversations.sharing.links import share_link_create, share_link_revoke, token_sha256
from conversations.sharing.services import work_note_save
from retention.models import Receipt
from retention.services import deletion_request_submit, legal_hold_place, retention_tick
from tests.console.conftest import (
    DROPPED_MARKER,
    PII,
    REASONING_MARKER,
    SIGNATURE_MARKER,
    World,
    client_for,
)
from tests.factories import ConversationFactory, ExchangeBodyFactory

pytestmark = pytest.mark.django_db(databases="__all__")
MARKERS = [REASONING_MARKER, SIGNATURE_MARKER, DROPPED_MARKER]
FORMATS = ["md", "txt", "json"]


def _address() -> str:
    # Each test opens links from its own address: the rate limit's windows live in Redis.
    return f"10.{secrets.randbelow(250)}.{secrets.randbelow(250)}.{secrets.randbelow(250)}"


def assert_text_only(text: str) -> None:
    for marker in MARKERS:
        assert marker not in text
    for value in PII.values():
        assert value not in text


def share(world: World, client: Any, *, days: str = "") -> tuple[ShareLink, str]:
    agent = client_for(client, world, "agent")
    response = agent.post(f"/conversations/{world.billing.pk}/share/", {"days": days})
    assert response.status_code == 302  # POST, redirect, GET: a reload makes no second link
    response = agent.get(response["Location"])
    assert response.status_code == 200
    body = response.content.decode()
    start = body.index("/s/")
    token = body[start + 3 : body.index("/", start + 3)]
    link = ShareLink.objects.get(token_sha256=token_sha256(token))
    return link, token


# --- export ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_export_download_is_text_only_redacted_and_audited(
    client: Any, world: World, fmt: str
) -> None:
    agent = client_for(client, world, "agent")
    response = agent.get(f"/conversations/{world.billing.pk}/export.{fmt}")
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="conversation-{world.billing.pk}.{fmt}"'
    )
    assert response["Cache-Control"] == "no-store, private"
    text = response.content.decode()
    assert_text_only(text)
    headers = "\n".join(f"{k}: {v}" for k, v in response.items())
    assert_text_only(headers)
    assert "conv-billing" in text  # the backend's id
    assert "ORD-7654321" in text  # an identifier of the trail
    assert "Let me look up your order." in text
    assert "get_order" in text
    assert "internal_note" not in text  # a dropped field, not even named
    assert "reasoned" not in text  # no reasoning marker either
    assert "UTC" in text or "Europe" in text or "+00:00" in text
    if fmt == "json":
        body = json.loads(text)
        assert body["conversation"] == "conv-billing"
        call = body["turns"][-1]["tool_calls"][0]
        assert call["tool"] == "get_order"
        # Each field says which side of the call it was on (issue 25).
        assert call["fields"] == [{"label": "order id", "value": "ORD-7654321", "side": "input"}]
        assert [t["role"] for t in body["turns"]] == ["Customer", "Assistant"] * 2
    else:
        assert "order id ORD-7654321 (input)" in text
    event = AuditEvent.objects.filter(code="conversation.viewed").latest("id")
    assert event.details == {"page": "export", "format": fmt}
    assert event.actor_label == "agent"
    assert event.conversation_id == world.billing.pk


def test_export_is_404_for_others_and_bad_formats(client: Any, world: World) -> None:
    before = AuditEvent.objects.count()
    other = client_for(client, world, "other_agent")
    assert other.get(f"/conversations/{world.billing.pk}/export.md").status_code == 404
    agent = client_for(client, world, "agent")
    assert agent.get(f"/conversations/{world.billing.pk}/export.pdf").status_code == 404
    assert agent.get("/conversations/999999/export.md").status_code == 404
    assert AuditEvent.objects.count() == before
    client.logout()
    assert client.get(f"/conversations/{world.billing.pk}/export.md").status_code == 302


@pytest.mark.parametrize("fmt", FORMATS)
def test_export_command_every_format(world: World, fmt: str) -> None:
    out = io.StringIO()
    call_command("export_conversation", "conv-billing", "--format", fmt, "--zone", "Asia/Tokyo",
                 stdout=out)  # fmt: skip
    text = out.getvalue()
    assert_text_only(text)
    assert "conv-billing" in text and "ORD-7654321" in text
    assert "Asia/Tokyo" in text and "+09:00" in text
    event = AuditEvent.objects.filter(code="conversation.viewed").latest("id")
    assert event.details == {"page": "export", "format": fmt}
    assert event.actor_label == "system"
    by_pk = io.StringIO()
    call_command("export_conversation", str(world.billing.pk), "--format", fmt, stdout=by_pk)
    assert "conv-billing" in by_pk.getvalue()


def test_export_command_refuses_unknown_conversation(world: World) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no conversation"):
        call_command("export_conversation", "conv-nope", stdout=io.StringIO())


# --- share links -------------------------------------------------------------------------------


def test_share_link_opens_without_login_text_only_and_audited(client: Any, world: World) -> None:
    link, token = share(world, client)
    assert token not in link.token_sha256 and len(link.token_sha256) == 64
    assert link.expires_at - link.created_at == timedelta(days=7)
    created = AuditEvent.objects.filter(code="share_link.created").latest("id")
    assert created.details["link"] == link.pk and created.details["days"] == 7
    client.logout()
    response = client.get(f"/s/{token}/", REMOTE_ADDR=_address())
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store, private"
    assert "noindex" in response["X-Robots-Tag"]
    assert response["Referrer-Policy"] == "no-referrer"
    body = response.content.decode()
    assert '<meta name="robots" content="noindex' in body
    assert_text_only(body)
    assert "ORD-7654321" in body and "Let me look up your order." in body
    opened = AuditEvent.objects.filter(code="share_link.opened").latest("id")
    assert opened.actor_label == f"share-link:{link.pk}"
    assert opened.actor_id is None
    assert opened.details == {"link": link.pk, "outcome": "shown"}
    link.refresh_from_db()
    assert link.opened_count == 1


def test_share_link_shows_only_messages_up_to_the_moment_of_sharing(
    client: Any, world: World
) -> None:
    first = ExchangeBodyFactory(conversation="conv-later", text="BEFORE-SHARING")
    conversation = ConversationFactory(body=first)
    agent = client_for(client, world, "agent")
    _, token = share_link_create(actor=world.users["agent"], conversation_id=conversation.pk)
    history = [
        {"role": "user", "content": "question BEFORE-SHARING"},
        {"role": "assistant", "content": [{"type": "text", "text": "answer BEFORE-SHARING"}]},
    ]
    ConversationFactory(
        body=ExchangeBodyFactory(conversation="conv-later", text="AFTER-SHARING", history=history)
    )
    assert "AFTER-SHARING" in agent.get(f"/conversations/{conversation.pk}/").content.decode()
    client.logout()
    body = client.get(f"/s/{token}/", REMOTE_ADDR=_address()).content.decode()
    assert "answer BEFORE-SHARING" in body
    assert "AFTER-SHARING" not in body


def test_share_page_follows_a_policy_change_no_copy_kept(client: Any, world: World) -> None:
    """The page is rendered at each opening: a field a new policy drops is gone from it."""
    _, token = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    client.logout()
    address = _address()
    assert "order id" in client.get(f"/s/{token}/", REMOTE_ADDR=address).content.decode()
    job = field_policy_save(
        policy=FieldPolicy(tool_name="get_order", side="input", path="$.order_id",
                           storage_class="drop")
    )  # fmt: skip
    reprojection_run(job_id=job.pk)
    body = client.get(f"/s/{token}/", REMOTE_ADDR=address).content.decode()
    assert "order id" not in body
    assert "get_order" in body  # the call is still there, its identifier is not


def test_share_days_default_and_bounds(client: Any, world: World) -> None:
    agent = world.users["agent"]
    link, _ = share_link_create(actor=agent, conversation_id=world.billing.pk, days=30)
    assert link.expires_at - link.created_at == timedelta(days=30)
    before = ShareLink.objects.count()
    c = client_for(client, world, "agent")
    for bad in ("31", "0", "-1", "seven"):
        response = c.post(f"/conversations/{world.billing.pk}/share/", {"days": bad})
        assert response.status_code == 302
    assert ShareLink.objects.count() == before
    page = c.get(f"/conversations/{world.billing.pk}/").content.decode()
    assert "days must be 1 to 30" in page


def test_share_is_404_for_who_may_not_read(client: Any, world: World) -> None:
    other = client_for(client, world, "other_agent")
    assert other.post(f"/conversations/{world.billing.pk}/share/", {}).status_code == 404
    assert not ShareLink.objects.exists()


def test_expired_revoked_and_guessed_links(client: Any, world: World) -> None:
    agent = world.users["agent"]
    expired, expired_token = share_link_create(actor=agent, conversation_id=world.billing.pk)
    revoked, revoked_token = share_link_create(actor=agent, conversation_id=world.billing.pk)
    ShareLink.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    c = client_for(client, world, "agent")
    assert c.post(f"/share-links/{revoked.pk}/revoke/").status_code == 302
    assert AuditEvent.objects.filter(code="share_link.revoked").latest("id").details == {
        "link": revoked.pk
    }
    client.logout()
    address = _address()
    assert client.get(f"/s/{expired_token}/", REMOTE_ADDR=address).status_code == 410
    assert client.get(f"/s/{revoked_token}/", REMOTE_ADDR=address).status_code == 410
    outcomes = list(
        AuditEvent.objects.filter(code="share_link.opened")
        .order_by("id")
        .values_list("details__outcome", flat=True)
    )
    assert outcomes == ["expired", "revoked"]
    before = AuditEvent.objects.count()
    guessed = secrets.token_urlsafe(43) + ":" + secrets.token_urlsafe(20)
    tampered = revoked_token[:-2] + ("AA" if not revoked_token.endswith("AA") else "BB")
    for token in (guessed, tampered, "x"):
        response = client.get(f"/s/{token}/", REMOTE_ADDR=address)
        assert response.status_code == 404
        assert response["X-Robots-Tag"].startswith("noindex")
    assert AuditEvent.objects.count() == before


def test_revoke_is_404_for_who_may_not_read(client: Any, world: World) -> None:
    link, _ = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    other = client_for(client, world, "other_agent")
    assert other.post(f"/share-links/{link.pk}/revoke/").status_code == 404
    link.refresh_from_db()
    assert link.revoked_at is None


def test_erased_conversation_link_is_410_and_the_receipt_counts_it(
    client: Any, world: World
) -> None:
    link, token = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    request = deletion_request_submit(customer=world.billing.customer_external_id, reason="t")
    retention_tick()
    assert not ShareLink.objects.filter(pk=link.pk).exists()
    receipt = Receipt.objects.get(request=request)
    assert receipt.counts["main"]["conversations.sharelink"] == 1
    client.logout()
    response = client.get(f"/s/{token}/", REMOTE_ADDR=_address())
    assert response.status_code == 410
    assert "deleted" in response.content.decode()
    event = AuditEvent.objects.filter(code="share_link.opened").latest("id")
    assert event.details == {"outcome": "erased"}


def test_a_legal_hold_does_not_extend_a_link(client: Any, world: World) -> None:
    link, token = share_link_create(
        actor=world.users["agent"], conversation_id=world.billing.pk, days=1
    )
    expires = link.expires_at
    legal_hold_place(scope="conversation", conversation_id=world.billing.pk, reason="regulator")
    link.refresh_from_db()
    assert link.expires_at == expires
    # A day passes: the hold keeps the conversation, not the link.
    ShareLink.objects.filter(pk=link.pk).update(
        created_at=link.created_at - timedelta(days=1), expires_at=expires - timedelta(days=1)
    )
    retention_tick()
    client.logout()
    assert client.get(f"/s/{token}/", REMOTE_ADDR=_address()).status_code == 410


def test_share_page_is_rate_limited(client: Any, world: World, settings: Any) -> None:
    settings.SHARE_RATE_LIMIT = 3
    _, token = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    client.logout()
    address = _address()
    codes = [client.get(f"/s/{token}/", REMOTE_ADDR=address).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429]
    assert AuditEvent.objects.filter(code="share_link.opened").count() == 3


def test_links_listed_on_the_conversation_page_and_for_compliance(
    client: Any, world: World
) -> None:
    link, _ = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    share_link_revoke(actor=world.users["agent"], link_id=link.pk)
    live, _ = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    page = client_for(client, world, "agent").get(f"/conversations/{world.billing.pk}/")
    text = page.content.decode()
    assert f"Link {live.pk} by agent" in text and f"Link {link.pk} by agent" in text
    assert "revoked" in text
    staff = client_for(client, world, "compliance")
    listing = staff.get("/compliance/share-links/")
    assert listing.status_code == 200
    rows = listing.content.decode()
    assert f'<td data-label="Link">{live.pk}</td>' in rows
    # Conversations by the backend's id and their queue, not by the console's number.
    assert f"<code>{world.billing.external_id}</code>" in rows
    assert f'<td data-label="Queue">{world.billing.queue}</td>' in rows
    assert AuditEvent.objects.filter(code="audit.viewed").latest("id").details == {
        "page": "share-links",
        "results": 2,
    }
    assert staff.post(f"/share-links/{live.pk}/revoke/", {"next": "compliance"}).status_code == 302
    assert client_for(client, world, "agent").get("/compliance/share-links/").status_code == 404


# --- work notes --------------------------------------------------------------------------------


def save_note(capture: Any, tool: str, template: str) -> None:
    with capture(execute=True):
        work_note_save(note=WorkNote(tool_name=tool, template=template))


def test_work_note_in_trail_export_and_share(
    client: Any, world: World, django_capture_on_commit_callbacks: Any
) -> None:
    save_note(django_capture_on_commit_callbacks, "get_order", "Looked up order {order_id}")
    assert AuditEvent.objects.filter(code="work_note.changed").latest("id").details["change"] == (
        "saved"
    )
    agent = client_for(client, world, "agent")
    page = agent.get(f"/conversations/{world.billing.pk}/").content.decode()
    assert "Looked up order ORD-7654321" in page
    for fmt in FORMATS:
        text = agent.get(f"/conversations/{world.billing.pk}/export.{fmt}").content.decode()
        assert "Looked up order ORD-7654321" in text
    _, token = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    client.logout()
    body = client.get(f"/s/{token}/", REMOTE_ADDR=_address()).content.decode()
    assert "Looked up order ORD-7654321" in body


def test_work_note_missing_value_reads_an_ellipsis(
    client: Any, world: World, django_capture_on_commit_callbacks: Any
) -> None:
    save_note(django_capture_on_commit_callbacks, "get_order", "Order {order_id}: {status}")
    agent = client_for(client, world, "agent")
    assert (
        "Order ORD-7654321: …" in agent.get(f"/conversations/{world.billing.pk}/").content.decode()
    )


@pytest.mark.parametrize(
    ("template", "field", "cls"),
    [
        ("Noted {internal_note}", "internal_note", "drop"),  # no policy: defaults to drop
        ("Card {card}", "card", "restricted"),
        ("Bad {order_id!r}", "order_id", None),
    ],
)
def test_work_note_naming_a_hidden_field_is_refused(
    world: World, template: str, field: str, cls: str | None
) -> None:
    field_policy_save(
        policy=FieldPolicy(tool_name="get_order", side="output", path="$.card",
                           storage_class="restricted")
    )  # fmt: skip
    with pytest.raises(ValidationError) as refused:
        work_note_save(note=WorkNote(tool_name="get_order", template=template))
    message = str(refused.value.message_dict["template"])
    assert f"{{{field}" in message
    if cls:
        assert cls in message
    assert not WorkNote.objects.exists()


def test_work_note_admin_refuses_with_the_field_named(client: Any, world: World) -> None:
    admin = client_for(client, world, "admin")
    response = admin.post(
        "/admin/conversations/worknote/add/",
        {"tool_name": "get_order", "template": "Wrote {internal_note}"},
    )
    assert response.status_code == 200
    assert "{internal_note} is a drop field of get_order" in response.content.decode()
    assert not WorkNote.objects.exists()
    response = admin.post(
        "/admin/conversations/worknote/add/",
        {"tool_name": "get_order", "template": "Looked up order {order_id}"},
    )
    assert response.status_code == 302
    assert WorkNote.objects.get().template == "Looked up order {order_id}"
    event = AuditEvent.objects.filter(code="work_note.changed").latest("id")
    assert event.actor_label == "admin"


def test_a_link_is_made_by_a_post_that_redirects_and_a_reload_makes_none(
    client: Any, world: World
) -> None:
    agent = client_for(client, world, "agent")
    made = agent.post(f"/conversations/{world.billing.pk}/share/", {"days": "3"})
    assert made.status_code == 302
    link = ShareLink.objects.get()
    assert made["Location"] == f"/conversations/{world.billing.pk}/share/{link.pk}/"
    first = agent.get(made["Location"]).content.decode()
    again = agent.get(made["Location"]).content.decode()  # the reload
    assert ShareLink.objects.count() == 1
    token = first[first.index("/s/") + 3 : first.index("/", first.index("/s/") + 3)]
    assert link.token_sha256 == token_sha256(token) and f"/s/{token}/" in again
    # Only its maker sees it; a revoked link is said to be so, its address gone.
    other = client_for(Client(), world, "admin")
    assert other.get(made["Location"]).status_code == 404
    assert client_for(Client(), world, "other_agent").get(made["Location"]).status_code == 404
    agent.post(f"/share-links/{link.pk}/revoke/")
    gone = agent.get(made["Location"]).content.decode()
    assert "<strong>revoked</strong>" in gone and "/s/" not in gone
