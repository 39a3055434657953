"""The review page: purpose first, then the reasoning, for the live grantee only; audited in the
transaction of the read; no-store; the same 404 as a missing conversation for everyone else."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from audit.models import AuditEvent
from conversations.models import ReviewGrant
from conversations.reviews import content_hash, review_grant_revoke
from tests.review.conftest import HIDDEN, PII, PURPOSE, SHOWN, World, review_url

pytestmark = pytest.mark.django_db(databases="__all__")

MISSING = 999_999_999
ALL_MARKERS = {**SHOWN, **HIDDEN}


def login(client: Client, world: World, name: str) -> Client:
    client.force_login(world.users[name])
    return client


def markers_in(html: str) -> set[str]:
    return {name for name, marker in ALL_MARKERS.items() if marker in html}


def test_the_grantee_states_a_purpose_then_sees_the_reasoning(client: Client, world: World) -> None:
    grant = world.grant()
    conversation = world.conversations["anthropic"]
    login(client, world, "reviewer")

    form = client.get(review_url(conversation))
    assert form.status_code == 200
    page = form.content.decode()
    assert markers_in(page) == set()  # the form shows no reasoning
    assert "not testimony about the model's reasons" in page
    assert 'name="statement"' in page and 'method="post"' in page
    assert form["Cache-Control"] == "no-store, private"
    assert not AuditEvent.objects.filter(code="review.read").exists()

    shown = client.post(review_url(conversation), PURPOSE)
    assert shown.status_code == 200
    assert shown["Cache-Control"] == "no-store, private"
    html = shown.content.decode()
    assert SHOWN["thinking"] in html
    assert "redacted by provider" in html
    assert "omitted by provider" in html
    # PII inside the thinking went through the redaction pipeline.
    assert PII["email"] not in html and "[email]" in html
    assert PII["card"] not in html and "[card ••4242]" in html
    # Signatures and redacted data are never shown, not even here.
    assert markers_in(html) == {"thinking"}
    assert "generated text" in html.lower()

    event = AuditEvent.objects.get(code="review.read")
    assert event.actor_id == world.users["reviewer"].pk
    assert event.conversation_id == conversation.pk
    exchange_ids = list(conversation.exchanges.values_list("pk", flat=True))
    assert event.details["exchanges"] == exchange_ids
    assert event.details["grant"] == grant.pk
    assert event.details["reference"] == PURPOSE["reference"]
    assert event.details["purpose"] == {
        "category": PURPOSE["purpose"],
        "statement": PURPOSE["statement"],
    }
    assert len(event.details["content_hash"]) == 64
    assert f"entry #{event.pk}" in html
    assert markers_in(str(event.details)) == set()


@pytest.mark.parametrize(
    ("conversation", "expected", "notes"),
    [
        ("openai", {"oai_summary", "oai_content"}, []),
        ("chat", {"chat"}, []),
        ("aisdk", {"ai_sdk"}, ["redacted by provider"]),
    ],
)
def test_each_format_shows_its_reasoning(
    client: Client, world: World, conversation: str, expected: set[str], notes: list[str]
) -> None:
    world.grant(conversation=conversation)
    login(client, world, "reviewer")
    html = client.post(review_url(world.conversations[conversation]), PURPOSE).content.decode()
    assert markers_in(html) == expected
    for note in notes:
        assert note in html
    if conversation == "openai":
        assert PII["phone"] not in html and "[phone" in html


def test_without_a_key_a_missing_summary_is_explained(client: Client, world: World) -> None:
    world.grant(conversation="fetch")
    login(client, world, "reviewer")
    html = client.post(review_url(world.conversations["fetch"]), PURPOSE).content.decode()
    assert "no summary returned by the provider" in html
    assert "OPENAI_API_KEY" in html
    assert markers_in(html) == set()


def test_the_purpose_is_asked_every_time(client: Client, world: World) -> None:
    world.grant()
    login(client, world, "reviewer")
    url = review_url(world.conversations["anthropic"])
    for missing in ("purpose", "reference", "statement"):
        data = {k: v for k, v in PURPOSE.items() if k != missing}
        response = client.post(url, data)
        assert response.status_code == 400, missing
        assert markers_in(response.content.decode()) == set()
    too_short = client.post(url, {**PURPOSE, "statement": "because"})
    assert too_short.status_code == 400
    assert response["Cache-Control"] == "no-store, private"
    # A GET never shows reasoning, whatever its query says.
    query = client.get(url, PURPOSE)
    assert markers_in(query.content.decode()) == set()
    assert not AuditEvent.objects.filter(code="review.read").exists()
    # Two reads, two purposes, two audit rows.
    client.post(url, PURPOSE)
    client.post(url, {**PURPOSE, "statement": "Second look after the customer replied."})
    statements = [
        e.details["purpose"]["statement"]
        for e in AuditEvent.objects.filter(code="review.read").order_by("id")
    ]
    assert statements == [PURPOSE["statement"], "Second look after the customer replied."]


def test_the_stated_purpose_is_redacted_in_the_audit_log(client: Client, world: World) -> None:
    world.grant()
    login(client, world, "reviewer")
    statement = f"Customer {PII['email']} complained by phone"
    client.post(review_url(world.conversations["anthropic"]), {**PURPOSE, "statement": statement})
    details = AuditEvent.objects.get(code="review.read").details
    assert PII["email"] not in str(details)
    assert details["purpose"]["statement"] == "Customer [email] complained by phone"


def _same_as_missing(client: Client, url: str, missing_url: str) -> None:
    for method in ("get", "post"):
        forbidden = getattr(client, method)(url, PURPOSE)
        missing = getattr(client, method)(missing_url, PURPOSE)
        assert forbidden.status_code == missing.status_code, method
        assert forbidden.content == missing.content, method
        assert markers_in(forbidden.content.decode()) == set()


@pytest.mark.parametrize(
    "who",
    [
        "anonymous",
        "agent",
        "other_reviewer",
        "compliance",
        "admin",
        "superuser",
        "expired",
        "revoked",
        "inactive",
    ],
)
def test_everyone_else_gets_the_404_of_a_missing_conversation(
    client: Client, world: World, who: str
) -> None:
    conversation = world.conversations["anthropic"]
    grant = world.grant()  # the reviewer's grant: never anyone else's key
    world.grant("inactive")
    user = who
    if who == "expired":
        user = "reviewer"
        ReviewGrant.objects.filter(pk=grant.pk).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
    elif who == "revoked":
        user = "reviewer"
        review_grant_revoke(grant_id=grant.pk, actor=world.users["admin"])
    elif who == "inactive":
        world.users["inactive"].is_active = False
        world.users["inactive"].save()
    if user != "anonymous":
        client.force_login(world.users[user])
    expected = 302 if who in ("anonymous", "inactive") else 404  # no session: the login page
    response = client.get(review_url(conversation))
    assert response.status_code == expected
    _same_as_missing(client, review_url(conversation), review_url(MISSING))
    assert not AuditEvent.objects.filter(code="review.read").exists()
    # The grantee, for contrast: the same URL works (so the 404s above are about the user).
    if who not in ("expired", "revoked"):
        login(client, world, "reviewer")
        assert client.post(review_url(conversation), PURPOSE).status_code == 200


def test_a_grant_covers_its_conversation_only(client: Client, world: World) -> None:
    world.grant(conversation="anthropic")
    login(client, world, "reviewer")
    _same_as_missing(client, review_url(world.conversations["openai"]), review_url(MISSING))


def test_a_grant_expiring_between_form_and_read_shows_nothing(client: Client, world: World) -> None:
    grant = world.grant()
    login(client, world, "reviewer")
    url = review_url(world.conversations["anthropic"])
    assert client.get(url).status_code == 200
    ReviewGrant.objects.filter(pk=grant.pk).update(expires_at=timezone.now())
    response = client.post(url, PURPOSE)
    assert response.status_code == 404
    assert markers_in(response.content.decode()) == set()


def test_the_conversation_page_links_the_review_for_live_grantees_only(
    client: Client, world: World
) -> None:
    conversation = world.conversations["anthropic"]
    detail = f"/conversations/{conversation.pk}/"
    link = f'href="{review_url(conversation)}"'
    for name in ("reviewer", "other_reviewer", "agent", "admin"):
        login(client, world, name)
        assert link not in client.get(detail).content.decode(), name
    grant = world.grant()
    login(client, world, "reviewer")
    assert link in client.get(detail).content.decode()
    for name in ("other_reviewer", "agent", "admin"):
        login(client, world, name)
        assert link not in client.get(detail).content.decode(), name
    review_grant_revoke(grant_id=grant.pk)
    login(client, world, "reviewer")
    assert link not in client.get(detail).content.decode()


def test_with_the_audit_insert_failing_nothing_is_shown(
    client: Client, world: World, caplog: Any
) -> None:
    world.grant()
    login(client, world, "reviewer")
    with connection.cursor() as cursor:
        cursor.execute(
            """
            CREATE FUNCTION test_refuse_review_read() RETURNS trigger AS $$
            BEGIN
                IF NEW.code = 'review.read' THEN
                    RAISE EXCEPTION 'audit insert refused by the test';
                END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql;
            CREATE TRIGGER test_refuse_review_read BEFORE INSERT ON audit_auditevent
                FOR EACH ROW EXECUTE FUNCTION test_refuse_review_read();
            """
        )
    response = client.post(review_url(world.conversations["anthropic"]), PURPOSE)
    assert response.status_code == 503
    html = response.content.decode()
    assert markers_in(html) == set()
    assert "could not be recorded in the audit log" in html
    assert response["Cache-Control"] == "no-store, private"
    assert not AuditEvent.objects.filter(code="review.read").exists()
    assert any("audit row could not be written" in r.getMessage() for r in caplog.records)
    assert not markers_in(caplog.text)


def test_the_content_hash_is_of_what_was_shown(client: Client, world: World) -> None:
    world.grant(conversation="openai")
    login(client, world, "reviewer")
    response = client.post(review_url(world.conversations["openai"]), PURPOSE)
    review = response.context["review"]
    event = AuditEvent.objects.get(code="review.read")
    assert event.details["content_hash"] == review.content_hash == content_hash(review.exchanges)
    texts = [t.text for e in review.exchanges for t in e.traces]
    assert any(SHOWN["oai_summary"] in t for t in texts)
    # A different text hashes differently: the hash pins the content.
    first = review.exchanges[0]
    altered = [type(first)(**{**first.__dict__, "notice": "x"})]
    assert content_hash(altered) != review.content_hash


def test_nothing_of_the_review_is_kept_in_the_session(client: Client, world: World) -> None:
    world.grant()
    login(client, world, "reviewer")
    client.post(review_url(world.conversations["anthropic"]), PURPOSE)
    session = client.session
    stored = dict(session.items())
    # Besides the login, only the user's chosen time zone (console/preferences.py: "" or a zone
    # name, read once per session) and when the session last slid (console/hardening.py: a
    # number), nothing of the review.
    assert set(stored) <= {
        "_auth_user_id",
        "_auth_user_backend",
        "_auth_user_hash",
        "console_time_zone",
        "_renewed_at",
    }
    assert isinstance(stored.get("_renewed_at", 0), int)
    assert stored.get("console_time_zone", "") in ("", "UTC")
