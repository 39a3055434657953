"""The one erase path, tombstones and the 410 for late exchanges."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from guardian.shortcuts import assign_perm
from rest_framework.test import APIClient

from audit.models import AuditEvent
from conversations.ingest.body import exchange_input
from conversations.ingest.parse import exchange_parse
from conversations.ingest.pipeline import ingest_batch
from conversations.keystore.keys import KeyDestroyed, data_key_for
from conversations.keystore.routers import KEYS_DB
from conversations.models import Conversation, DataKey, ReviewGrant
from conversations.services import conversation_record_event
from retention.models import RetentionClass, Tombstone
from retention.services import conversation_erase, deletion_request_submit, retention_tick
from tests.conftest import post_json, table_counts
from tests.factories import EXCHANGES_URL as URL
from tests.factories import ExchangeBodyFactory, post_exchange

pytestmark = pytest.mark.django_db


def _populate(api: APIClient, conversation: str, customer: str, marker: str) -> Conversation:
    post_exchange(api, conversation=conversation, customer=customer, text=marker)
    body = ExchangeBodyFactory(conversation=conversation, customer=customer, text=marker + "-2")
    response = post_json(api, URL, body, HTTP_IDEMPOTENCY_KEY=f"key-{conversation}")
    assert response.status_code == 201
    row = Conversation.objects.get(external_id=conversation)
    conversation_record_event(conversation=row, type="rated", at=timezone.now(), value=5)
    reviewer, _ = User.objects.get_or_create(username="reviewer")
    assign_perm("conversations.review_reasoning", reviewer, row)
    ReviewGrant.objects.create(
        reviewer=reviewer,
        conversation=row,
        purpose="complaint",
        reference="T-1",
        expires_at=timezone.now() + timedelta(days=1),
    )
    RetentionClass.objects.create(conversation_id=row.pk, days=30)
    return row


def test_erase_removes_every_row_of_the_conversation_and_nothing_else(api: APIClient) -> None:
    gone = _populate(api, "conv-gone", "cus-gone", "MARK-GONE")
    kept = _populate(api, "conv-kept", "cus-kept", "MARK-KEPT")
    before = table_counts()

    counts, external_id = conversation_erase(gone.pk)

    assert external_id == "conv-gone"
    after = table_counts()
    removed = {t: before[t] - after[t] for t in before if before[t] != after[t]}
    # Two exchanges, each a first question and its answer: the second is a branch (the customer
    # edited message 1), and erasure takes both branches.
    expected = {
        "default.conversations_block": 4,
        "default.conversations_message": 4,
        "default.conversations_exchange": 2,
        "default.conversations_conversationevent": 1,
        "default.conversations_idempotencykey": 1,
        "default.conversations_reviewgrant": 1,
        "default.conversations_conversationuserobjectpermission": 1,
        "default.retention_retentionclass": 1,
        "default.conversations_conversation": 1,
        "keys.conversations_datakey": 1,
        "default.retention_tombstone": -1,
    }
    assert removed == expected
    reported = {
        f"{'keys' if s == 'keys' else 'default'}.{label}": n
        for s, per in counts.items()
        for label, n in per.items()
    }
    assert reported["keys.conversations.datakey"] == 1
    assert reported["default.conversations.message"] == 4
    with pytest.raises(KeyDestroyed):
        data_key_for(gone.pk)
    # The other conversation is whole.
    assert Conversation.objects.filter(pk=kept.pk, message_count=4).exists()
    assert DataKey.objects.using(KEYS_DB).filter(conversation_id=kept.pk).exists()
    assert RetentionClass.objects.filter(conversation_id=kept.pk).exists()
    # Erasing again erases nothing.
    again, external_id = conversation_erase(gone.pk)
    assert external_id is None
    assert again["main"] == {}
    assert again["keys"] == {}


def test_an_erased_conversation_is_404_and_a_late_exchange_410(api: APIClient) -> None:
    row = _populate(api, "conv-late", "cus-late", "MARK-LATE")
    conversation_erase(row.pk)
    assert api.get("/api/v1/conversations/conv-late/messages").status_code == 404
    before = table_counts()

    response = post_json(
        api,
        URL,
        ExchangeBodyFactory(conversation="conv-late", customer="cus-other", text="MARK-AGAIN"),
    )

    assert response.status_code == 410
    assert response.json() == {
        "error": "gone",
        "detail": "this conversation was deleted; exchanges for it are not stored",
        "field": "conversation",
        "at": None,
    }
    after = table_counts()
    changed = {t for t in before if before[t] != after[t]}
    assert changed == {"default.audit_auditevent"}  # the refusal's audit row, nothing stored
    tombstone = Tombstone.objects.get(kind="conversation")
    assert tombstone.refused_count == 1
    event = AuditEvent.objects.filter(code="exchange.refused_tombstoned").get()
    assert event.details["tombstone"] == tombstone.pk
    assert "conv-late" not in str(event.details)


def test_an_erased_customer_is_refused_for_a_new_conversation(api: APIClient) -> None:
    _populate(api, "conv-c1", "cus-erased", "MARK-C1")
    deletion_request_submit(customer="cus-erased", reason="GDPR art. 17")
    retention_tick()
    assert not Conversation.objects.filter(customer_external_id="cus-erased").exists()

    response = post_json(
        api,
        URL,
        ExchangeBodyFactory(conversation="conv-brand-new", customer="cus-erased", text="MARK-NEW"),
    )

    assert response.status_code == 410
    assert response.json()["field"] == "customer"
    assert not Conversation.objects.filter(external_id="conv-brand-new").exists()
    assert Tombstone.objects.get(kind="customer").refused_count == 1


def test_a_batch_rejects_the_refused_lines_and_stores_the_others(api: APIClient) -> None:
    row = _populate(api, "conv-batch-gone", "cus-b", "MARK-B")
    conversation_erase(row.pk)
    items = []
    for line, conversation in enumerate(["conv-batch-gone", "conv-batch-new"], start=1):
        data = exchange_input(
            ExchangeBodyFactory(conversation=conversation, customer="cus-b", text="MARK-X")
        )
        items.append((line, data, exchange_parse(data)))

    result = ingest_batch(items)

    assert [(line, exc.code) for line, exc in result.rejected] == [(1, "gone")]
    assert [s.line for s in result.stored] == [2]
    assert not Conversation.objects.filter(external_id="conv-batch-gone").exists()
    assert Conversation.objects.filter(external_id="conv-batch-new").exists()


def test_the_verification_scan_finds_what_is_left(api: APIClient, settings: Any) -> None:
    import redis

    from retention.services import verification_scan

    row = _populate(api, "conv-scan-[1]*", "cus-scan", "MARK-SCAN")
    found = verification_scan(conversation_ids=[row.pk], external_ids=[row.external_id])
    assert found["ok"] is False
    assert found["found"]["conversations.conversation"] == 1
    assert found["found"]["conversations.datakey"] == 1
    conversation_erase(row.pk)
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.set("stale:conv-scan-[1]*:page", b"x")  # the id as a literal, glob characters too
    client.set("stale:cus-scan", b"x")
    client.set("stale:conv-scan-[1]", b"x")  # not the id
    try:
        found = verification_scan(
            conversation_ids=[row.pk], external_ids=[row.external_id], subject="cus-scan"
        )
        assert found["found"] == {"redis": 2}
    finally:
        client.delete("stale:conv-scan-[1]*:page", "stale:cus-scan", "stale:conv-scan-[1]")
    assert verification_scan(conversation_ids=[row.pk], external_ids=[row.external_id])["ok"]
