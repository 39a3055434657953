"""audit.record(): one row, in the caller's transaction, refusing what it must refuse."""

from __future__ import annotations

import hashlib
import hmac
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection, transaction

import audit
from audit.models import AuditEvent
from audit.registry import DetailsRefused, UnknownEventType
from audit.sealer import seal_pending

from .conftest import expected_event_hash, rows, seals

pytestmark = pytest.mark.django_db


class Boom(Exception):
    pass


def test_record_writes_exactly_one_unchained_row(alice: User) -> None:
    with transaction.atomic():
        first = audit.record("conversation.viewed", actor=alice, conversation_id=7, page="detail")
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_current_xact_id()::text::bigint")
            xid = cursor.fetchone()[0]
    assert AuditEvent.objects.count() == 1
    with transaction.atomic():
        second = audit.record("conversation.listed", actor=alice, filters=["queue"])
    stored = rows()
    assert [r.id for r in stored] == [first.id, second.id]
    # The database filled the time and the transaction id, and they came back with the INSERT.
    assert (stored[0].at, stored[0].xid) == (first.at, first.xid)
    # Both ran inside the test's transaction (as savepoints): the top-level transaction's id.
    assert first.xid == second.xid == xid
    assert stored[0].at <= stored[1].at
    assert not seals()  # chained later, by the sealer


def test_record_fills_every_column(alice: User) -> None:
    with transaction.atomic():
        audit.record(
            "review.read",
            actor=alice,
            conversation_id=42,
            subject="cust-1",
            purpose="chargeback dispute #881",
            exchanges=[3, 4],
            content_hash="ab" * 32,
        )
    row = AuditEvent.objects.get()
    assert row.code == "review.read"
    assert (row.actor_id, row.actor_label) == (alice.pk, "alice")
    assert row.conversation_id == 42
    assert row.subject_hash == audit.subject_hash("cust-1")
    assert row.details == {
        "purpose": "chargeback dispute #881",
        "exchanges": [3, 4],
        "content_hash": "ab" * 32,
    }


@pytest.mark.parametrize(
    ("actor", "actor_id", "label"),
    [
        (None, None, "system"),
        (SimpleNamespace(name="chat-backend"), None, "service-token:chat-backend"),
        (AnonymousUser(), None, "anonymous"),
    ],
)
def test_actor_labels(actor: Any, actor_id: int | None, label: str) -> None:
    with transaction.atomic():
        event = audit.record("retention.swept", actor=actor, conversations=0)
    row = AuditEvent.objects.get(pk=event.pk)
    assert (row.actor_id, row.actor_label) == (actor_id, label)


def test_an_unnamed_actor_is_refused() -> None:
    with pytest.raises(TypeError, match="audit actor"), transaction.atomic():
        audit.record("retention.swept", actor=object())
    assert not AuditEvent.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_it_raises_and_writes_nothing() -> None:
    assert not connection.in_atomic_block
    with pytest.raises(transaction.TransactionManagementError, match="inside the transaction"):
        audit.record("retention.swept", conversations=1)
    assert not AuditEvent.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_any_isolation_level_will_do() -> None:
    # Nothing is read before the INSERT any more: a REPEATABLE READ snapshot cannot fork anything.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        audit.record("retention.swept", conversations=1)
    assert AuditEvent.objects.count() == 1


def test_rolled_back_with_its_action() -> None:
    with pytest.raises(Boom), transaction.atomic():
        User.objects.create_user("bob")
        audit.record("grant.created", grantee=1, purpose="x")
        raise Boom
    assert not AuditEvent.objects.exists()
    assert not User.objects.filter(username="bob").exists()


def test_the_action_fails_when_its_audit_row_cannot_be_written() -> None:
    with pytest.raises(DetailsRefused), transaction.atomic():
        User.objects.create_user("bob")
        audit.record("grant.created", grantee=1, not_declared=True)
    assert not User.objects.filter(username="bob").exists()


def test_unknown_code_refused() -> None:
    with pytest.raises(UnknownEventType, match=r"conversation\.peeked"), transaction.atomic():
        audit.record("conversation.peeked")
    assert not AuditEvent.objects.exists()


def test_undeclared_detail_keys_refused() -> None:
    with pytest.raises(DetailsRefused, match="customer_external_id"), transaction.atomic():
        audit.record("conversation.viewed", page="detail", customer_external_id="cust-9")
    assert not AuditEvent.objects.exists()


def test_required_detail_keys_enforced() -> None:
    # Invariant 6: every review with its purpose; every view with its page.
    with pytest.raises(DetailsRefused, match="purpose"), transaction.atomic():
        audit.record("review.read", conversation_id=1, exchanges=[1])
    with pytest.raises(DetailsRefused, match="page"), transaction.atomic():
        audit.record("conversation.viewed", conversation_id=1)
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize(
    "value",
    [1.5, {1: "int key"}, "nul\x00", "\ud800", b"bytes", {"nested": [{"deep": 0.1}]}],
)
def test_values_jsonb_would_not_keep_exactly_are_refused(value: Any) -> None:
    with pytest.raises(DetailsRefused), transaction.atomic():
        audit.record("conversation.listed", filters=value)
    assert not AuditEvent.objects.exists()


def test_an_external_conversation_id_is_refused() -> None:
    with pytest.raises(TypeError, match="internal id"), transaction.atomic():
        audit.record("conversation.viewed", conversation_id="conv-ext-1", page="detail")
    assert not AuditEvent.objects.exists()


def test_a_raw_subject_is_never_stored() -> None:
    raw = "customer-RAW-7f3a9c"
    with transaction.atomic():
        audit.record("deletion.requested", subject=raw, scope="subject", reason="erasure")
        audit.record("exchange.refused_tombstoned", subject=raw, tombstone="subject")
    with connection.cursor() as cursor:
        cursor.execute("SELECT t::text FROM audit_auditevent t")
        dumped = [r[0] for r in cursor.fetchall()]
    assert len(dumped) == 2
    assert all(raw not in text for text in dumped)
    hashes = set(AuditEvent.objects.values_list("subject_hash", flat=True))
    assert hashes == {audit.subject_hash(raw)}
    assert len(hashes.pop()) == 64


def test_subject_hash_is_keyed(settings: Any) -> None:
    settings.AUDIT_HMAC_KEY = None
    derived = audit.subject_hash("cust-1")
    assert derived != hashlib.sha256(b"cust-1").hexdigest()  # not a bare, guessable hash
    settings.SECRET_KEY = "another-secret-key"
    assert audit.subject_hash("cust-1") != derived  # rotating SECRET_KEY changes new hashes
    settings.AUDIT_HMAC_KEY = "audit-key"
    keyed = hmac.new(b"audit-key", b"cust-1", hashlib.sha256).hexdigest()
    assert audit.subject_hash("cust-1") == keyed
    settings.SECRET_KEY = "yet-another-secret-key"
    assert audit.subject_hash("cust-1") == keyed  # AUDIT_HMAC_KEY set: SECRET_KEY is irrelevant
    assert audit.query_hash("cust-1") != keyed  # queries and subjects hash apart


@pytest.mark.django_db(transaction=True)
def test_rows_read_back_hash_the_same_with_awkward_values() -> None:
    alice = User.objects.create_user("alice")
    with transaction.atomic():
        audit.record(
            "conversation.searched",
            actor=alice,
            query_hash=audit.query_hash('ünïcødé ☃ "quoted" \\ back'),
            filters={"z": None, "a": [True, False, 2**62, -1, "€"], "m": {"b": {}, "a": []}},
            results=0,
        )
    assert seal_pending().rows == 1
    (row,) = rows()
    (seal,) = seals()
    assert seal.event_hash == expected_event_hash(row)
