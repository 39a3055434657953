"""The subject access report: every number checked against the database (and Redis), what an
erasure by the real clock leaves, and a query count that does not grow with the conversations."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connection, transaction

from audit.hashing import subject_hash
from audit.models import AuditEvent
from conversations.live import state as live_state
from conversations.models import Block, Conversation, Message, ReviewGrant, ShareLink
from conversations.services import service_token_create, service_token_revoke
from retention import registry
from retention.access import render_md, subject_access_read
from retention.backups import backup_horizon
from retention.models import DeletionRequest, Receipt
from retention.services import deletion_request_submit, legal_hold_release
from retention.tasks import retention_tick
from tests.access.conftest import (
    CUSTOMER,
    REVIEW_STATEMENT,
    Subject,
    customer_exchange,
    make_subject,
)
from tests.console.conftest import REASONING_MARKER, ingest

pytestmark = pytest.mark.django_db


def _report(subject: Subject, **kw: Any) -> Any:
    return subject_access_read(
        user=subject.users["compliance"], customer=CUSTOMER, purpose="DSAR R-1", fmt="json", **kw
    )


def _store(report: Any, key: str) -> Any:
    return next(s for s in report.stores if s.key == key)


def test_every_number_of_the_report_is_the_databases(subject: Subject, settings: Any) -> None:
    # Keys of this test's own (another worker's live tests name the same conversation ids).
    settings.LIVE_KEY_PREFIX = f"test-access-{uuid.uuid4().hex}"
    service_token_create(name="chat-backend")
    revoked, _ = service_token_create(name="retired")
    service_token_revoke(token=revoked)
    ids = sorted(c.pk for c in subject.conversations)
    # Redis: a live stream's event log (two events) and an open exchange of the first one.
    r = live_state.client()
    r.rpush(live_state.key("log", ids[0]), "{}", "{}")
    r.sadd(live_state.key("open", ids[0]), "h1")
    try:
        report = _report(subject)
    finally:
        live_state.forget(ids[0])

    assert [c.id for c in report.conversations] == ids
    assert {c.queue for c in report.conversations} == {"billing", "shipping"}
    assert subject.other.pk not in {c.id for c in report.conversations}
    for entry in registry.ALL:
        assert _store(report, entry.label).rows == entry.rows(ids).count(), entry.label
    blocks = Block.objects.filter(conversation_id__in=ids)
    detail = _store(report, "conversations.block").detail
    for cls in ("visible", "audit", "never", "unknown"):
        assert detail[cls] == blocks.filter(block_class=cls).count(), cls
    assert detail["never"] == 3
    kept: dict[str, int] = {}
    dropped = 0
    for fields in blocks.filter(block_class="audit").values_list("fields", flat=True):
        for entry_ in fields.get("kept", []):
            kept[entry_["class"]] = kept.get(entry_["class"], 0) + 1
        dropped += len(fields.get("dropped", []))
    classes = _store(report, "conversations.block").classes
    assert {k: v for k, v in classes.items() if v and k != "drop"} == kept
    assert classes["drop"] == dropped == 3  # internal_note, once per conversation
    ciphertext = sum(
        len(bytes(m))
        for m in Message.objects.filter(conversation_id__in=ids).values_list(
            "raw_ciphertext", flat=True
        )
    )
    assert _store(report, "conversations.message").detail["bytes"] == ciphertext
    search = _store(report, "search")
    assert search.rows == (
        blocks.filter(block_class="visible").exclude(text="").count()
        + blocks.filter(block_class="audit", fields__has_key="kept").count()
    )
    assert _store(report, "redis").detail == {
        "event_logs": 1,
        "events": 2,
        "open_exchanges": 1,
        "live_now": 0,
    }
    assert _store(report, "rollups").rows == 3  # one exchange each

    # Reasoning: one thinking block per conversation, measured, never its text.
    assert report.reasoning_held.never_blocks == 3
    assert report.reasoning_held.by_kind == {"raw": 3, "summary": 0, "encrypted": 0, "redacted": 0}
    assert report.reasoning_held.bytes_by_kind["raw"] == 3 * len(REASONING_MARKER.encode())

    # Who read it: the two exports, the review (with its purpose), the link's opening.
    exports = AuditEvent.objects.filter(
        code="conversation.viewed", conversation_id__in=ids, details__page="export"
    )
    assert exports.count() == 2
    assert _store(report, "exports").rows == 2
    reads = {(x.who, x.what): x.times for x in report.reads}
    assert reads == {
        ("agent", "conversation.viewed/export"): 2,
        ("reviewer", "review.read"): 1,
        (f"share-link:{subject.live_link}", "share_link.opened"): 1,
    }
    assert [(x.who, x.purpose, x.statement, x.reference) for x in report.reviews] == [
        ("reviewer", "complaint", REVIEW_STATEMENT, "T-88")
    ]
    named = AuditEvent.objects.filter(conversation_id__in=ids) | AuditEvent.objects.filter(
        subject_hash=subject_hash(CUSTOMER)
    )
    # The report's own row is written after it counted.
    assert _store(report, "audit").rows == named.exclude(pk=report.audit_id).count()

    # What left: two exports, a live and a revoked link (states and openings from their rows).
    left = {(x.kind, x.conversation_id, x.state, x.opened) for x in report.left}
    assert left == {
        ("export", ids[0], "md", 0),
        ("export", ids[1], "json", 0),
        ("share_link", ids[0], "live", 1),
        ("share_link", ids[1], "revoked", 0),
    }
    assert ShareLink.objects.filter(conversation_id__in=ids).count() == 2

    # Who could read it now.
    could = {(g.who, g.how) for g in report.could_read}
    assert ("admin", "admin role: every queue") in could
    assert ("agent", "queue billing") in could and ("shipper", "queue shipping") in could
    assert ("reviewer", "queue billing") in could
    assert not any(who == "stranger" for who, _ in could)
    assert (
        "service-token:chat-backend",
        "ingest token: replays every conversation verbatim",
    ) in could
    grant = ReviewGrant.objects.get(conversation_id=ids[0])
    assert ("reviewer", f"review grant on conversation {ids[0]} (complaint)") in could
    assert any(g.until == grant.expires_at for g in report.could_read)
    assert (
        "anyone holding the link",
        f"share link {subject.live_link} on conversation {ids[0]}",
    ) in could
    assert not any(str(subject.revoked_link) in how for _, how in could)

    # When it goes: held by the customer's hold, so no date and no backup horizon.
    assert [h.id for h in report.erasure.holds] == [subject.hold]
    assert all(p.held_by == [subject.hold] for p in report.erasure.planned)
    assert report.erasure.backup_horizon is None
    assert report.erasure.open_requests == [] and report.erasure.receipts == []

    # Audited: who, for which customer (keyed hash), the purpose.
    row = AuditEvent.objects.get(pk=report.audit_id)
    assert row.code == "subject_access.reported" and row.actor_label == "compliance"
    assert row.subject_hash == subject_hash(CUSTOMER)
    assert row.details["purpose"] == "DSAR R-1" and row.details["reasoning"] is False


def test_one_conversation(subject: Subject) -> None:
    first = subject.conversations[0]
    report = _report(subject, conversation=first.external_id)
    assert [c.id for c in report.conversations] == [first.pk]
    assert (
        _store(report, "conversations.message").rows
        == Message.objects.filter(conversation=first).count()
    )
    assert AuditEvent.objects.get(pk=report.audit_id).conversation_id == first.pk


def test_after_the_clocks_erasure_only_the_receipt_and_tombstones_remain(
    subject: Subject,
) -> None:
    ids = [c.pk for c in subject.conversations]
    with transaction.atomic():
        request = deletion_request_submit(customer=CUSTOMER, reason="erasure request E-1")
    retention_tick.run()
    request.refresh_from_db()
    assert request.status == "blocked"
    during = _report(subject)
    assert [q.id for q in during.erasure.open_requests] == [request.pk]
    assert during.erasure.open_requests[0].blocked_reason == "litigation L-3"

    legal_hold_release(hold=subject.hold, reason="case closed")
    retention_tick.run()
    request.refresh_from_db()
    assert request.status == "completed"
    assert not Conversation.objects.filter(pk__in=ids).exists()

    after = _report(subject)
    assert after.conversations == []
    for entry in registry.ALL:
        assert _store(after, entry.label).rows == 0, entry.label
    for key in ("search", "redis", "rollups"):
        assert _store(after, key).rows == 0, key
    assert after.reasoning_held.never_blocks == 0
    assert sum(after.reasoning_held.by_kind.values()) == 0
    # Copies made before stay where they went: the exports are still listed; no link is left.
    assert {(x.kind, x.state) for x in after.left} == {("export", "md"), ("export", "json")}
    assert after.could_read == []
    receipt = Receipt.objects.get(request=request)
    assert [(x.request, x.conversations, x.keys_destroyed) for x in after.erasure.receipts] == [
        (request.pk, 3, 3)
    ]
    assert after.erasure.receipts[0].backup_horizon == receipt.backup_horizon
    assert receipt.backup_horizon == backup_horizon(receipt.issued_at)
    assert after.erasure.backup_horizon == receipt.backup_horizon
    assert after.erasure.tombstones["customer"] == 1
    assert after.erasure.open_requests == []
    # The log still says who read it (internal ids and keyed hashes outlive the erasure); the
    # exports made before are still out there.
    assert ("reviewer", "review.read") in {(x.who, x.what) for x in after.reads}
    assert _store(after, "exports").rows == 2
    assert DeletionRequest.objects.get(pk=request.pk).subject == ""
    text = render_md(after)
    assert "Conversations held: 0" in text
    assert (
        f"Backups may restore it until: {receipt.backup_horizon.isoformat(timespec='seconds')}"
        in text
    )


# One per table of the retention registry among them (review access requests and their
# notifications included).
QUERIES = 37


def _fresh_report(subject: Subject) -> Any:
    # A user as a request loads it: their groups not read yet (one query of the count).
    user = type(subject.users["compliance"]).objects.get(username="compliance")
    return lambda: subject_access_read(user=user, customer=CUSTOMER, purpose="q", fmt="json")


def test_the_query_count_does_not_grow_with_the_conversations(
    django_assert_num_queries: Any,
) -> None:
    subject = make_subject()
    read = _fresh_report(subject)
    with django_assert_num_queries(QUERIES, connection=connection):
        assert len(read().conversations) == 3
    for i in range(6):  # more conversations of the same customer, in both queues
        ingest(customer_exchange(f"s-more-{i}", "billing" if i % 2 else "shipping"))
    read = _fresh_report(subject)
    with django_assert_num_queries(QUERIES, connection=connection):
        assert len(read().conversations) == 9
