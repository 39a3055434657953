"""Review grants: the services, the live-grant check, the grant_review command and the admin;
every grant and revocation audited."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from guardian.shortcuts import assign_perm

from audit.models import AuditEvent
from conversations.management.commands.grant_review import parse_expiry
from conversations.models import ConversationUserObjectPermission, ReviewGrant
from conversations.reviews import (
    MAX_GRANT_DAYS,
    GrantRefused,
    review_grant_create,
    review_grant_live,
    review_grant_revoke,
)
from tests.review.conftest import PURPOSE, World, ingest, openai_body

pytestmark = pytest.mark.django_db(databases="__all__")


def live(world: World, user: str = "reviewer", conversation: str = "anthropic") -> Any:
    return review_grant_live(
        user=world.users[user], conversation_id=world.conversations[conversation].pk
    )


def perms_of(world: World, user: str = "reviewer") -> int:
    return ConversationUserObjectPermission.objects.filter(user=world.users[user]).count()


def test_a_grant_is_a_row_a_guardian_permission_and_an_audit_row(world: World) -> None:
    assert live(world) is None
    grant = world.grant()
    assert live(world) == grant
    conversation = world.conversations["anthropic"]
    # guardian itself sees the object permission, in the direct foreign-key table
    assert world.users["reviewer"].has_perm("conversations.review_reasoning", conversation)
    assert perms_of(world) == 1
    event = AuditEvent.objects.get(code="grant.created")
    assert event.actor_id == world.users["admin"].pk
    assert event.conversation_id == conversation.pk
    assert event.details == {
        "grant": grant.pk,
        "grantee": world.users["reviewer"].pk,
        "purpose": {"category": "complaint", "reference": "SUP-4711"},
        "expires_at": grant.expires_at.isoformat(),
    }


def test_the_checker_honours_expiry_which_guardian_does_not_know(world: World) -> None:
    grant = world.grant()
    ReviewGrant.objects.filter(pk=grant.pk).update(expires_at=timezone.now())
    # guardian still says yes: its permission has no expiry...
    conversation = world.conversations["anthropic"]
    assert world.users["reviewer"].has_perm("conversations.review_reasoning", conversation)
    # ...the checker does not.
    assert live(world) is None


def test_a_grant_row_without_the_permission_is_not_live(world: World) -> None:
    world.grant()
    ConversationUserObjectPermission.objects.all().delete()
    assert live(world) is None


def test_the_permission_without_a_grant_row_is_not_live(world: World) -> None:
    world.grant()  # registers the permission
    assign_perm(
        "conversations.review_reasoning",
        world.users["other_reviewer"],
        world.conversations["anthropic"],
    )
    assert live(world, "other_reviewer") is None


def test_a_superuser_gets_no_bypass(world: World) -> None:
    assert world.users["superuser"].has_perm(
        "conversations.review_reasoning", world.conversations["anthropic"]
    )
    assert live(world, "superuser") is None


def test_inactive_users_and_lost_roles_end_the_grant(world: World) -> None:
    world.grant()
    world.grant("inactive")
    assert live(world, "inactive") is not None
    world.users["inactive"].is_active = False
    world.users["inactive"].save()
    assert live(world, "inactive") is None
    world.users["reviewer"].groups.remove(Group.objects.get(name="reviewer"))
    assert live(world) is None


def test_revoking_ends_the_grant_and_its_permission(world: World) -> None:
    grant = world.grant()
    review_grant_revoke(grant_id=grant.pk, actor=world.users["admin"], reason="ticket closed")
    assert live(world) is None
    assert perms_of(world) == 0
    grant.refresh_from_db()
    assert grant.revoked_at is not None and grant.revoked_by == world.users["admin"]
    event = AuditEvent.objects.get(code="grant.revoked")
    assert event.actor_id == world.users["admin"].pk
    assert event.details == {
        "grant": grant.pk,
        "grantee": world.users["reviewer"].pk,
        "reason": "ticket closed",
    }
    with pytest.raises(GrantRefused, match="already revoked"):
        review_grant_revoke(grant_id=grant.pk)
    with pytest.raises(GrantRefused, match="no review grant"):
        review_grant_revoke(grant_id=grant.pk + 1000)


def test_revoking_one_of_two_live_grants_keeps_the_other(world: World) -> None:
    first = world.grant()
    second = world.grant(expires_in=timedelta(days=2))
    review_grant_revoke(grant_id=first.pk)
    assert live(world) == second
    assert perms_of(world) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reviewer": "agent"}, "member of the 'reviewer' group"),
        ({"reviewer": "inactive_now"}, "member of the 'reviewer' group"),
        ({"purpose": "curiosity"}, "unknown purpose"),
        ({"reference": " "}, "1 to 100"),
        ({"reference": "x" * 101}, "1 to 100"),
        ({"expires_in": timedelta(seconds=-1)}, "in the future"),
        ({"expires_in": timedelta(days=MAX_GRANT_DAYS, hours=1)}, f"{MAX_GRANT_DAYS} days"),
    ],
)
def test_grants_refused(world: World, change: dict[str, Any], message: str) -> None:
    reviewer = change.get("reviewer", "reviewer")
    if reviewer == "inactive_now":
        reviewer = "inactive"
        world.users["inactive"].is_active = False
        world.users["inactive"].save()
    with pytest.raises(GrantRefused, match=message):
        review_grant_create(
            reviewer=world.users[reviewer],
            conversation=world.conversations["anthropic"],
            purpose=change.get("purpose", "complaint"),
            reference=change.get("reference", "SUP-1"),
            expires_at=timezone.now() + change.get("expires_in", timedelta(days=1)),
        )
    assert not ReviewGrant.objects.exists()
    assert not AuditEvent.objects.filter(code="grant.created").exists()


def test_the_permission_is_recreated_where_a_flush_removed_it(world: World) -> None:
    Permission.objects.filter(codename="review_reasoning").delete()
    grant = world.grant()
    assert live(world) == grant
    permission = Permission.objects.get(codename="review_reasoning")
    assert permission.content_type.model == "conversation"


# --- the command ------------------------------------------------------------------------------


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("grant_review", *args, stdout=out)
    return out.getvalue()


def test_grant_review_by_number_and_by_external_id_then_revoke(world: World) -> None:
    conversation = world.conversations["anthropic"]
    out = run(
        "reviewer",
        str(conversation.pk),
        "--purpose",
        "incident",
        "--reference",
        "INC-9",
        "--expires",
        "7d",
        "--granted-by",
        "admin",
    )
    grant = ReviewGrant.objects.get()
    assert out.startswith(f"grant {grant.pk}: reviewer may review conversation #{conversation.pk}")
    assert (grant.purpose, grant.reference, grant.granted_by) == (
        "incident",
        "INC-9",
        world.users["admin"],
    )
    assert abs(grant.expires_at - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)
    assert live(world) == grant
    run("reviewer", "rv-openai", "--purpose", "legal", "--reference", "L-1", "--expires", "12h")
    assert live(world, conversation="openai") is not None
    assert run("--revoke", str(grant.pk), "--reason", "done") == f"grant {grant.pk} revoked\n"
    assert live(world) is None
    codes = list(
        AuditEvent.objects.filter(code__startswith="grant.")
        .order_by("id")
        .values_list("code", "actor_id")
    )
    assert codes == [
        ("grant.created", world.users["admin"].pk),
        ("grant.created", None),
        ("grant.revoked", None),
    ]


def test_grant_review_an_all_digit_external_id(world: World) -> None:
    body = openai_body(str(world.conversations["anthropic"].pk))
    digits = ingest(body)
    with pytest.raises(CommandError, match="is conversation #"):
        run(
            "reviewer",
            body["conversation"],
            "--purpose",
            "legal",
            "--reference",
            "L",
            "--expires",
            "1d",
        )
    # A number naming no conversation but an external id: that one.
    body = openai_body("77777777")
    named = ingest(body)
    run("reviewer", "77777777", "--purpose", "legal", "--reference", "L", "--expires", "1d")
    assert ReviewGrant.objects.get().conversation == named
    assert digits.pk != named.pk


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["nobody", "rv-chat", "--purpose", "legal", "--reference", "L", "--expires", "1d"],
            "no user named 'nobody'",
        ),
        (
            ["reviewer", "nope", "--purpose", "legal", "--reference", "L", "--expires", "1d"],
            "no conversation numbered or named 'nope'",
        ),
        (["reviewer", "rv-chat", "--reference", "L", "--expires", "1d"], "missing --purpose"),
        (["reviewer", "rv-chat", "--purpose", "legal", "--expires", "1d"], "missing --reference"),
        (["reviewer", "rv-chat", "--purpose", "legal", "--reference", "L"], "missing --expires"),
        (
            ["reviewer", "rv-chat", "--purpose", "legal", "--reference", "L", "--expires", "soon"],
            "--expires 'soon'",
        ),
        (
            ["agent", "rv-chat", "--purpose", "legal", "--reference", "L", "--expires", "1d"],
            "member of the 'reviewer' group",
        ),
        (
            ["reviewer", "rv-chat", "--purpose", "legal", "--reference", "L", "--expires", "90d"],
            "at most 30 days",
        ),
        (["--revoke", "12345"], "no review grant 12345"),
        (["reviewer", "--revoke", "1"], "--revoke takes a grant id only"),
    ],
)
def test_grant_review_errors(world: World, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert not ReviewGrant.objects.exists()


def test_parse_expiry_forms() -> None:
    now = timezone.now()
    assert parse_expiry("3d", now=now) == now + timedelta(days=3)
    assert parse_expiry("+5h", now=now) == now + timedelta(hours=5)
    aware = parse_expiry("2031-01-02T03:04:05+02:00")
    assert aware.isoformat() == "2031-01-02T03:04:05+02:00"
    day = parse_expiry("2031-01-02")
    assert (day.date().isoformat(), day.hour, timezone.is_aware(day)) == ("2031-01-03", 0, True)
    with pytest.raises(CommandError):
        parse_expiry("2031-13-45")


# --- the admin --------------------------------------------------------------------------------


def test_the_admin_grants_and_revokes_with_audit_rows(client: Client, world: World) -> None:
    client.force_login(world.users["admin"])
    conversation = world.conversations["chat"]
    add_page = client.get("/admin/conversations/reviewgrant/add/")
    assert add_page.status_code == 200 and 'name="reference"' in add_page.content.decode()
    expires = (timezone.localtime() + timedelta(days=3)).replace(microsecond=0)
    response = client.post(
        "/admin/conversations/reviewgrant/add/",
        {
            "reviewer": world.users["reviewer"].pk,
            "conversation": conversation.pk,
            "purpose": "safety",
            "reference": "SAFE-12",
            "expires_at_0": expires.strftime("%Y-%m-%d"),
            "expires_at_1": expires.strftime("%H:%M:%S"),
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    grant = ReviewGrant.objects.get()
    assert grant.granted_by == world.users["admin"]
    assert live(world, conversation="chat") == grant
    created = AuditEvent.objects.get(code="grant.created")
    assert created.actor_id == world.users["admin"].pk

    # The list shows it live; the change page edits nothing.
    listing = client.get("/admin/conversations/reviewgrant/").content.decode()
    assert "SAFE-12" in listing and "live" in listing
    change_page = client.get(f"/admin/conversations/reviewgrant/{grant.pk}/change/")
    assert change_page.status_code == 200 and 'name="reference"' not in change_page.content.decode()
    client.post(f"/admin/conversations/reviewgrant/{grant.pk}/change/", {"reference": "EDITED"})
    grant.refresh_from_db()
    assert grant.reference == "SAFE-12"

    response = client.post(
        "/admin/conversations/reviewgrant/",
        {"action": "revoke", "_selected_action": [grant.pk]},
    )
    assert response.status_code == 302
    assert live(world, conversation="chat") is None
    revoked = AuditEvent.objects.get(code="grant.revoked")
    assert (revoked.actor_id, revoked.details["reason"]) == (
        world.users["admin"].pk,
        "revoked in the admin",
    )
    assert client.get(f"/admin/conversations/reviewgrant/{grant.pk}/delete/").status_code == 403


def test_the_admin_refuses_a_grant_to_a_non_reviewer(client: Client, world: World) -> None:
    client.force_login(world.users["admin"])
    expires = timezone.localtime() + timedelta(days=3)
    response = client.post(
        "/admin/conversations/reviewgrant/add/",
        {
            "reviewer": world.users["agent"].pk,
            "conversation": world.conversations["chat"].pk,
            "purpose": "safety",
            "reference": "SAFE-12",
            "expires_at_0": expires.strftime("%Y-%m-%d"),
            "expires_at_1": expires.strftime("%H:%M:%S"),
        },
    )
    assert response.status_code == 200
    assert "member of the" in response.content.decode()
    assert not ReviewGrant.objects.exists()
    assert not AuditEvent.objects.filter(code="grant.created").exists()


def test_only_admins_reach_the_grant_admin(client: Client, world: World) -> None:
    for name in ("reviewer", "agent"):
        client.force_login(world.users[name])
        # Signed in without the admin role: the admin is a page that does not exist (404).
        assert client.get("/admin/conversations/reviewgrant/").status_code == 404
    client.force_login(world.users["admin"])
    assert client.get("/admin/conversations/reviewgrant/").status_code == 200
    assert client.get("/admin/conversations/reviewalert/").status_code == 200


def test_purpose_fixture_matches_the_grant_choices() -> None:
    assert PURPOSE["purpose"] in ReviewGrant.Purpose.values


def test_a_stale_user_object_does_not_outlive_deactivation(world: World) -> None:
    world.grant()
    from django.contrib.auth import get_user_model

    stale = get_user_model().objects.get(username="reviewer")
    get_user_model().objects.filter(pk=stale.pk).update(is_active=False)
    assert stale.is_active  # the object in hand still says so...
    assert (
        review_grant_live(user=stale, conversation_id=world.conversations["anthropic"].pk) is None
    )


# --- the compliance page ----------------------------------------------------------------------


def test_compliance_sees_and_revokes_grants(client: Client, world: World) -> None:
    grant = world.grant()
    ended = world.grant(conversation="openai")
    review_grant_revoke(grant_id=ended.pk, actor=world.users["admin"])
    client.force_login(world.users["compliance"])
    page = client.get("/audit/review-grants/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "SUP-4711" in html and "<strong>live</strong>" in html and "revoked by admin" in html
    assert html.count('name="grant"') == 1  # only the live grant can be revoked
    viewed = AuditEvent.objects.filter(code="audit.viewed", actor_id=world.users["compliance"].pk)
    assert viewed.get().details == {"page": "review-grants", "results": 2}

    response = client.post("/audit/review-grants/", {"grant": grant.pk, "reason": "no ticket"})
    assert response.status_code == 302
    assert live(world) is None
    revoked = AuditEvent.objects.filter(code="grant.revoked").order_by("-id").first()
    assert revoked is not None
    assert (revoked.actor_id, revoked.details["reason"]) == (
        world.users["compliance"].pk,
        "no ticket",
    )
    again = client.post("/audit/review-grants/", {"grant": grant.pk})
    assert again.status_code == 409
    assert client.post("/audit/review-grants/", {"grant": "x"}).status_code == 400


@pytest.mark.parametrize("who", ["agent", "reviewer", "other_reviewer"])
def test_only_compliance_and_admins_see_the_grants_page(
    client: Client, world: World, who: str
) -> None:
    grant = world.grant()
    client.force_login(world.users[who])
    assert client.get("/audit/review-grants/").status_code == 404
    assert client.post("/audit/review-grants/", {"grant": grant.pk}).status_code == 404
    assert live(world) == grant
    client.force_login(world.users["admin"])
    assert client.get("/audit/review-grants/").status_code == 200
