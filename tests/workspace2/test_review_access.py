"""Asking for review access from the conversation page: a reviewer asks, an approver approves
(the grant is given) or denies; every step audited; nobody else sees or decides. The review page
shows the answer beside the reasoning, Markdown rendered."""

from __future__ import annotations

from typing import Any

import pytest

from audit.models import AuditEvent
from conversations.models import ReviewAccessRequest, ReviewGrant
from conversations.reviews import review_grant_live

pytestmark = pytest.mark.django_db

ASK = {"purpose": "complaint", "reference": "ZD-77", "days": "3"}


def test_a_reviewer_asks_and_an_admin_approves(client: Any, world: Any) -> None:
    pk = world.billing.pk
    reviewer, admin = world.users["reviewer"], world.users["admin"]
    client.force_login(reviewer)
    page = client.get(f"/conversations/{pk}/").content.decode()
    assert "Ask for review access" in page
    r = client.post(f"/conversations/{pk}/review/ask/", ASK)
    assert r.status_code == 302
    row = ReviewAccessRequest.objects.get()
    assert (row.requester, row.status, row.days, row.reference) == (reviewer, "pending", 3, "ZD-77")
    asked = AuditEvent.objects.get(code="review_access.requested")
    assert asked.conversation_id == pk and asked.details["request"] == row.pk
    page = client.get(f"/conversations/{pk}/").content.decode()
    assert "<strong>waiting</strong> for compliance staff or an admin" in page
    client.post(f"/conversations/{pk}/review/ask/", ASK)  # asking again: the same request
    assert ReviewAccessRequest.objects.count() == 1
    # The reviewer may not decide, nor see the list.
    assert client.get("/review-requests/").status_code == 404
    assert (
        client.post(f"/review-requests/{row.pk}/decide/", {"decision": "approve"}).status_code
        == 404
    )
    client.force_login(admin)
    listing = client.get("/review-requests/").content.decode()
    assert world.billing.external_id in listing and "ZD-77" in listing
    assert (
        client.post(f"/review-requests/{row.pk}/decide/", {"decision": "maybe"}).status_code == 400
    )
    client.post(f"/review-requests/{row.pk}/decide/", {"decision": "approve"})
    row.refresh_from_db()
    assert row.status == "approved" and row.grant is not None and row.decided_by == admin
    assert review_grant_live(user=reviewer, conversation_id=pk) == row.grant
    decided = AuditEvent.objects.get(code="review_access.decided")
    assert decided.details["outcome"] == "approved" and decided.details["grant"] == row.grant.pk
    assert AuditEvent.objects.filter(code="grant.created").count() == 1
    # Decided once only.
    client.post(f"/review-requests/{row.pk}/decide/", {"decision": "deny"})
    row.refresh_from_db()
    assert row.status == "approved"
    client.force_login(reviewer)
    assert "Review reasoning" in client.get(f"/conversations/{pk}/").content.decode()


def test_a_denied_request_gives_nothing(client: Any, world: Any) -> None:
    pk = world.billing.pk
    client.force_login(world.users["reviewer"])
    client.post(f"/conversations/{pk}/review/ask/", ASK)
    row = ReviewAccessRequest.objects.get()
    client.force_login(world.users["admin"])
    client.post(f"/review-requests/{row.pk}/decide/", {"decision": "deny"})
    row.refresh_from_db()
    assert row.status == "denied" and row.grant is None
    assert not ReviewGrant.objects.exists()


@pytest.mark.parametrize(
    ("role", "body"),
    [
        ("agent", ASK),  # not a reviewer: refused, nothing stored
        ("reviewer", {**ASK, "days": "31"}),  # too long
        ("reviewer", {**ASK, "reference": ""}),
        ("reviewer", {**ASK, "purpose": "curiosity"}),
    ],
)
def test_bad_asks_store_nothing(client: Any, world: Any, role: str, body: dict[str, str]) -> None:
    client.force_login(world.users[role])
    r = client.post(f"/conversations/{world.billing.pk}/review/ask/", body)
    assert r.status_code == 302
    assert not ReviewAccessRequest.objects.exists()
    assert not AuditEvent.objects.filter(code="review_access.requested").exists()


def test_a_conversation_one_may_not_see_is_404(client: Any, world: Any) -> None:
    client.force_login(world.users["reviewer"])  # billing only
    r = client.post(f"/conversations/{world.shipping.pk}/review/ask/", ASK)
    assert r.status_code == 404
    assert not ReviewAccessRequest.objects.exists()


def test_anonymous_and_the_wrong_roles_get_nothing(client: Any, world: Any) -> None:
    pk = world.billing.pk
    assert client.post(f"/conversations/{pk}/review/ask/", ASK).status_code == 302  # to login
    assert client.get("/review-requests/").status_code == 302
    assert not ReviewAccessRequest.objects.exists()
    client.force_login(world.users["reviewer"])
    client.post(f"/conversations/{pk}/review/ask/", ASK)
    row = ReviewAccessRequest.objects.get()
    client.logout()
    assert (
        client.post(f"/review-requests/{row.pk}/decide/", {"decision": "approve"}).status_code
        == 302
    )
    # Compliance staff and admins decide (tests/review/test_review_requests.py); not these.
    for role in ("agent", "reviewer"):
        client.force_login(world.users[role])
        decide = client.post(f"/review-requests/{row.pk}/decide/", {"decision": "approve"})
        assert decide.status_code == 404, role
    client.force_login(world.users["admin"])
    missing = client.post("/review-requests/999999999/decide/", {"decision": "approve"})
    assert missing.status_code == 404
    row.refresh_from_db()
    assert row.status == "pending" and not ReviewGrant.objects.exists()
