"""Compliance pages: a deletion request is previewed (counted, nothing stored) before it is
confirmed; the list shows status and the SLA against the one-month deadline; the request's page
shows its receipt; legal holds are placed and released with a reason. Audited; 404 to others."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from retention.models import DeletionRequest, LegalHold
from retention.services import legal_hold_place, retention_tick
from tests.conftest import table_counts
from tests.console.conftest import World, client_for

pytestmark = pytest.mark.django_db(databases="__all__")

PAGES = ["/compliance/deletions/", "/compliance/deletions/new/", "/compliance/holds/"]


@pytest.fixture
def staff(client: Any, world: World) -> Any:
    return client_for(client, world, "compliance")


@pytest.mark.parametrize("role", ["agent", "reviewer", "other_agent"])
def test_only_compliance_staff_and_admins_open_them(client: Any, world: World, role: str) -> None:
    hold = legal_hold_place(scope="queue", queue="billing", reason="regulator")
    c = client_for(client, world, role)
    for page in PAGES:
        assert c.get(page).status_code == 404, page
    response = c.post(f"/compliance/holds/{hold.pk}/release/", {"reason": "x"})
    assert response.status_code == 404
    hold.refresh_from_db()
    assert hold.released_at is None
    assert (
        c.post("/compliance/holds/", {"scope": "queue", "queue": "q", "reason": "r"}).status_code
        == 404
    )
    assert LegalHold.objects.count() == 1


def test_preview_then_confirm(staff: Any, world: World) -> None:
    customer = world.billing.customer_external_id
    form = {"customer": customer, "reason": "GDPR art. 17", "reference": "ZD-9"}
    before = table_counts()
    page = staff.post("/compliance/deletions/new/", {**form, "preview": "1"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "This request would erase, as of now" in html
    assert "1 conversation</strong>" in html
    assert "Confirm deletion request" in html
    after = table_counts()
    assert {t for t in before if before[t] != after[t]} == {"default.audit_auditevent"}
    assert AuditEvent.objects.filter(code="deletion.previewed").count() == 1

    done = staff.post("/compliance/deletions/new/", {**form, "confirm": "1"})
    assert done.status_code == 302
    request = DeletionRequest.objects.get()
    assert done["Location"] == f"/compliance/deletions/{request.pk}/"
    assert request.requester == "compliance"
    assert request.requested_by == world.users["compliance"]
    assert request.reference == "ZD-9"
    detail = staff.get(done["Location"]).content.decode()
    assert f"Deletion request {request.pk} submitted." in detail
    assert "0 of 1 conversation erased" in detail

    retention_tick()
    detail = staff.get(done["Location"]).content.decode()
    assert "Receipt" in detail and "<strong>valid</strong>" in detail
    assert "<strong>nothing left</strong>" in detail
    assert "1 data key destroyed" in detail
    assert customer not in detail  # the raw id was cleared on completion
    listing = staff.get("/compliance/deletions/?status=completed").content.decode()
    assert "met: completed in" in listing
    assert f'href="/compliance/deletions/{request.pk}/#receipt"' in listing


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"reason": "r"}, "Name either a customer or conversations."),
        ({"customer": "c", "conversations": "x", "reason": "r"}, "Name either a customer"),
        ({"customer": "c"}, "This field is required."),
        (
            {"customer": "c", "reason": "r", "due": "2099-01-01"},
            "due after the legal deadline",
        ),
    ],
)
def test_bad_requests_are_refused_on_the_form(
    staff: Any, form: dict[str, str], message: str
) -> None:
    before = table_counts()
    page = staff.post("/compliance/deletions/new/", {**form, "confirm": "1"})
    assert page.status_code == 200
    assert message in page.content.decode()
    assert table_counts() == before


def test_the_list_shows_the_sla(staff: Any, world: World) -> None:
    customer = world.billing.customer_external_id
    staff.post("/compliance/deletions/new/", {"customer": customer, "reason": "r", "confirm": "1"})
    html = staff.get("/compliance/deletions/").content.decode()
    assert "days left" in html and "on track" not in html  # the label, not the state
    DeletionRequest.objects.update(requested_at=timezone.now() - timedelta(days=40))
    html = staff.get("/compliance/deletions/").content.decode()
    assert "overdue by 9 days" in html or "overdue by 10 days" in html
    assert AuditEvent.objects.filter(code="deletion.viewed", details__page="list").count() == 2


def test_holds_are_placed_and_released_with_a_reason(staff: Any, world: World) -> None:
    response = staff.post(
        "/compliance/holds/", {"scope": "queue", "queue": "billing", "reason": "regulator"}
    )
    assert response.status_code == 302
    hold = LegalHold.objects.get()
    assert hold.placed_by_label == "compliance"
    html = staff.get("/compliance/holds/").content.decode()
    assert "queue <code>billing</code>" in html and "<strong>active</strong>" in html

    # No reason: not released.
    staff.post(f"/compliance/holds/{hold.pk}/release/", {"reason": ""})
    hold.refresh_from_db()
    assert hold.released_at is None
    staff.post(f"/compliance/holds/{hold.pk}/release/", {"reason": "inquiry closed"})
    hold.refresh_from_db()
    assert hold.released_at is not None and hold.release_reason == "inquiry closed"
    assert "released" in staff.get("/compliance/holds/").content.decode()


def test_a_hold_for_an_unknown_conversation_is_refused(staff: Any) -> None:
    before = table_counts()
    page = staff.post(
        "/compliance/holds/", {"scope": "conversation", "conversation": "nope", "reason": "r"}
    )
    assert page.status_code == 200
    assert "no such conversation" in page.content.decode()
    after = table_counts()  # the page (with its list of holds) is shown again: its audit row
    assert {t for t in before if before[t] != after[t]} == {"default.audit_auditevent"}
    assert not LegalHold.objects.exists()


def test_a_blocked_request_names_its_hold(staff: Any, world: World) -> None:
    customer = world.billing.customer_external_id
    hold = legal_hold_place(scope="subject", customer=customer, reason="litigation L-7")
    staff.post("/compliance/deletions/new/", {"customer": customer, "reason": "r", "confirm": "1"})
    retention_tick()
    request = DeletionRequest.objects.get()
    assert request.status == "blocked"
    html = staff.get(f"/compliance/deletions/{request.pk}/").content.decode()
    assert f"by legal hold {hold.pk}: litigation L-7" in html
    assert "1 request" in staff.get("/compliance/holds/").content.decode()


def test_a_ticket_reference_submits_once(staff: Any, world: World) -> None:
    customer = world.billing.customer_external_id
    form = {"customer": customer, "reason": "r", "reference": "ZD-1", "confirm": "1"}
    first = staff.post("/compliance/deletions/new/", form)
    again = staff.post("/compliance/deletions/new/", form)  # a double click on Confirm
    assert first.status_code == again.status_code == 302
    assert first["Location"] == again["Location"]
    assert DeletionRequest.objects.count() == 1
    other = staff.post("/compliance/deletions/new/", {**form, "customer": "cus-someone-else"})
    assert other.status_code == 200
    assert "reference &#x27;ZD-1&#x27; names deletion request" in other.content.decode()
    assert DeletionRequest.objects.count() == 1


def test_edit_from_the_preview_keeps_the_form_out_of_the_url(staff: Any) -> None:
    form = {"customer": "cus-edit-me", "reason": "GDPR", "reference": "ZD-2"}
    page = staff.post("/compliance/deletions/new/", {**form, "edit": "1"})
    html = page.content.decode()
    assert page.status_code == 200
    assert 'value="cus-edit-me"' in html and "This request would erase" not in html
    preview = staff.post("/compliance/deletions/new/", {**form, "preview": "1"}).content.decode()
    assert 'formmethod="get"' not in preview and 'name="edit"' in preview
    assert not DeletionRequest.objects.exists()


def test_ids_are_matched_exactly(staff: Any, world: World) -> None:
    customer = world.billing.customer_external_id
    page = staff.post(
        "/compliance/deletions/new/", {"customer": f" {customer}", "reason": "r", "preview": "1"}
    )
    assert "0 conversations</strong>" in page.content.decode()


def test_a_bad_page_cursor_is_ignored(staff: Any) -> None:
    assert staff.get("/compliance/deletions/?before=%C2%B2").status_code == 200
    assert staff.get("/compliance/deletions/?before=99999999999999999999999").status_code == 200
