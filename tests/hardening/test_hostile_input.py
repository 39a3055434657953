"""The requests an attacker's probe found answered 500 (or stored out-of-range values): each is
now a 4xx naming the field and the JSON path, stores nothing, and the pages of the queue it
aimed at still answer 200 afterwards (issue 12; conversations/bounds.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from conversations import bounds
from tests.conftest import post_json, table_counts
from tests.console.conftest import World, client_for
from tests.factories import ExchangeBodyFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/exchanges"
HUGE = "9" * 5000


def body(**changes: Any) -> dict[str, Any]:
    return ExchangeBodyFactory(**{"conversation": "conv-hostile", "queue": "billing", **changes})


def openai_chat(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "conversation": "conv-hostile",
        "customer": "cus-hostile",
        "format": "openai.chat",
        "request": json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}),
        "response": json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": "gpt-4o",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "hello"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
        ),
        "labels": {"queue": "billing"},
    }


def raw_with(field: str, literal: str, **changes: Any) -> bytes:
    """A body with ``field`` set to a JSON literal no encoder would write (a 5,000-digit int)."""
    text = json.dumps({**body(**changes), field: "@@"})
    return text.replace('"@@"', literal).encode()


def anthropic_response(**extra: Any) -> str:
    return json.dumps(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": "hello"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            **extra,
        }
    )


CASES: list[tuple[str, Any, str, str, str]] = [
    # (id, body, error, field, at)
    (
        "year-10000",
        body(started_at="9999-12-31T23:59:59-14:00"),
        "out_of_range",
        "started_at",
        "$.started_at",
    ),
    (
        "year-1-bc",
        body(started_at="0001-01-01T00:00:00+14:00"),
        "out_of_range",
        "started_at",
        "$.started_at",
    ),
    (
        "before-2000",
        body(started_at="1999-12-31T23:59:59Z"),
        "out_of_range",
        "started_at",
        "$.started_at",
    ),
    (
        "two-days-ahead",
        body(started_at=(datetime.now(UTC) + timedelta(days=2)).isoformat()),
        "out_of_range",
        "started_at",
        "$.started_at",
    ),
    (
        "30-february",
        body(started_at="2024-02-30T00:00:00Z"),
        "invalid",
        "started_at",
        "$.started_at",
    ),
    ("hour-25", body(started_at="2024-02-10T25:00:00Z"), "invalid", "started_at", "$.started_at"),
    ("month-13", body(started_at="2024-13-10T10:00:00Z"), "invalid", "started_at", "$.started_at"),
    (
        "offset-16",
        body(started_at="2024-02-10T10:00:00+16:00"),
        "invalid",
        "started_at",
        "$.started_at",
    ),
    (
        "offset-minus-23",
        body(started_at="2024-02-10T10:00:00-23:59"),
        "invalid",
        "started_at",
        "$.started_at",
    ),
    (
        "offset-minutes-75",
        body(started_at="2024-02-10T10:00:00+01:75"),
        "invalid",
        "started_at",
        "$.started_at",
    ),
    ("latency-huge-int", raw_with("latency_ms", HUGE), "max_value", "latency_ms", "$.latency_ms"),
    (
        "latency-huge-negative",
        raw_with("latency_ms", "-" + HUGE),
        "max_value",
        "latency_ms",
        "$.latency_ms",
    ),
    (
        "label-huge-int",
        raw_with("labels", '{"queue": "billing", "n": ' + HUGE + "}"),
        "max_value",
        "labels",
        "$.labels.n",
    ),
    (
        "request-huge-int",
        body(request='{"model": "m", "max_tokens": ' + HUGE + ', "messages": []}'),
        None,
        "request",
        None,
    ),
    (
        "response-huge-int",
        body(response=anthropic_response().replace('"input_tokens": 1', '"input_tokens": ' + HUGE)),
        None,
        "response",
        None,
    ),
    (
        "openai-negative-prompt-tokens",
        openai_chat({"prompt_tokens": -5, "completion_tokens": 1, "total_tokens": -4}),
        "min_value",
        "response",
        "$.usage.prompt_tokens",
    ),
    (
        "anthropic-negative-input-tokens",
        body(usage={"input_tokens": -5, "output_tokens": 1}),
        "min_value",
        "response",
        "$.usage.input_tokens",
    ),
    (
        "anthropic-count-beyond-its-column",
        body(usage={"input_tokens": 2**31, "output_tokens": 1}),
        "max_value",
        "response",
        "$.usage.input_tokens",
    ),
    (
        "anthropic-negative-max-tokens",
        body(
            request=json.dumps(
                {"model": "m", "max_tokens": -1, "messages": [{"role": "user", "content": "hi"}]}
            )
        ),
        "min_value",
        "request",
        "$.max_tokens",
    ),
    ("latency-negative", body(latency_ms=-1), "min_value", "latency_ms", "$.latency_ms"),
    ("latency-beyond-column", body(latency_ms=2**31), "max_value", "latency_ms", "$.latency_ms"),
    ("nul-in-queue", body(queue="bill\x00ing"), "invalid_string", "labels", "$.labels.queue"),
]


def pages_still_answer(client: Client, world: World) -> None:
    """The queue's pages for an agent who sees it: the list, a search, the page, the admin's."""
    client_for(client, world, "agent")
    for url in ("/", "/?q=answer", f"/conversations/{world.billing.pk}/"):
        assert client.get(url).status_code == 200, url
    client_for(client, world, "admin")
    for url in (
        "/admin/conversations/conversation/",
        "/admin/conversations/exchange/",
        "/?queue=billing",
    ):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize(
    ("case", "payload", "error", "field", "at"), CASES, ids=[c[0] for c in CASES]
)
def test_ingest_refuses_out_of_bounds_values(
    api: APIClient, client: Client, world: World, case: str, payload: Any, error: str | None,
    field: str, at: str | None,
) -> None:  # fmt: skip
    before = table_counts()
    response = post_json(api, URL, payload)
    assert response.status_code == 400, response.content
    got = response.json()
    assert set(got) == {"error", "detail", "field", "at"}
    assert got["field"] == field, got
    if error is not None:
        assert got["error"] == error, got
    if at is not None:
        assert got["at"] == at, got
    else:
        assert got["at"], got
    assert table_counts() == before
    pages_still_answer(client, world)


def test_the_ingest_command_holds_the_same_bounds(tmp_path: Any, world: World) -> None:
    from io import StringIO

    from django.core.management import CommandError, call_command

    lines = [
        json.dumps(body(started_at="9999-12-31T23:59:59-14:00")).encode(),
        raw_with("latency_ms", HUGE),
        json.dumps(openai_chat({"prompt_tokens": -5, "completion_tokens": 1})).encode(),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    before = table_counts()
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="3 line"):
        call_command("ingest", str(path), stdout=out, stderr=err)
    text = out.getvalue() + err.getvalue()
    for fragment in ("$.started_at", "$.latency_ms", "$.usage.prompt_tokens"):
        assert fragment in text, text
    counts = table_counts()
    assert {k: v for k, v in counts.items() if "audit" not in k} == {
        k: v for k, v in before.items() if "audit" not in k
    }


def test_a_valid_edge_is_still_accepted(api: APIClient) -> None:
    """The window's edges themselves: 2000-01-01 and an offset of exactly ±14:00."""
    for i, at in enumerate(
        ("2000-01-01T00:00:00Z", "2000-01-01T14:00:00+14:00", "2024-06-01T00:00:00-14:00")
    ):
        response = post_json(api, URL, body(conversation=f"conv-edge-{i}", started_at=at))
        assert response.status_code == 201, response.content


# --- the API's paths -----------------------------------------------------------------------------


def test_a_nul_in_the_path_is_a_400_in_the_error_shape(api: APIClient) -> None:
    response = api.get("/api/v1/conversations/a%00b/messages")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {
        "error": "invalid_string",
        "detail": "the path contains a NUL character",
        "field": "path",
        "at": "$",
    }


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/nothing-here"),
        ("post", "/api/v1/exchanges/"),
        ("get", "/api/v1/exchanges/"),
        ("get", "/api/"),
        ("get", "/api/v2/exchanges"),
        ("post", "/api/v1/conversations/x/messages/"),
        ("get", "/api/v1/deletion-requests/abc"),
        ("get", "/api/v1/deletion-requests/-1"),
        ("get", "/api/v1/deletion-requests/1.5"),
        ("post", "/api/v1/legal-holds/x/release"),
        ("delete", "/api/v1/deletion-requests/"),
    ],
)
def test_every_unknown_api_path_is_a_json_404(api: APIClient, method: str, path: str) -> None:
    response = getattr(api, method)(path)
    assert response.status_code == 404, (path, response.content[:200])
    assert response["Content-Type"].startswith("application/json")
    got = response.json()
    assert got["error"] == "not_found"
    assert set(got) == {"error", "detail", "field", "at"}


def test_405_and_415_have_the_error_shape(api: APIClient) -> None:
    response = api.delete(URL)
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
    response = api.generic("POST", URL, "conversation=x", content_type="text/plain")
    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"
    assert response.json()["field"] == "Content-Type"


# --- the compliance API --------------------------------------------------------------------------


@pytest.fixture
def desk(db: Any) -> APIClient:
    from conversations.services import service_token_create

    _, token = service_token_create(name="zendesk", scope="compliance")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_the_compliance_api_holds_ids_and_dates_in_bounds(desk: APIClient, world: World) -> None:
    before = table_counts()
    for path in (
        "/api/v1/deletion-requests/99999999999999999999999999",
        "/api/v1/deletion-requests/" + HUGE,
        "/api/v1/deletion-requests/0",
    ):
        response = desk.get(path)
        assert response.status_code == 404, (path, response.content[:200])
        assert response.json()["error"] == "not_found"
    response = desk.get("/api/v1/deletion-requests?before=99999999999999999999")
    assert response.status_code == 400
    assert response.json()["field"] == "before"
    response = desk.get("/api/v1/deletion-requests?status=%00")
    assert response.status_code == 400
    assert response.json()["field"] == "status"
    for due in ("9999-12-31T23:59:59-14:00", "2024-02-30T00:00:00Z", "2026-01-01T00:00:00+16:00"):
        response = post_json(
            desk,
            "/api/v1/deletion-requests",
            {"reason": "r", "reference": "ZD-9", "customer": "cus-conv-billing", "due": due},
        )
        assert response.status_code == 400, (due, response.content)
        assert response.json()["field"] == "due"
        assert response.json()["at"] == "$.due"
    after = table_counts()
    assert {k: v for k, v in after.items() if "audit" not in k} == {
        k: v for k, v in before.items() if "audit" not in k
    }


def test_an_event_at_out_of_bounds_is_a_400(api: APIClient, world: World) -> None:
    before = table_counts()
    for at in (
        "9999-12-31T23:59:59-14:00",
        "0001-01-01T00:00:00+14:00",
        "2024-02-10T10:00:00+16:00",
    ):
        response = post_json(
            api,
            "/api/v1/conversations/conv-billing/events",
            {"type": "rated", "at": at, "value": 5},
        )
        assert response.status_code == 400, (at, response.content)
        assert response.json()["field"] == "at"
        assert response.json()["at"] == "$.at"
    assert table_counts() == before


# --- the console ---------------------------------------------------------------------------------


def _cursor(text: str) -> str:
    import base64

    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("role", "url", "field"),
    [
        ("agent", "/?until=9999-12-31", "until"),
        ("agent", "/?since=0001-01-01", "since"),
        ("agent", "/?until=2024-02-30", "until"),
        ("agent", "/?after=" + _cursor("2026-01-01T00:00:00+16:00|5"), "after"),
        ("agent", "/?before=" + _cursor("2026-01-01T00:00:00+16:00|5"), "before"),
        ("agent", "/?after=" + _cursor("2026-01-01T00:00:00+00:00|" + "9" * 30), "after"),
        ("agent", "/?after=%ff%fe", "after"),
        ("compliance", "/audit/?until=9999-12-31", "until"),
        ("compliance", "/audit/?since=0001-01-01", "since"),
        ("compliance", "/audit/?conversation=99999999999999999999", "conversation"),
        ("compliance", "/audit/?before=99999999999999999999", "before"),
        ("compliance", "/audit/export.csv?until=9999-12-31", "until"),
    ],
)
def test_console_query_strings_out_of_bounds_are_400s(
    client: Client, world: World, role: str, url: str, field: str
) -> None:
    client_for(client, world, role)
    response = client.get(url)
    assert response.status_code == 400, (url, response.status_code)
    assert field in response.content.decode()
    pages_still_answer(client, world)


@pytest.mark.parametrize(
    "url",
    [
        "/admin/conversations/conversation/?queue=%00",
        "/admin/conversations/conversation/?q=%00",
        "/admin/conversations/conversation/?%00=1",
        "/admin/conversations/exchange/?format=a%00",
        "/?queue=%00",
        "/audit/?actor=%00",
    ],
)
def test_a_nul_in_any_query_string_is_a_400(client: Client, world: World, url: str) -> None:
    client_for(client, world, "admin")
    response = client.get(url)
    assert response.status_code == 400, url
    assert "NUL" in response.content.decode()
    pages_still_answer(client, world)


def test_huge_ids_in_console_paths_are_404s(client: Client, world: World) -> None:
    client_for(client, world, "admin")
    for url in (
        "/conversations/99999999999999999999999/",
        "/conversations/" + HUGE + "/",
        "/compliance/deletions/99999999999999999999999/",
    ):
        assert client.get(url).status_code == 404, url
    # The admin's answer for a missing object: back to the index with a message.
    response = client.get("/admin/conversations/conversation/99999999999999999999999/change/")
    assert response.status_code == 302


def test_bounds_are_pure_and_exact() -> None:
    w = bounds.Window(earliest=datetime(2000, 1, 1, tzinfo=UTC), future=timedelta(days=1))
    now = datetime(2026, 6, 1, tzinfo=UTC)
    assert bounds.parse_timestamp("2026-06-02T00:00:00Z", w, now) == now + timedelta(days=1)
    with pytest.raises(bounds.OutOfBounds):
        bounds.parse_timestamp("2026-06-02T00:00:01Z", w, now)
    assert bounds.parse_timestamp("2026-05-31T10:00:00", w, now).tzinfo is UTC
    assert (
        bounds.parse_timestamp("2026-05-31 10:00:00.123456789+05:30", w, now).microsecond == 123456
    )
    for bad in (
        "",
        "2026-05-31",
        "2026-05-31T10:00:00+1400x",
        "\uff12\uff10\uff12\uff16-05-31T10:00:00Z",
        5,
        None,
    ):
        with pytest.raises(bounds.OutOfBounds):
            bounds.parse_timestamp(bad, w, now)
    assert bounds.check_count(0) == 0
    for bad_count in (-1, 2**31, True, 1.5, "1"):
        with pytest.raises(bounds.OutOfBounds):
            bounds.check_count(bad_count)
    with pytest.raises(bounds.OutOfBounds):
        bounds.check_text("a\x00b")
    assert bounds.parse_id("42") == 42
    for bad_id in ("0", "-1", "1e3", "²", "9" * 20, ""):
        with pytest.raises(bounds.OutOfBounds):
            bounds.parse_id(bad_id)
    assert bounds.clamp(datetime.max.replace(tzinfo=UTC)) == bounds.CLAMP_MAX


def test_an_id_with_a_slash_or_a_line_break_can_be_replayed(api: APIClient) -> None:
    """Ingest takes any characters in a conversation id: replay and events reach every one."""
    from urllib.parse import quote

    for cid in ("a/b", "line\nbreak", "trailing/", "/messages"):
        assert post_json(api, URL, body(conversation=cid)).status_code == 201
        path = quote(cid, safe="")
        response = api.get(f"/api/v1/conversations/{path}/messages")
        assert response.status_code == 200, cid
        assert json.loads(response.content)["messages"]
        response = post_json(
            api,
            f"/api/v1/conversations/{path}/events",
            {"type": "rated", "at": "2026-01-01T00:00:00Z", "value": 5},
        )
        assert response.status_code == 201, cid


def test_unknown_query_parameters_are_400s(api: APIClient, desk: APIClient, world: World) -> None:
    for client, url in (
        (api, "/api/v1/conversations/conv-billing/messages?x=1"),
        (desk, "/api/v1/deletion-requests?status=pending&sort=id"),
        (desk, "/api/v1/legal-holds?active=true&x="),
        (desk, "/api/v1/deletion-requests/1?x=1"),
    ):
        response = client.get(url)
        assert response.status_code == 400, url
        assert response.json()["error"] == "unknown_field"
        assert response.json()["field"] in ("x", "sort")


@pytest.mark.parametrize("due", ["9999-12-31", "0001-01-01", "2024-02-30"])
def test_the_deletion_form_holds_its_due_date_in_bounds(
    client: Client, world: World, due: str
) -> None:
    client_for(client, world, "compliance")
    before = table_counts()
    response = client.post(
        "/compliance/deletions/new/",
        {"customer": "cus-conv-billing", "reason": "GDPR art. 17", "due": due},
    )
    assert 400 <= response.status_code < 500 or response.status_code == 200, response.status_code
    assert "due" in response.content.decode().lower() or "date" in response.content.decode()
    after = table_counts()
    assert {k: v for k, v in after.items() if "audit" not in k} == {
        k: v for k, v in before.items() if "audit" not in k
    }
    pages_still_answer(client, world)
