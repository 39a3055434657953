"""Deletion requests on the clock: legal holds, receipts, raw ids cleared, retention boundaries."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from io import StringIO
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections
from django.utils import timezone
from rest_framework.test import APIClient

from audit.models import AuditEvent
from conversations.models import Conversation
from retention.models import DeletionRequest, LegalHold, Receipt, RetentionClass
from retention.services import (
    deletion_request_claim,
    deletion_request_submit,
    legal_hold_place,
    legal_hold_release,
    receipt_verify,
    retention_tick,
)
from tests.factories import post_exchange

pytestmark = pytest.mark.django_db


def _row_text(request: DeletionRequest) -> str:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT row_to_json(r)::text FROM retention_deletionrequest r WHERE id = %s",
            [request.pk],
        )
        return str(cur.fetchone()[0])


def test_a_legal_hold_blocks_a_request_until_released(api: APIClient) -> None:
    post_exchange(api, conversation="conv-held", customer="cus-held", text="MARK-HELD")
    hold = legal_hold_place(scope="subject", customer="cus-held", reason="litigation L-7")
    request = deletion_request_submit(customer="cus-held", reason="erasure request")

    retention_tick()

    request.refresh_from_db()
    assert request.status == "blocked"
    assert request.blocked_reason == "litigation L-7"
    assert Conversation.objects.filter(external_id="conv-held").exists()
    assert AuditEvent.objects.filter(code="deletion.blocked", details__hold=hold.pk).exists()
    retention_tick()  # still held: nothing changes
    assert DeletionRequest.objects.get(pk=request.pk).status == "blocked"

    legal_hold_release(hold=hold, reason="case closed")
    retention_tick()

    request.refresh_from_db()
    assert request.status == "completed"
    assert not Conversation.objects.filter(external_id="conv-held").exists()
    assert AuditEvent.objects.filter(code="legal_hold.released").count() == 1


def test_the_receipt_counts_what_existed_and_its_hmac_verifies(api: APIClient) -> None:
    post_exchange(api, conversation="conv-r1", customer="cus-r", text="MARK-R1")
    post_exchange(api, conversation="conv-r2", customer="cus-r", text="MARK-R2")
    post_exchange(api, conversation="conv-other", customer="cus-other", text="MARK-O")
    request = deletion_request_submit(customer="cus-r", reason="erasure request")
    assert request.preview["conversations.message"] == 4
    assert request.preview["conversations.datakey"] == 2

    retention_tick()

    receipt = Receipt.objects.get(request=request)
    assert receipt.conversations == 2
    assert receipt.keys_destroyed == 2
    assert receipt.counts["keys"] == {"conversations.datakey": 2}
    for label, n in request.preview.items():
        if label != "conversations.datakey":
            assert receipt.counts["main"].get(label, 0) == n, label
    assert receipt.verification["ok"] is True
    assert receipt_verify(receipt)
    receipt.counts["main"]["conversations.message"] = 3
    assert not receipt_verify(receipt)
    event = AuditEvent.objects.get(code="deletion.executed")
    assert event.details["receipt_hash"] == receipt.hmac
    assert Conversation.objects.filter(external_id="conv-other").exists()


def test_a_completed_request_holds_no_raw_id(api: APIClient) -> None:
    post_exchange(api, conversation="conv-raw-1", customer="cus-raw-subject", text="MARK-RAW")
    by_customer = deletion_request_submit(customer="cus-raw-subject", reason="erasure")
    post_exchange(api, conversation="conv-raw-2", customer="cus-raw-2", text="MARK-RAW2")
    by_conversation = deletion_request_submit(conversations=["conv-raw-2"], reason="erasure")
    assert "cus-raw-subject" in _row_text(by_customer)

    retention_tick()

    for request, raw in ((by_customer, "cus-raw-subject"), (by_conversation, "conv-raw-2")):
        request.refresh_from_db()
        assert request.status == "completed"
        text = _row_text(request)
        assert raw not in text
        assert "conv-raw-1" not in text
    assert by_customer.subject_hash


def test_a_request_due_later_waits(api: APIClient) -> None:
    post_exchange(api, conversation="conv-later", customer="cus-later", text="MARK-L")
    due = datetime.now(UTC) + timedelta(days=3)
    request = deletion_request_submit(conversations=["conv-later"], reason="x", due=due)
    retention_tick()
    assert DeletionRequest.objects.get(pk=request.pk).status == "pending"
    retention_tick(now=due + timedelta(seconds=1))
    assert DeletionRequest.objects.get(pk=request.pk).status == "completed"


def test_a_stale_claim_is_reclaimed(api: APIClient, settings: Any) -> None:
    post_exchange(api, conversation="conv-stale", customer="cus-stale", text="MARK-S")
    request = deletion_request_submit(conversations=["conv-stale"], reason="x")
    claimed = deletion_request_claim()  # ...and the worker dies
    assert claimed is not None and claimed.pk == request.pk
    assert deletion_request_claim() is None  # fresh claim: left alone
    later = datetime.now(UTC) + timedelta(seconds=settings.RETENTION_CLAIM_STALE_SECONDS + 1)
    retention_tick(now=later)
    assert DeletionRequest.objects.get(pk=request.pk).status == "completed"
    assert Receipt.objects.count() == 1


def _set_activity(external_id: str, at: datetime) -> None:
    Conversation.objects.filter(external_id=external_id).update(last_activity_at=at)


@pytest.mark.parametrize("days_source", ["default", "queue", "conversation"])
def test_retention_boundaries_one_second_either_side(
    api: APIClient, settings: Any, days_source: str
) -> None:
    now = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
    days = 10
    if days_source == "default":
        settings.RETENTION_DEFAULT_DAYS = days
    post_exchange(api, conversation="conv-inside", customer="cus-1", text="MARK-IN", queue="sales")
    post_exchange(api, conversation="conv-past", customer="cus-2", text="MARK-PAST", queue="sales")
    if days_source == "queue":
        RetentionClass.objects.create(queue="sales", days=days)
    if days_source == "conversation":
        RetentionClass.objects.create(queue="sales", days=1000)
        for ext in ("conv-inside", "conv-past"):
            pk = Conversation.objects.get(external_id=ext).pk
            RetentionClass.objects.create(conversation_id=pk, days=days)
    period = timedelta(days=days)
    _set_activity("conv-inside", now - period + timedelta(seconds=1))
    _set_activity("conv-past", now - period - timedelta(seconds=1))

    retention_tick(now=now)

    assert Conversation.objects.filter(external_id="conv-inside").exists()
    assert not Conversation.objects.filter(external_id="conv-past").exists()
    assert AuditEvent.objects.filter(code="retention.swept").count() == 1
    assert Receipt.objects.get().conversations == 1


def test_retention_across_a_daylight_saving_change(api: APIClient, settings: Any) -> None:
    # Paris moved its clocks forward on 29 March 2026. The period is elapsed time (days x 24 h):
    # two calendar days before noon on the 30th, in Paris wall time, is only 47 hours back.
    settings.RETENTION_DEFAULT_DAYS = 2
    paris = ZoneInfo("Europe/Paris")
    now = datetime(2026, 3, 30, 12, 0, tzinfo=paris)
    elapsed_start = now.astimezone(UTC) - timedelta(hours=48)
    wall_start = datetime(2026, 3, 28, 12, 0, tzinfo=paris)
    assert (now.astimezone(UTC) - wall_start.astimezone(UTC)) == timedelta(hours=47)
    post_exchange(api, conversation="conv-dst-in", customer="cus-1", text="MARK-IN")
    post_exchange(api, conversation="conv-dst-past", customer="cus-2", text="MARK-PAST")
    post_exchange(api, conversation="conv-dst-wall", customer="cus-3", text="MARK-WALL")
    _set_activity("conv-dst-in", elapsed_start + timedelta(seconds=1))
    _set_activity("conv-dst-past", elapsed_start - timedelta(seconds=1))
    _set_activity("conv-dst-wall", wall_start - timedelta(seconds=1))
    retention_tick(now=now)
    assert Conversation.objects.filter(external_id="conv-dst-in").exists()
    assert not Conversation.objects.filter(external_id="conv-dst-past").exists()
    assert Conversation.objects.filter(external_id="conv-dst-wall").exists()


def test_retention_skips_held_conversations(api: APIClient, settings: Any) -> None:
    settings.RETENTION_DEFAULT_DAYS = 1
    post_exchange(api, conversation="conv-q-held", customer="cus-1", text="MARK-Q", queue="legal")
    post_exchange(api, conversation="conv-free", customer="cus-2", text="MARK-F", queue="sales")
    old = datetime.now(UTC) - timedelta(days=5)
    _set_activity("conv-q-held", old)
    _set_activity("conv-free", old)
    hold = legal_hold_place(scope="queue", queue="legal", reason="regulator inquiry")
    retention_tick()
    assert Conversation.objects.filter(external_id="conv-q-held").exists()
    assert not Conversation.objects.filter(external_id="conv-free").exists()
    legal_hold_release(hold=hold, reason="closed")
    retention_tick()
    assert not Conversation.objects.filter(external_id="conv-q-held").exists()


def test_the_commands(api: APIClient) -> None:
    post_exchange(api, conversation="conv-cmd", customer="cus-cmd", text="MARK-CMD")
    out = StringIO()
    call_command("deletion_request", "--customer", "cus-cmd", "--reason", "ticket 42", stdout=out)
    request = DeletionRequest.objects.get(pk=int(out.getvalue()))
    assert request.scope == "customer"
    out = StringIO()
    call_command("retention_tick", stdout=out)
    assert "completed=1" in out.getvalue()
    assert DeletionRequest.objects.get(pk=request.pk).status == "completed"
    out = StringIO()
    due = (timezone.now() + timedelta(days=10)).date().isoformat()
    call_command(
        "deletion_request",
        "--conversation",
        "a",
        "b",
        "--reason",
        "r",
        "--due",
        due,
        "--reference",
        "ZD-77",
        stdout=out,
    )
    later = DeletionRequest.objects.get(pk=int(out.getvalue()))
    assert later.conversation_external_ids == ["a", "b"]
    assert later.due.date().isoformat() == due
    assert later.reference == "ZD-77"
    # Past the legal deadline (one month from receipt): refused, nothing stored.
    with pytest.raises(CommandError, match="due after the legal deadline"):
        call_command("deletion_request", "--customer", "x", "--reason", "r", "--due", "2030-01-01")
    with pytest.raises(CommandError, match="reference 'ZD-77' names deletion request"):
        call_command("deletion_request", "--customer", "x", "--reason", "r", "--reference", "ZD-77")
    assert DeletionRequest.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_ticks_at_once_execute_a_request_once(transactional_db: Any) -> None:
    from conversations.services import service_token_create

    _, token = service_token_create(name="chat")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    for i in range(6):
        post_exchange(api, conversation=f"conv-race-{i}", customer="cus-race", text=f"MARK-{i}")
    request = deletion_request_submit(customer="cus-race", reason="erasure")
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def tick() -> None:
        try:
            barrier.wait()
            retention_tick()
        except BaseException as exc:
            errors.append(exc)
        finally:
            for alias in connections:
                connections[alias].close()

    threads = [threading.Thread(target=tick) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    assert DeletionRequest.objects.get(pk=request.pk).status == "completed"
    assert Receipt.objects.count() == 1
    assert AuditEvent.objects.filter(code="deletion.executed").count() == 1
    assert Receipt.objects.get().conversations == 6
    assert not LegalHold.objects.exists()


def test_a_failing_execution_is_retried_then_failed(
    api: APIClient, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from retention.services import execution

    post_exchange(api, conversation="conv-fail", customer="cus-fail", text="MARK-FAIL")
    request = deletion_request_submit(conversations=["conv-fail"], reason="x")

    def broken(conversation_id: int, **kw: Any) -> Any:
        raise RuntimeError("database went away")

    monkeypatch.setattr(execution, "conversation_erase", broken)
    stale = timedelta(seconds=settings.RETENTION_CLAIM_STALE_SECONDS + 1)
    now = datetime.now(UTC)
    retention_tick(now=now)
    request.refresh_from_db()
    assert (request.status, request.attempts) == ("running", 1)
    assert "database went away" in request.error
    monkeypatch.undo()
    retention_tick(now=now + stale)  # reclaimed and resumed
    request.refresh_from_db()
    assert (request.status, request.attempts) == ("completed", 2)

    post_exchange(api, conversation="conv-fail-2", customer="cus-fail", text="MARK-FAIL")
    request = deletion_request_submit(conversations=["conv-fail-2"], reason="x")
    monkeypatch.setattr(execution, "conversation_erase", broken)
    for i in range(settings.RETENTION_MAX_ATTEMPTS):
        retention_tick(now=now + stale * (i + 1))
    request.refresh_from_db()
    assert request.status == "failed"
    assert Conversation.objects.filter(external_id="conv-fail-2").exists()


def test_the_verification_scan_finds_what_is_left(api: APIClient) -> None:
    from retention.services import verification_scan

    post_exchange(api, conversation="conv-left", customer="cus-left", text="MARK-LEFT")
    pk = Conversation.objects.get(external_id="conv-left").pk
    result = verification_scan(
        conversation_ids=[pk], external_ids=["conv-left"], subject="cus-left"
    )
    assert result["ok"] is False
    assert result["found"]["conversations.message"] == 2  # the question and the answer
    assert result["found"]["conversations.datakey"] == 1
    assert result["found"]["conversations.conversation(external)"] == 2


def test_the_audit_chain_verifies_after_an_erasure(api: APIClient) -> None:
    post_exchange(api, conversation="conv-chain", customer="cus-chain", text="MARK-CHAIN")
    deletion_request_submit(customer="cus-chain", reason="erasure")
    retention_tick()
    call_command("verify_audit", stdout=StringIO())  # raises (non-zero exit) on a break
    codes = list(AuditEvent.objects.order_by("id").values_list("code", flat=True))
    assert codes[-2:] == ["deletion.requested", "deletion.executed"]
    for event in AuditEvent.objects.all():
        assert "cus-chain" not in str(event.details) and "conv-chain" not in str(event.details)


def test_a_second_tick_does_nothing_twice(api: APIClient) -> None:
    post_exchange(api, conversation="conv-twice", customer="cus-twice", text="MARK-TWICE")
    request = deletion_request_submit(customer="cus-twice", reason="erasure")
    first = retention_tick()
    events = AuditEvent.objects.count()
    second = retention_tick()
    assert first["completed"] == 1 and second["requests"] == 0
    assert AuditEvent.objects.count() == events
    assert Receipt.objects.filter(request=request).count() == 1
