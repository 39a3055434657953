"""Limits: a per-user rate limit on reviews (counted from the audit log) and an alert row for
compliance when one user reviews unusually many conversations in a day."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

import audit
from audit.models import AuditEvent
from conversations.models import ReviewAlert
from conversations.reviews import review_grant_live
from tests.review.conftest import PURPOSE, SHOWN, World, review_url

pytestmark = pytest.mark.django_db(databases="__all__")


def test_the_rate_limit_refuses_the_review_after_the_limit(
    client: Client, world: World, settings: Any
) -> None:
    settings.REVIEW_RATE_LIMIT = 3
    world.grant()
    client.force_login(world.users["reviewer"])
    url = review_url(world.conversations["anthropic"])
    for _ in range(3):
        assert client.post(url, PURPOSE).status_code == 200
    refused = client.post(url, PURPOSE)
    assert refused.status_code == 429
    html = refused.content.decode()
    assert "3 reasoning reviews in the last hour; the limit is 3" in html
    assert SHOWN["thinking"] not in html
    assert refused["Cache-Control"] == "no-store, private"
    assert AuditEvent.objects.filter(code="review.read").count() == 3


def test_the_limit_is_per_user(client: Client, world: World, settings: Any) -> None:
    settings.REVIEW_RATE_LIMIT = 1
    world.grant()
    world.grant("other_reviewer")
    url = review_url(world.conversations["anthropic"])
    for name in ("reviewer", "other_reviewer"):
        client.force_login(world.users[name])
        assert client.post(url, PURPOSE).status_code == 200, name
        assert client.post(url, PURPOSE).status_code == 429, name


def test_reviews_older_than_an_hour_do_not_count(
    client: Client, world: World, settings: Any, monkeypatch: Any
) -> None:
    settings.REVIEW_RATE_LIMIT = 1
    world.grant(expires_in=timedelta(days=2))
    client.force_login(world.users["reviewer"])
    url = review_url(world.conversations["anthropic"])
    assert client.post(url, PURPOSE).status_code == 200
    assert client.post(url, PURPOSE).status_code == 429
    # An hour later: the clock moves, not the rows (the audit log refuses updates).
    real_now = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real_now() + timedelta(hours=1, minutes=1))
    assert client.post(url, PURPOSE).status_code == 200


def test_an_alert_row_when_one_user_reviews_many_conversations(
    client: Client, world: World, settings: Any, caplog: Any
) -> None:
    settings.REVIEW_ALERT_THRESHOLD = 2
    names = ["anthropic", "openai", "chat", "aisdk"]
    for name in names:
        world.grant(conversation=name)
    client.force_login(world.users["reviewer"])
    # The same conversation many times is one conversation.
    for _ in range(3):
        client.post(review_url(world.conversations["anthropic"]), PURPOSE)
    client.post(review_url(world.conversations["openai"]), PURPOSE)
    assert not ReviewAlert.objects.exists()
    client.post(review_url(world.conversations["chat"]), PURPOSE)
    alert = ReviewAlert.objects.get()
    assert (alert.reviewer, alert.conversations, alert.threshold) == (
        world.users["reviewer"],
        3,
        2,
    )
    assert alert.day == timezone.localdate()
    client.post(review_url(world.conversations["aisdk"]), PURPOSE)
    alert.refresh_from_db()
    assert alert.conversations == 4
    assert ReviewAlert.objects.count() == 1  # one row per user and day, kept up to date
    assert any("review alert" in r.getMessage() for r in caplog.records)
    # Another user's reviews are theirs.
    world.grant("other_reviewer")
    client.force_login(world.users["other_reviewer"])
    client.post(review_url(world.conversations["anthropic"]), PURPOSE)
    assert ReviewAlert.objects.count() == 1


def test_the_alert_shows_in_the_admin(client: Client, world: World, settings: Any) -> None:
    settings.REVIEW_ALERT_THRESHOLD = 0
    world.grant()
    client.force_login(world.users["reviewer"])
    client.post(review_url(world.conversations["anthropic"]), PURPOSE)
    assert ReviewAlert.objects.count() == 1
    client.force_login(world.users["admin"])
    page = client.get("/admin/conversations/reviewalert/").content.decode()
    assert "reviewer" in page and "1 review alert" in page


def test_other_audit_rows_do_not_count(client: Client, world: World, settings: Any) -> None:
    """The limit counts review.read rows of this user only."""
    settings.REVIEW_RATE_LIMIT = 1
    world.grant()
    from django.db import transaction

    with transaction.atomic():
        for _ in range(3):
            audit.record(
                "conversation.viewed",
                actor=world.users["reviewer"],
                conversation_id=world.conversations["anthropic"].pk,
                page="detail",
            )
    assert review_grant_live(
        user=world.users["reviewer"], conversation_id=world.conversations["anthropic"].pk
    )
    client.force_login(world.users["reviewer"])
    assert client.post(review_url(world.conversations["anthropic"]), PURPOSE).status_code == 200
