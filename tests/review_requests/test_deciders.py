"""Who decides a review request, and how they hear of it (issue 35): compliance staff and admins
(never the asker) find the waiting requests from the menu with their count, decide them, are told
by e-mail and by the review requests webhook; the asker reads the answer on the conversation
page. The same outbox and delivery as the signals' alerts."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core import mail

from conversations.models import Notification, ReviewAccessRequest, ReviewGrant
from conversations.monitoring.delivery import notifications_deliver, signature
from conversations.reviews import review_grant_live
from tests.factories import UserFactory
from tests.monitoring.test_alerts import Hook

pytestmark = pytest.mark.django_db

ASK = {"purpose": "complaint", "reference": "ZD-35", "days": "2"}
MENU = re.compile(
    r'href="/review-requests/"[^>]*>Review requests<span hx-get="/review-requests/waiting"'
)


def _menu(client: Any) -> tuple[bool, int]:
    """Whether the header offers Review requests, and the count it shows (0 when none): htmx
    loads the count from its own URL into the entry (the browser test sees it drawn)."""
    page = client.get("/settings/").content.decode()
    entry = MENU.search(page)
    if entry is None:
        assert client.get("/review-requests/waiting").status_code == 404
        return False, 0
    badge = client.get("/review-requests/waiting").content.decode()
    count = re.fullmatch(r' <span class="badge" aria-label="(\d+) waiting">\1</span>', badge)
    assert count or badge == "<span></span>", badge
    return True, int(count.group(1)) if count else 0


def _ask(client: Any, world: Any) -> ReviewAccessRequest:
    client.force_login(world.users["reviewer"])
    assert client.post(f"/conversations/{world.billing.pk}/review/ask/", ASK).status_code == 302
    return ReviewAccessRequest.objects.get(status="pending")


def test_compliance_finds_the_request_from_the_menu_and_approves_it(
    client: Any, world: Any
) -> None:
    for role in ("compliance", "admin"):
        client.force_login(world.users[role])
        assert _menu(client) == (True, 0), role
    for role in ("agent", "reviewer"):
        client.force_login(world.users[role])
        assert _menu(client) == (False, 0), role
    row = _ask(client, world)
    for role in ("compliance", "admin"):
        client.force_login(world.users[role])
        assert _menu(client) == (True, 1), role
    client.force_login(world.users["compliance"])
    listing = client.get("/review-requests/")
    assert listing.status_code == 200  # it was a 404 for compliance staff
    html = listing.content.decode()
    assert "ZD-35" in html and world.billing.external_id in html
    assert "never the person who asked" in html
    r = client.post(f"/review-requests/{row.pk}/decide/", {"decision": "approve"})
    assert r.status_code == 302
    row.refresh_from_db()
    assert row.status == "approved" and row.decided_by == world.users["compliance"]
    assert row.grant is not None and row.grant.granted_by == world.users["compliance"]
    assert review_grant_live(user=world.users["reviewer"], conversation_id=world.billing.pk)
    assert _menu(client) == (True, 0)


def test_the_asker_never_decides_their_own_request(client: Any, world: Any) -> None:
    both = UserFactory(username="both", groups=["reviewer", "compliance"], queues=["billing"])
    client.force_login(both)
    client.post(f"/conversations/{world.billing.pk}/review/ask/", ASK)
    row = ReviewAccessRequest.objects.get()
    listing = client.get("/review-requests/").content.decode()
    assert "yours: someone else decides" in listing
    assert f"/review-requests/{row.pk}/decide/" not in listing
    client.post(f"/review-requests/{row.pk}/decide/", {"decision": "approve"})
    row.refresh_from_db()
    assert row.status == "pending" and not ReviewGrant.objects.exists()


def test_the_asker_reads_where_the_request_stands(client: Any, world: Any) -> None:
    row = _ask(client, world)
    page = client.get(f"/conversations/{world.billing.pk}/").content.decode()
    assert "<strong>waiting</strong> for compliance staff or an admin" in page
    client.force_login(world.users["compliance"])
    client.post(f"/review-requests/{row.pk}/decide/", {"decision": "deny"})
    client.force_login(world.users["reviewer"])
    page = client.get(f"/conversations/{world.billing.pk}/").content.decode()
    assert "was <strong>denied</strong> by compliance" in page
    assert "Ask for review access" in page  # and may ask again


def test_the_deciders_are_told_by_e_mail_and_webhook(
    client: Any, world: Any, settings: Any
) -> None:
    hook = Hook()
    try:
        settings.NOTIFY_ALLOWED_HOSTS = ["127.0.0.1"]
        settings.REVIEW_REQUESTS_WEBHOOK_URL = hook.url
        settings.SIGNALS_WEBHOOK_SECRET = "review-secret"
        world.users["compliance"].email = "legal@example.com"
        world.users["compliance"].save()
        world.users["admin"].email = "boss@example.com"
        world.users["admin"].save()
        world.users["reviewer"].email = "asker@example.com"  # the asker: not told
        world.users["reviewer"].save()
        world.users["agent"].email = "agent@example.com"  # not a decider: not told
        world.users["agent"].save()
        row = _ask(client, world)
        queued = Notification.objects.filter(review_request=row)
        assert sorted(queued.values_list("channel", "target")) == [
            ("email", "boss@example.com"),
            ("email", "legal@example.com"),
            ("webhook", hook.url),
        ]
        result = notifications_deliver(quick_retries=0)
        assert (result.delivered, result.failed) == (3, 0)
        assert sorted(m.to[0] for m in mail.outbox) == ["boss@example.com", "legal@example.com"]
        message = mail.outbox[0]
        assert "ZD-35" in message.subject and "/review-requests/" in message.body
        assert "reviewer" in message.body and world.billing.customer_external_id not in message.body
        [(headers, raw)] = hook.received
        assert headers["X-Signals-Signature"] == signature(
            "review-secret", headers["X-Signals-Timestamp"], raw
        )
        body = json.loads(raw)
        assert body["kind"] == "review_request" and body["request"] == row.pk
        assert body["reference"] == "ZD-35" and body["conversation"] == world.billing.pk
        assert not Notification.objects.filter(delivered_at__isnull=True).exists()
    finally:
        hook.server.shutdown()
        hook.server.server_close()


def test_a_notification_is_about_one_thing(world: Any) -> None:
    from django.db import IntegrityError, transaction
    from django.utils import timezone

    with pytest.raises(IntegrityError), transaction.atomic():
        Notification.objects.create(channel="email", target="x@example.com",
                                    next_attempt_at=timezone.now())  # fmt: skip


def test_the_deciders_are_compliance_staff_and_admins(world: Any) -> None:
    """The reviews room names the deciders itself (it sits below ``permissions``): the same
    people as ``is_compliance``, for every kind of user."""
    from conversations.permissions import is_compliance
    from conversations.reviews.access import may_decide
    from conversations.reviews.notify import review_deciders

    superuser = UserFactory(username="root", is_superuser=True)
    people = [u for u in world.users.values() if u is not None] + [superuser]
    assert [may_decide(u) for u in people] == [is_compliance(u) for u in people]
    assert set(review_deciders()) == {u for u in people if is_compliance(u)}


def _lose_billing(user: Any) -> None:
    from guardian.shortcuts import remove_perm

    from conversations.models import Queue
    from conversations.permissions import SEE_QUEUE

    remove_perm(SEE_QUEUE, user, Queue.objects.get(name="billing"))


def test_a_request_lapses_after_the_days_it_asked_for(client: Any, world: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    row = _ask(client, world)
    ReviewAccessRequest.objects.filter(pk=row.pk).update(
        requested_at=timezone.now() - timedelta(days=int(ASK["days"]), minutes=1)
    )
    page = client.get(f"/conversations/{world.billing.pk}/").content.decode()
    assert "was <strong>expired</strong>" in page and "Ask for review access" in page
    client.force_login(world.users["compliance"])
    assert _menu(client) == (True, 0)  # no longer waiting
    assert (
        f"/review-requests/{row.pk}/decide/" not in client.get("/review-requests/").content.decode()
    )
    refused = client.post(
        f"/review-requests/{row.pk}/decide/", {"decision": "approve"}, follow=True
    )
    assert "lapsed on" in refused.content.decode()
    assert not ReviewGrant.objects.exists()
    again = _ask(client, world)  # asking again: a new request, the old one recorded expired
    assert again.pk != row.pk
    row.refresh_from_db()
    assert row.status == "expired"


def test_approval_checks_the_asker_still_sees_the_conversation(client: Any, world: Any) -> None:
    row = _ask(client, world)
    _lose_billing(world.users["reviewer"])
    client.force_login(world.users["admin"])
    refused = client.post(
        f"/review-requests/{row.pk}/decide/", {"decision": "approve"}, follow=True
    )
    assert "no longer sees this conversation" in refused.content.decode()
    row.refresh_from_db()
    assert row.status == "pending" and not ReviewGrant.objects.exists()


def test_a_grant_reads_nothing_once_its_reviewer_lost_the_queue(client: Any, world: Any) -> None:
    row = _ask(client, world)
    client.force_login(world.users["compliance"])
    client.post(f"/review-requests/{row.pk}/decide/", {"decision": "approve"})
    reviewer = world.users["reviewer"]
    assert review_grant_live(user=reviewer, conversation_id=world.billing.pk) is not None
    _lose_billing(reviewer)
    assert review_grant_live(user=reviewer, conversation_id=world.billing.pk) is None
