"""The agent's workspace, page by page: one search box, list rows and views, paging both ways,
the conversation page's header and times, the tool call's record, the user's time zone, and the
compliance and admin improvements (preview warnings, stores in words, typed hold ids, exports)."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from console.models import UserPreference
from conversations.models import Conversation
from conversations.services import conversation_record_event
from retention.models import DeletionRequest, LegalHold
from retention.services import (
    deletion_request_submit,
    legal_hold_place,
    legal_hold_release,
    retention_tick,
)
from tests.conftest import table_counts
from tests.console.conftest import World, client_for, exchange, ingest
from tests.console.test_read_services import call_key
from tests.console.workspace import (
    BACKEND_ID,
    CUSTOMER,
    ORDER,
    OTHER_ID,
    REFUND_ERROR,
    SHIPMENT_ERROR,
    TICKET,
    build,
)

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture
def agent(client: Any, world: World) -> Any:
    build()
    return client_for(client, world, "agent")


def _listed(body: str) -> set[int]:
    return {int(pk) for pk in re.findall(r'href="/conversations/(\d+)/" class="row-link"', body)}


def _last_audit() -> AuditEvent:
    return AuditEvent.objects.order_by("-id")[0]


# --- Find --------------------------------------------------------------------------------------


def test_a_pasted_backend_id_goes_straight_to_its_conversation(agent: Any) -> None:
    target = Conversation.objects.get(external_id=BACKEND_ID)
    response = agent.get("/", {"q": f"  {BACKEND_ID} "})  # pasted with the spaces around it
    assert response.status_code == 302
    assert response["Location"] == f"/conversations/{target.pk}/"
    row = _last_audit()
    assert row.code == "conversation.searched" and row.details["match"] == "conversation"
    assert BACKEND_ID not in json.dumps(row.details)
    # From htmx (the search box submitted in place): the whole page goes there.
    response = agent.get("/", {"q": BACKEND_ID}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/conversations/{target.pk}/"


def test_an_id_the_agent_may_not_see_finds_nothing(agent: Any, world: World) -> None:
    response = agent.get("/", {"q": world.shipping.external_id})
    assert response.status_code == 200
    assert _listed(response.content.decode()) == set()
    response = agent.get("/", {"q": world.shipping.customer_external_id})
    assert _listed(response.content.decode()) == set()


def test_a_ticket_reference_goes_to_its_one_conversation_or_lists_them(agent: Any) -> None:
    target = Conversation.objects.get(external_id=BACKEND_ID)
    assert agent.get("/", {"q": TICKET})["Location"] == f"/conversations/{target.pk}/"
    twin = ingest(
        {**exchange("conv-twin", "billing"), "labels": {"queue": "billing", "ticket": TICKET}}
    )
    body = agent.get("/", {"q": TICKET}).content.decode()
    assert _listed(body) == {target.pk, twin.pk}
    assert "conversations of <strong>ticket</strong>" in body


def test_a_customer_id_lists_the_customers_conversations(agent: Any) -> None:
    body = agent.get("/", {"q": CUSTOMER}).content.decode()
    assert _listed(body) == {Conversation.objects.get(external_id=BACKEND_ID).pk}
    assert "conversations of <strong>customer</strong>" in body
    assert _last_audit().details["match"] == "customer"


def test_an_identifier_kept_by_a_policy_finds_its_conversations(agent: Any) -> None:
    body = agent.get("/", {"q": ORDER}).content.decode()
    ids = set(
        Conversation.objects.filter(external_id__in=[BACKEND_ID, OTHER_ID]).values_list(
            "pk", flat=True
        )
    )
    assert _listed(body) == ids
    assert "carry the <strong>identifier</strong>" in body
    # The order id is also a word of the text: the agent can take it that way instead.
    words = agent.get("/", {"q": ORDER, "match": "words"}).content.decode()
    assert _last_audit().details["match"] == "words"
    assert _listed(words) == ids  # both conversations also say it


def test_a_dropped_field_is_not_searchable(agent: Any, world: World) -> None:
    from tests.console.conftest import DROPPED_MARKER

    body = agent.get("/", {"q": DROPPED_MARKER}).content.decode()
    assert _listed(body) == set()


def test_words_still_search_the_visible_text(agent: Any, world: World) -> None:
    body = agent.get("/", {"q": "colleague"}).content.decode()
    assert _listed(body) == {Conversation.objects.get(external_id=BACKEND_ID).pk}


# --- List rows, views, filters, paging ---------------------------------------------------------


def test_rows_show_backend_id_status_snippet_and_model(agent: Any) -> None:
    body = agent.get("/").content.decode()
    row = re.search(rf"<tr data-row>(?:(?!</tr>).)*{BACKEND_ID}.*?</tr>", body, re.S)
    assert row, body
    text = row.group(0)
    assert "cus-ana-moreau" in text and "state-escalated" in text
    assert "two things went wrong" in text and "**" not in text  # Markdown taken out
    assert "claude-sonnet-4-5-20250929" in text
    assert "&lt;script&gt;" in text or "script" not in text


def test_the_awaiting_view_lists_escalated_conversations(agent: Any, world: World) -> None:
    body = agent.get("/", {"status": "escalated"}).content.decode()
    assert _listed(body) == {Conversation.objects.get(external_id=BACKEND_ID).pk}
    assert '<span class="badge">1</span>' in body
    conversation_record_event(
        conversation=Conversation.objects.get(external_id=BACKEND_ID),
        type="resolved",
        at=timezone.now(),
        value=None,
    )
    assert _listed(agent.get("/", {"status": "escalated"}).content.decode()) == set()


def test_filters_offer_the_values_that_exist(agent: Any, world: World) -> None:
    from conversations.selectors import exchange_choices_forget

    exchange_choices_forget()  # cached for ten minutes in Redis, which outlives a test
    body = agent.get("/").content.decode()
    queue = re.search(r'<select name="queue".*?</select>', body, re.S).group(0)
    assert '<option value="billing"' in queue and "shipping" not in queue  # the agent's queues
    model = re.search(r'<select name="model".*?</select>', body, re.S).group(0)
    assert "claude-sonnet-4-5-20250929" in model and "gpt-5-mini-2025-08-07" in model
    finish = re.search(r'<select name="finish".*?</select>', body, re.S).group(0)
    assert "finished its answer (end_turn)" in finish
    # A value not offered is still accepted (and kept selected).
    body = agent.get("/", {"model": "claude-next"}).content.decode()
    assert '<option value="claude-next" selected>' in body


def test_paging_goes_both_ways_with_counts(client: Any, world: World) -> None:
    for i in range(120):
        ingest(exchange(f"page-{i:03d}", "billing"))
    c = client_for(client, world, "admin")
    first = c.get("/").content.decode()
    assert "122 conversations" not in first and "1\u201350 of 122" in first
    pages = [_listed(first)]
    url = re.search(r'href="\?([^"]+)" rel="next"', first).group(1).replace("&amp;", "&")
    second = c.get(f"/?{url}").content.decode()
    assert "51\u2013100 of 122" in second
    pages.append(_listed(second))
    back = re.search(r'href="\?([^"]+)" rel="prev"', second).group(1).replace("&amp;", "&")
    again = c.get(f"/?{back}").content.decode()
    assert _listed(again) == pages[0]
    assert "1\u201350 of 122" in again
    assert not pages[0] & pages[1]


def test_a_word_search_spanning_pages_is_not_counted(client: Any, world: World) -> None:
    for i in range(60):
        ingest(exchange(f"page-{i:03d}", "billing"))
    body = client_for(client, world, "admin").get("/", {"q": "order"}).content.decode()
    assert "1\u201350, newest" in body  # no "of N": counting would scan every match


def test_the_list_fragment_is_the_results_alone(agent: Any) -> None:
    response = agent.get("/", {"status": "escalated"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="results"')
    assert "<html" not in body and "HX-Request" in response["Vary"]
    assert "<html" in agent.get("/", {"status": "escalated"}).content.decode()


# --- The conversation page ---------------------------------------------------------------------


def test_the_page_names_the_backend_id_ticket_and_zone(agent: Any, settings: Any) -> None:
    settings.TICKET_URL_TEMPLATE = "https://desk.example.com/t/{ticket}"
    target = Conversation.objects.get(external_id=BACKEND_ID)
    agent.cookies["console_tz"] = "Europe/Paris"
    body = agent.get(f"/conversations/{target.pk}/").content.decode()
    assert f'<h1>Conversation <span class="cid">{BACKEND_ID}</span></h1>' in body
    assert f'href="https://desk.example.com/t/{TICKET}" rel="noopener noreferrer"' in body
    assert "Times in <strong>Europe/Paris</strong>" in body and "(your browser)" in body
    # 14:05 UTC, in Paris; with seconds, as the next turn falls in the same minute (issue 25)
    assert "2026-11-03 15:05:00 CET" in body
    assert SHIPMENT_ERROR in body and REFUND_ERROR in body
    assert "&lt;script&gt;window.__pwned" in body and "<script>window" not in body
    assert "Escalated to a person: tool failed (queue: tier 2)." in body


def test_a_zone_the_user_chose_beats_the_browser(agent: Any, world: World) -> None:
    target = Conversation.objects.get(external_id=BACKEND_ID)
    agent.cookies["console_tz"] = "Europe/Paris"
    before = table_counts()
    response = agent.post("/settings/", {"time_zone": "Asia/Tokyo"})
    assert response.status_code == 302
    assert UserPreference.objects.get(user=world.users["agent"]).time_zone == "Asia/Tokyo"
    row = _last_audit()
    assert (row.code, row.details) == (
        "preference.changed",
        {"preference": "time_zone", "value": "Asia/Tokyo"},
    )
    changed = {t for t, n in table_counts().items() if n != before[t]}
    assert changed <= {
        "default.console_userpreference",
        "default.audit_auditevent",
        "default.django_session",
    }
    body = agent.get(f"/conversations/{target.pk}/").content.decode()
    assert "Times in <strong>Asia/Tokyo</strong>" in body and "(your setting)" in body
    assert "2026-11-03 23:05:00 JST" in body  # seconds: the next turn is in the same minute


def test_a_bad_zone_is_refused_and_an_unknown_cookie_ignored(agent: Any) -> None:
    before = table_counts()
    response = agent.post("/settings/", {"time_zone": "Mars/Olympus"})
    assert response.status_code == 200 and b'role="alert"' in response.content
    assert table_counts() == before
    agent.cookies["console_tz"] = "Mars/Olympus"
    body = agent.get("/").content.decode()
    assert "times in UTC" in body


def test_a_tool_calls_record_as_a_page_and_a_fragment(agent: Any, world: World) -> None:
    target = Conversation.objects.get(external_id=BACKEND_ID)
    key = call_key(target)
    page = agent.get(f"/conversations/{target.pk}/calls/{key}/").content.decode()
    assert "<html" in page and "toolu_ship" in page and "output:$.error.code" in page
    fragment = agent.get(f"/conversations/{target.pk}/calls/{key}/", HTTP_HX_REQUEST="true")
    assert b"<html" not in fragment.content and b"toolu_ship" in fragment.content
    row = _last_audit()
    assert (row.code, row.conversation_id, row.details) == (
        "conversation.viewed",
        target.pk,
        {"page": "tool-call"},
    )
    assert agent.get(f"/conversations/{target.pk}/calls/99-9/").status_code == 404
    shipping = f"/conversations/{world.shipping.pk}/calls/{call_key(world.shipping)}/"
    count = AuditEvent.objects.count()
    assert agent.get(shipping).status_code == 404  # another queue: as missing
    assert AuditEvent.objects.count() == count


# --- Compliance --------------------------------------------------------------------------------


@pytest.fixture
def staff(client: Any, world: World) -> Any:
    return client_for(client, world, "compliance")


def _preview(staff: Any, **form: str) -> str:
    response = staff.post(
        "/compliance/deletions/new/", {"reason": "GDPR art. 17", "preview": "1", **form}
    )
    assert response.status_code == 200
    return response.content.decode()


def test_the_preview_warns_about_holds_and_unknown_customers(staff: Any, world: World) -> None:
    hold = legal_hold_place(scope="queue", queue="billing", reason="regulator inquiry R-12")
    html = _preview(staff, customer=world.billing.customer_external_id)
    assert f"Legal hold {hold.pk}</strong> covers queue <code>billing</code>" in html
    assert "regulator inquiry R-12" in html and "blocked" in html
    assert _last_audit().details["holds"] == [hold.pk]
    html = _preview(staff, customer="cus-typo")
    assert "No stored conversation belongs to customer <code>cus-typo</code>" in html
    assert "<strong>Legal hold" not in html
    html = _preview(staff, conversations=f"{world.shipping.external_id}\nconv-nope")
    assert "1 of the conversation ids named match no stored conversation" in html


def test_stores_are_named_in_words_in_one_order(staff: Any, world: World) -> None:
    customer = world.billing.customer_external_id
    preview = _preview(staff, customer=customer)
    order = re.findall(r'<code class="muted">([a-z]+\.[a-z]+)</code>', preview)
    assert order[0] == "conversations.conversation" and order[-1] == "conversations.datakey"
    assert "Messages (the encrypted verbatim store)" in preview
    request = deletion_request_submit(customer=customer, reason="r")
    retention_tick()
    detail = staff.get(f"/compliance/deletions/{request.pk}/").content.decode()
    counted, erased = detail.split('id="receipt"')
    assert re.findall(r'<code class="muted">([a-z]+\.[a-z]+)</code>', counted) == order
    assert re.findall(r'<code class="muted">([a-z]+\.[a-z]+)</code>', erased) == order


def test_a_hold_shows_the_id_typed_until_the_customer_is_erased(staff: Any, world: World) -> None:
    customer = world.billing.customer_external_id
    hold = legal_hold_place(scope="subject", customer=customer, reason="litigation L-7")
    legal_hold_place(scope="conversation", conversation_id=world.shipping.pk, reason="x")
    page = staff.get("/compliance/holds/").content.decode()
    assert f"customer <code>{customer}</code>" in page
    assert f"<code>{world.shipping.external_id}</code>" in page
    request = deletion_request_submit(customer=customer, reason="r")
    retention_tick()
    assert DeletionRequest.objects.get(pk=request.pk).status == "blocked"
    legal_hold_release(hold=hold, reason="settled")
    retention_tick()
    assert DeletionRequest.objects.get(pk=request.pk).status == "completed"
    assert LegalHold.objects.get(pk=hold.pk).subject == ""
    page = staff.get("/compliance/holds/").content.decode()
    assert customer not in page and "(erased)" in page


def test_receipts_export_as_csv_and_json(staff: Any, world: World) -> None:
    request = deletion_request_submit(customer=world.billing.customer_external_id, reason="=cmd")
    assert staff.get(f"/compliance/deletions/{request.pk}/receipt.json").status_code == 404
    retention_tick()
    response = staff.get(f"/compliance/deletions/{request.pk}/receipt.json")
    assert response["Content-Disposition"].startswith("attachment")
    body = json.loads(response.content)
    assert body["hmac_valid"] is True and body["conversations"] == 1
    assert body["stores"][0] == {
        "store": "main",
        "table": "conversations.conversation",
        "name": "Conversations",
        "rows": 1,
    }
    assert body["reason"] == "=cmd"  # JSON is data: kept as typed
    rows = list(
        csv.DictReader(
            io.StringIO(
                staff.get(f"/compliance/deletions/{request.pk}/receipt.csv").content.decode()
            )
        )
    )
    assert [r["table"] for r in rows] == [s["table"] for s in body["stores"]]
    assert all(r["hmac_valid"] == "yes" for r in rows)
    row = _last_audit()
    assert (row.code, row.details["page"], row.details["format"]) == (
        "deletion.viewed",
        "receipt",
        "csv",
    )
    assert world.billing.customer_external_id not in response.content.decode()


def test_the_audit_log_exports_readable_details(staff: Any, world: World, client: Any) -> None:
    deletion_request_submit(
        customer="cus-x", reason="=HYPERLINK(1)", actor=world.users["compliance"]
    )
    rows = list(
        csv.DictReader(io.StringIO(staff.get("/audit/export.csv?code=deletion.").content.decode()))
    )
    requested = next(r for r in rows if r["code"] == "deletion.requested")
    assert "reason: '=HYPERLINK(1)" not in requested["details_text"]  # not at a cell's start
    assert "reason: =HYPERLINK(1)" in requested["details_text"]
    assert json.loads(requested["details"])["reason"] == "=HYPERLINK(1)"
    body = json.loads(staff.get("/audit/export.json").content)
    assert body["rows"] and {"id", "at", "code", "details", "details_text"} <= set(body["rows"][0])
    assert _last_audit().details == {
        "page": "export",
        "filters": [],
        "results": len(body["rows"]),
        "format": "json",
    }
    page = staff.get("/audit/").content.decode()
    assert "<dt>page</dt><dd>export</dd>" in page  # details as pairs, not a Python dict
    assert "{&#x27;" not in page
    for role in ("agent", "reviewer"):
        assert client_for(client, world, role).get("/audit/export.csv").status_code == 404


# --- Admin -------------------------------------------------------------------------------------


def test_the_changelists_name_backend_id_and_customer(client: Any, world: World) -> None:
    admin = client_for(client, world, "admin")
    admin.force_login(world.users["admin"])
    world.users["admin"].is_superuser = True
    world.users["admin"].save()
    body = admin.get("/admin/conversations/conversation/").content.decode()
    assert "conv-billing" in body and "cus-conv-billing" in body
    body = admin.get("/admin/conversations/exchange/").content.decode()
    assert "conv-billing" in body and "cus-conv-billing" in body
    found = admin.get(
        "/admin/conversations/conversation/", {"q": "cus-conv-shipping"}
    ).content.decode()
    assert "conv-shipping" in found and "conv-billing<" not in found
    assert "Retention classes" in admin.get("/admin/").content.decode()


def test_the_policy_preview_picks_an_exchange_and_marks_the_changes(
    client: Any, world: World
) -> None:
    user = world.users["admin"]
    user.is_superuser = True
    user.save()
    admin = client_for(client, world, "admin")
    form = admin.get("/admin/conversations/fieldpolicy/preview/").content.decode()
    assert "conv-billing · cus-conv-billing · call 1 · get_order" in form
    exchange = world.billing.exchanges.get()
    response = admin.get(
        "/admin/conversations/fieldpolicy/preview/",
        {
            "pick": exchange.pk,
            "tool_name": "get_order",
            "side": "input",
            "path": "$.internal_note",
            "storage_class": "status",
        },
    )
    html = response.content.decode()
    assert "1 field changes" in html
    assert "<mark>input $.internal_note" in html
    assert "<mark>input:$.internal_note [not kept]</mark>" in html
    row = _last_audit()
    assert (row.code, row.conversation_id, row.details) == (
        "conversation.viewed",
        world.billing.pk,
        {"page": "policy-preview"},
    )


def test_the_zone_is_read_at_login_not_by_each_page(client: Any, world: World) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    UserPreference.objects.create(user=world.users["agent"], time_zone="Asia/Tokyo")
    client.force_login(world.users["agent"])
    with CaptureQueriesContext(connection) as first:
        body = client.get("/").content.decode()
    assert "times in Asia/Tokyo" in body
    assert not [q for q in first.captured_queries if "console_userpreference" in q["sql"]]
    assert not [q for q in first.captured_queries if q["sql"].startswith('UPDATE "django_session"')]
