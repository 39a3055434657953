"""The bad-input matrix of POST /api/v1/exchanges: each case gets the one error shape, with the
field and JSON path, and no row is added to any table."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from conversations.models import UnknownBlockType
from tests.conftest import post_json
from tests.providers import FIXTURES

URL = "/api/v1/exchanges"
pytestmark = pytest.mark.django_db

REQUEST = json.dumps(
    {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
    }
)
RESPONSE = json.dumps(
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "hello"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
)
GOOD = {
    "conversation": "c1",
    "customer": "cus_1",
    "format": "anthropic.messages",
    "request": REQUEST,
    "response": RESPONSE,
}
STREAM = (
    FIXTURES / "anthropics-anthropic-sdk-python__incomplete_partial_json_response.txt"
).read_text()


def with_(**changes: Any) -> dict:
    body = dict(GOOD)
    for key, value in changes.items():
        if value is ...:
            body.pop(key, None)
        else:
            body[key] = value
    return body


CASES: list[tuple[str, Any, int, str, str, str | None]] = [
    # (id, body, status, error, field, at)
    ("not-json", b"{conversation: 1}", 400, "not_json", "body", "$"),
    ("empty-body", b"", 400, "required", "conversation", "$.conversation"),
    ("json-array", b"[]", 400, "invalid", "body", "$"),
    ("invalid-utf8", b'{"conversation": "\xff\xfe"}', 400, "invalid_utf8", "body", "$"),
    (
        "nul-escape",
        with_(conversation="c\u0000"),
        400,
        "invalid_string",
        "conversation",
        "$.conversation",
    ),
    ("raw-nul-byte", b'{"conversation": "c\x00"}', 400, "not_json", "body", "$"),
    (
        "lone-surrogate",
        json.dumps(with_(customer="\ud800x")),
        400,
        "invalid_string",
        "customer",
        "$.customer",
    ),
    ("deep-nesting", b"[" * 10_000 + b"]" * 10_000, 400, "too_deep", "body", "$"),
    (
        "deep-nesting-in-labels",
        json.dumps(with_(labels={}))
        .replace('"labels": {}', '"labels": {"a":' + "[" * 10_000 + "]" * 10_000 + "}")
        .encode(),
        400,
        "too_deep",
        "body",
        "$",
    ),
    (
        "missing-conversation",
        with_(conversation=...),
        400,
        "required",
        "conversation",
        "$.conversation",
    ),
    ("missing-request", with_(request=...), 400, "required", "request", "$.request"),
    (
        "missing-response-and-stream",
        with_(response=...),
        400,
        "response_or_stream",
        "response",
        "$.response",
    ),
    (
        "both-response-and-stream",
        with_(stream=STREAM),
        400,
        "response_or_stream",
        "response",
        "$.response",
    ),
    (
        "conversation-number",
        with_(conversation=12),
        400,
        "invalid",
        "conversation",
        "$.conversation",
    ),
    ("conversation-empty", with_(conversation=""), 400, "blank", "conversation", "$.conversation"),
    (
        "conversation-too-long",
        with_(conversation="x" * 201),
        400,
        "max_length",
        "conversation",
        "$.conversation",
    ),
    ("request-object", with_(request={"model": "m"}), 400, "invalid", "request", "$.request"),
    ("latency-string", with_(latency_ms="12"), 400, "invalid", "latency_ms", "$.latency_ms"),
    ("latency-negative", with_(latency_ms=-1), 400, "min_value", "latency_ms", "$.latency_ms"),
    (
        "started-at-garbage",
        with_(started_at="yesterday"),
        400,
        "invalid",
        "started_at",
        "$.started_at",
    ),
    ("labels-list", with_(labels=["billing"]), 400, "not_a_dict", "labels", "$.labels"),
    ("queue-number", with_(labels={"queue": 5}), 400, "invalid", "labels", "$.labels.queue"),
    ("unknown-field", with_(extra=1), 400, "unknown_field", "extra", "$.extra"),
    (
        "unknown-format",
        with_(format="gemini.generate"),
        400,
        "unknown_format",
        "format",
        "$.format",
    ),
    ("request-not-json", with_(request="{"), 400, "not_json", "request", "$"),
    ("request-deep", with_(request="[" * 10_000 + "]" * 10_000), 400, "too_deep", "request", "$"),
    ("request-array", with_(request="[]"), 400, "wrong_type", "request", "$"),
    (
        "messages-not-array",
        with_(request=json.dumps({"model": "m", "messages": {}})),
        400,
        "wrong_type",
        "request",
        "$.messages",
    ),
    (
        "message-role-number",
        with_(request=json.dumps({"model": "m", "messages": [{"role": 1, "content": "x"}]})),
        400,
        "wrong_type",
        "request",
        "$.messages[0].role",
    ),
    (
        "response-not-json",
        with_(response="<html>502 Bad Gateway</html>"),
        400,
        "not_json",
        "response",
        "$",
    ),
    (
        "response-wrong-shape",
        with_(response=json.dumps({"choices": []})),
        400,
        "missing",
        "response",
        "$.content",
    ),
    (
        "response-content-not-array",
        with_(response=json.dumps({"type": "message", "role": "assistant", "content": "x"})),
        400,
        "wrong_type",
        "response",
        "$.content",
    ),
    (
        "truncated-sse",
        with_(response=..., stream=STREAM[: len(STREAM) // 2]),
        400,
        "truncated_stream",
        "stream",
        None,
    ),
    (
        "sse-garbage",
        with_(response=..., stream="data: {not json}\n\n"),
        400,
        "not_json",
        "stream",
        "$[0].data",
    ),
]


@pytest.mark.parametrize(
    ("body", "status", "error", "field", "at"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_bad_input_is_refused_precisely_and_stores_nothing(
    api: APIClient, counts: Any, body: Any, status: int, error: str, field: str, at: str | None
) -> None:
    before = counts()
    response = post_json(api, URL, body)
    assert response.status_code == status, response.content
    payload = response.json()
    assert set(payload) == {"error", "detail", "field", "at"}
    assert payload["error"] == error, payload
    assert payload["field"] == field, payload
    if at is not None:
        assert payload["at"] == at, payload
    else:
        assert payload["at"].startswith("$"), payload
    assert payload["detail"]
    assert counts() == before


def test_good_body_of_the_matrix_is_accepted(api: APIClient) -> None:
    """The matrix's base body is valid: each case fails for its one change."""
    assert post_json(api, URL, GOOD).status_code == 201


@override_settings(INGEST_MAX_BODY_BYTES=2048)
def test_body_over_the_limit_is_413(api: APIClient, counts: Any) -> None:
    before = counts()
    response = post_json(
        api,
        URL,
        with_(
            request=json.dumps(
                {"model": "m", "messages": [{"role": "user", "content": "x" * 4000}]}
            )
        ),
    )
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert response.json()["field"] == "body"
    assert counts() == before


def test_wrong_content_type_is_415(api: APIClient, counts: Any) -> None:
    before = counts()
    response = api.generic("POST", URL, json.dumps(GOOD), content_type="text/plain")
    assert response.status_code == 415
    assert response.json()["field"] == "Content-Type"
    assert counts() == before


def test_wrong_method_is_405(api: APIClient) -> None:
    response = api.get(URL)
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"


def test_made_up_block_type_is_never_and_listed_for_admins(
    api: APIClient, admin_client: Any
) -> None:
    response_body = json.loads(RESPONSE)
    response_body["content"].append({"type": "hologram_projection", "hologram": "MARKER-HOLO-7731"})
    response = post_json(api, URL, with_(response=json.dumps(response_body)))
    assert response.status_code == 201
    from conversations.models import Block

    block = Block.objects.get(provider_type="hologram_projection")
    assert block.block_class == "unknown"  # treated as NEVER: nothing of it is projected
    assert (block.text, block.tool_name, block.fields) == ("", "", {})
    assert UnknownBlockType.objects.get(provider_type="hologram_projection").seen_count == 1
    page = admin_client.get("/admin/conversations/unknownblocktype/")
    assert page.status_code == 200
    assert b"hologram_projection" in page.content
    assert b"MARKER-HOLO-7731" not in page.content
    # The console page shows the block as unclassified, never its content.
    conversation_page = admin_client.get(f"/conversations/{block.conversation_id}/")
    assert b"MARKER-HOLO-7731" not in conversation_page.content
    assert b"unclassified block" in conversation_page.content
