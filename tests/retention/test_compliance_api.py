"""The compliance API for ticketing systems: scopes, preview, submit (idempotent by reference),
status with the SLA, receipts, legal holds; bad input gets the API's error shape and stores
nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from dateutil.relativedelta import relativedelta
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from audit.models import AuditEvent
from conversations.services import service_token_create
from retention.models import DeletionRequest, LegalHold, Receipt
from retention.services import retention_tick
from tests.conftest import post_json, table_counts
from tests.factories import post_exchange

pytestmark = pytest.mark.django_db

REQUESTS = "/api/v1/deletion-requests"
PREVIEW = "/api/v1/deletion-requests/preview"
HOLDS = "/api/v1/legal-holds"


@pytest.fixture
def desk(db: Any) -> APIClient:
    """The ticketing system: a token of scope compliance."""
    _, token = service_token_create(name="zendesk", scope="compliance")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def world(api: APIClient) -> None:
    post_exchange(api, conversation="conv-api-1", customer="cus-api", text="MARK-API-1")
    post_exchange(api, conversation="conv-api-1", customer="cus-api", text="MARK-API-1b")
    post_exchange(api, conversation="conv-api-2", customer="cus-api", text="MARK-API-2")
    post_exchange(api, conversation="conv-api-other", customer="cus-other", text="MARK-API-3")


def _submit(desk: APIClient, **body: Any) -> Any:
    return post_json(desk, REQUESTS, {"reason": "GDPR art. 17", "reference": "ZD-1", **body})


def test_a_token_opens_only_its_scope(api: APIClient, desk: APIClient) -> None:
    response = api.get(REQUESTS)
    assert response.status_code == 403
    assert response.json()["error"] == "permission_denied"
    assert "scope (ingest)" in response.json()["detail"]
    response = post_json(desk, "/api/v1/exchanges", {})
    assert response.status_code == 403
    assert "scope (compliance)" in response.json()["detail"]
    assert desk.get("/api/v1/conversations/x/messages").status_code == 403
    assert APIClient().get(REQUESTS).status_code == 401


def test_preview_counts_and_stores_only_its_audit_row(desk: APIClient, world: None) -> None:
    before = table_counts()
    response = post_json(desk, PREVIEW, {"customer": "cus-api"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["conversations"] == 2
    # conv-api-1: its second exchange asks a new first question (a branch: the customer edited
    # message 1), so 2 + 2 there, and 2 in conv-api-2: every branch is counted and erased.
    assert body["rows"]["conversations.message"] == 6
    assert body["rows"]["conversations.datakey"] == 2
    after = table_counts()
    assert {t for t in before if before[t] != after[t]} == {"default.audit_auditevent"}
    event = AuditEvent.objects.get(code="deletion.previewed")
    assert event.actor_label == "service-token:zendesk"
    assert event.details["conversations"] == 2
    assert "cus-api" not in str(event.details)


def test_submit_then_status_then_receipt(desk: APIClient, world: None) -> None:
    response = _submit(desk, customer="cus-api")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "pending"
    assert body["reference"] == "ZD-1"
    assert body["requester"] == "service-token:zendesk"
    assert body["conversations"] == 2
    assert body["receipt"] is None
    requested = parse_datetime(body["requested_at"])
    assert requested is not None
    assert parse_datetime(body["deadline"]) == requested + relativedelta(months=1)
    assert body["sla"]["state"] == "on track"
    assert "cus-api" not in response.content.decode()  # raw ids are never echoed

    # A retry (same reference, same customer) is the same request.
    again = _submit(desk, customer="cus-api")
    assert again.status_code == 200
    assert again.json()["id"] == body["id"]
    assert DeletionRequest.objects.count() == 1

    retention_tick()
    done = desk.get(f"{REQUESTS}/{body['id']}")
    assert done.status_code == 200
    result = done.json()
    assert result["status"] == "completed"
    assert result["sla"]["state"] == "met"
    receipt = result["receipt"]
    assert receipt["hmac_valid"] is True
    assert receipt["hmac"] == Receipt.objects.get().hmac
    assert receipt["conversations"] == 2
    assert receipt["keys_destroyed"] == 2
    assert receipt["counts"]["main"]["conversations.message"] == 6
    assert receipt["verification"]["ok"] is True
    # The same reference after completion (raw ids cleared) still finds the request.
    assert _submit(desk, customer="cus-api").json()["id"] == body["id"]
    viewed = AuditEvent.objects.filter(code="deletion.viewed", details__page="api-detail")
    assert viewed.get().details["request"] == body["id"]


def test_a_reference_reused_for_something_else_is_a_409(desk: APIClient, world: None) -> None:
    assert _submit(desk, customer="cus-api").status_code == 201
    before = table_counts()
    response = _submit(desk, customer="cus-other")
    assert response.status_code == 409
    assert response.json()["error"] == "reference_reused"
    assert response.json()["field"] == "reference"
    assert table_counts() == before


@pytest.mark.parametrize(
    ("body", "field", "at"),
    [
        ({"reason": "r", "reference": "T"}, "customer", "$.customer"),
        (
            {"customer": "c", "conversations": ["x"], "reason": "r", "reference": "T"},
            "customer",
            "$.customer",
        ),
        ({"customer": "c", "reference": "T"}, "reason", "$.reason"),
        ({"customer": "c", "reason": "r"}, "reference", "$.reference"),
        (
            {"conversations": [], "reason": "r", "reference": "T"},
            "conversations",
            "$.conversations",
        ),
        (
            {"conversations": "x", "reason": "r", "reference": "T"},
            "conversations",
            "$.conversations",
        ),
        ({"conversations": ["ok", 7], "reason": "r", "reference": "T"}, "conversations", None),
        ({"customer": "c", "reason": "r", "reference": "T", "extra": 1}, "extra", "$.extra"),
        ({"customer": 12, "reason": "r", "reference": "T"}, "customer", "$.customer"),
        ({"customer": "c", "reason": "r\u0000", "reference": "T"}, "reason", "$.reason"),
        ({"customer": "c" * 201, "reason": "r", "reference": "T"}, "customer", "$.customer"),
        ({"customer": "c", "reason": "r", "reference": "T", "due": "soon"}, "due", "$.due"),
        (
            {"customer": "c", "reason": "r", "reference": "T", "due": "2099-01-01T00:00:00Z"},
            "due",
            "$.due",
        ),
        ({"customer": "c", "reason": "   ", "reference": "T"}, "reason", "$.reason"),
    ],
)
def test_bad_input_names_the_field_and_stores_nothing(
    desk: APIClient, body: dict[str, Any], field: str, at: str | None
) -> None:
    before = table_counts()
    response = post_json(desk, REQUESTS, body)
    assert response.status_code == 400, response.content
    error = response.json()
    assert error["field"] == field, error
    if at is not None:
        assert error["at"] == at, error
    assert table_counts() == before


def test_not_json_is_a_400(desk: APIClient) -> None:
    response = post_json(desk, REQUESTS, "{not json")
    assert response.status_code == 400
    assert response.json()["field"] == "body"


def test_list_filters_by_status_and_pages(desk: APIClient, world: None) -> None:
    for i in range(3):
        assert _submit(desk, customer=f"cus-{i}", reference=f"ZD-{i}").status_code == 201
    retention_tick()
    assert _submit(desk, customer="cus-api", reference="ZD-late").status_code == 201
    pending = desk.get(REQUESTS, {"status": "pending"}).json()
    assert [r["reference"] for r in pending["requests"]] == ["ZD-late"]
    completed = desk.get(REQUESTS, {"status": "completed"}).json()
    assert len(completed["requests"]) == 3
    assert desk.get(REQUESTS, {"status": "nope"}).json()["field"] == "status"
    assert desk.get(REQUESTS, {"before": "x"}).json()["field"] == "before"
    assert desk.get(REQUESTS, {"before": "\u00b2"}).json()["field"] == "before"  # isdigit()
    assert desk.get(REQUESTS, {"before": "9" * 19}).json()["field"] == "before"
    first = desk.get(REQUESTS).json()
    assert first["next"] is None and len(first["requests"]) == 4
    older = desk.get(REQUESTS, {"before": first["requests"][1]["id"]}).json()
    assert [r["id"] for r in older["requests"]] == [r["id"] for r in first["requests"][2:]]
    assert desk.get(f"{REQUESTS}/999999").status_code == 404


def test_a_hold_blocks_a_request_until_released(desk: APIClient, world: None) -> None:
    placed = post_json(
        desk, HOLDS, {"scope": "subject", "customer": "cus-api", "reason": "litigation L-7"}
    )
    assert placed.status_code == 201, placed.content
    hold = placed.json()
    assert hold["active"] is True and hold["placed_by"] == "service-token:zendesk"
    assert "cus-api" not in placed.content.decode()
    request_id = _submit(desk, customer="cus-api").json()["id"]

    retention_tick()
    blocked = desk.get(f"{REQUESTS}/{request_id}").json()
    assert blocked["status"] == "blocked"
    assert blocked["blocked"] == {"hold": hold["id"], "reason": "litigation L-7"}

    assert post_json(desk, f"{HOLDS}/{hold['id']}/release", {}).json()["field"] == "reason"
    released = post_json(desk, f"{HOLDS}/{hold['id']}/release", {"reason": "case closed"})
    assert released.status_code == 200
    assert released.json()["active"] is False
    assert released.json()["released_by"] == "service-token:zendesk"
    assert desk.get(f"{REQUESTS}/{request_id}").json()["status"] == "pending"
    retention_tick()
    assert desk.get(f"{REQUESTS}/{request_id}").json()["status"] == "completed"
    listed = desk.get(HOLDS, {"active": "false"}).json()["holds"]
    assert [h["id"] for h in listed] == [hold["id"]]
    assert desk.get(HOLDS, {"active": "true"}).json()["holds"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"scope": "conversation", "conversation": "no-such", "reason": "r"}, "conversation"),
        ({"scope": "conversation", "reason": "r"}, "conversation"),
        ({"scope": "subject", "reason": "r"}, "customer"),
        ({"scope": "queue", "reason": "r"}, "queue"),
        ({"scope": "planet", "reason": "r"}, "scope"),
        ({"scope": "queue", "queue": "billing"}, "reason"),
    ],
)
def test_bad_holds_name_the_field(desk: APIClient, body: dict[str, Any], field: str) -> None:
    before = table_counts()
    response = post_json(desk, HOLDS, body)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert table_counts() == before


def test_a_conversation_hold_by_its_chat_backend_id(desk: APIClient, world: None) -> None:
    response = post_json(
        desk, HOLDS, {"scope": "conversation", "conversation": "conv-api-2", "reason": "audit"}
    )
    assert response.status_code == 201
    hold = LegalHold.objects.get()
    assert hold.conversation_id == response.json()["conversation"]
    assert post_json(desk, f"{HOLDS}/999/release", {"reason": "x"}).status_code == 404


def test_the_sla_turns_overdue_after_a_month(desk: APIClient, world: None) -> None:
    request_id = _submit(desk, customer="cus-api").json()["id"]
    DeletionRequest.objects.filter(pk=request_id).update(
        requested_at=timezone.now() - timedelta(days=40), status="blocked"
    )
    body = desk.get(f"{REQUESTS}/{request_id}").json()
    assert body["sla"]["state"] == "overdue"
    assert body["sla"]["label"].startswith("overdue by ")


def test_writes_are_audited_with_the_token_as_actor(desk: APIClient, world: None) -> None:
    request_id = _submit(desk, customer="cus-api").json()["id"]
    _submit(desk, customer="cus-api")  # the retry: a read of the request, logged
    hold = post_json(desk, HOLDS, {"scope": "queue", "queue": "billing", "reason": "r"}).json()
    post_json(desk, f"{HOLDS}/{hold['id']}/release", {"reason": "done"})
    rows = {
        e.code: e
        for e in AuditEvent.objects.filter(
            code__in=[
                "deletion.requested",
                "legal_hold.placed",
                "legal_hold.released",
                "deletion.viewed",
            ]
        )
    }
    assert set(rows) == {
        "deletion.requested",
        "legal_hold.placed",
        "legal_hold.released",
        "deletion.viewed",
    }
    assert {e.actor_label for e in rows.values()} == {"service-token:zendesk"}
    assert rows["deletion.requested"].details["reference"] == "ZD-1"
    assert rows["deletion.viewed"].details == {"page": "api-retry", "request": request_id}


def test_ids_are_not_trimmed(desk: APIClient, world: None) -> None:
    body = post_json(desk, PREVIEW, {"customer": " cus-api"}).json()
    assert body["conversations"] == 0
    blank = _submit(desk, customer="   ")
    assert blank.status_code == 400 and blank.json()["field"] == "customer"
