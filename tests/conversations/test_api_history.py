"""History stored once, rewrites flagged, idempotency, tokens."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.models import Conversation, Exchange, IdempotencyKey, Message, ServiceToken
from conversations.selectors import conversation_message_raws
from tests.conftest import post_json
from tests.conversations.requests import body_for
from tests.providers import load

URL = "/api/v1/exchanges"
pytestmark = pytest.mark.django_db


def anthropic_body(
    messages: list[Any], reply: str, *, conversation: str = "c1", raw_request: str | None = None
) -> dict:
    request = raw_request or json.dumps(
        {"model": "claude-sonnet-4-5", "max_tokens": 512, "messages": messages}
    )
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": reply}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return {
        "conversation": conversation,
        "customer": "cus_1",
        "format": "anthropic.messages",
        "request": request,
        "response": json.dumps(response),
    }


def assistant(reply: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": reply}]}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def raws(conversation: str = "c1") -> list[str]:
    return conversation_message_raws(Conversation.objects.get(external_id=conversation))


@pytest.mark.parametrize(
    ("file_name", "new"),
    [
        ("pydantic-pydantic-ai__test_anthropic_tool_with_thinking.yaml", 1),
        ("pydantic-pydantic-ai__test_anthropic_model_thinking_part_redacted.yaml", 1),
        # pause_turn continues the same assistant turn: nothing new before the answer.
        ("pydantic-pydantic-ai__test_pause_turn_web_search_vcr.yaml", 0),
        ("pydantic-pydantic-ai__test_openai_responses_thinking_with_tool_calls.yaml", 1),
    ],
)
def test_tool_loop_history_is_stored_once(api: APIClient, file_name: str, new: int) -> None:
    first, second = load(file_name)
    r1 = post_json(api, URL, body_for(first, conversation="loop")).json()
    r2 = post_json(api, URL, body_for(second, conversation="loop")).json()
    sent_first = json.loads(first.request)
    sent_second = json.loads(second.request)
    history_key = "messages" if "messages" in sent_second else "input"
    # The second request replays the first exchange's history and answer: only what follows is new.
    assert r2["history_rewritten"] is False, r2
    assert r2["sequences"][0] == len(r1["sequences"])
    new_in_second = len(sent_second[history_key]) - len(r1["sequences"])
    assert new_in_second == new  # the tool's result (or, for pause_turn, nothing)
    total = Message.objects.filter(conversation__external_id="loop").count()
    assert total == len(r1["sequences"]) + len(r2["sequences"])
    # ...which is the second history plus its answer: nothing of the first was stored twice.
    answer = len(r2["sequences"]) - new_in_second
    assert total == len(sent_second[history_key]) + answer
    assert len(sent_first[history_key]) < len(sent_second[history_key])


def test_history_differing_only_in_serialisation_is_the_same(api: APIClient) -> None:
    post_json(api, URL, anthropic_body([user("Where is ORD-1?")], "Shipped."))
    # The same history, re-serialised: other whitespace, escapes and key order.
    resend = (
        '{"max_tokens":512,"messages":[ {"content":"Where is ORD\\u002d1?","role":"user"} ,'
        ' {"content":[{"text":"Shipped.","type":"text"}],"role":"assistant"},'
        ' {"role":"user","content":"Thanks"}],"model":"claude-sonnet-4-5"}'
    )
    response = post_json(api, URL, anthropic_body([], "You're welcome.", raw_request=resend))
    assert response.status_code == 201
    assert response.json()["history_rewritten"] is False
    assert response.json()["sequences"] == [2, 3]
    stored = raws()
    assert stored[0] == json.dumps(user("Where is ORD-1?"))  # as first received, not the resend
    assert stored[2] == '{"role":"user","content":"Thanks"}'


def test_rewritten_history_is_flagged_and_both_paths_replay(api: APIClient) -> None:
    first = post_json(api, URL, anthropic_body([user("Where is ORD-1?")], "Shipped.")).json()
    edited = [user("Where is ORD-2?"), assistant("Shipped."), user("Thanks")]
    response = post_json(api, URL, anthropic_body(edited, "Welcome."))
    assert response.status_code == 201
    assert response.json()["history_rewritten"] is True
    assert response.json()["rewritten_at"] == 0
    assert response.json()["branch"] == ""  # the model's answer was sent after the change
    exchange = Exchange.objects.get(pk=response.json()["exchange"])
    assert (exchange.history_rewritten, exchange.rewritten_at) == (True, 0)
    # The latest path is the history as the backend sent it last (each element's bytes as first
    # received: the answer it sent again is the stored one); the first path is still there.
    assert [json.loads(r) for r in raws()] == [*edited, assistant("Welcome.")]
    # The message sent again unchanged is the stored one: only the edited question is new.
    assert response.json()["sequences"] == [2, 3, 4]
    replay = api.get(f"/api/v1/conversations/c1/messages?exchange={first['exchange']}")
    assert [json.loads(m) for m in [json.dumps(x) for x in replay.json()["messages"]]] == [
        user("Where is ORD-1?"),
        assistant("Shipped."),
    ]


def test_a_change_is_flagged_once_and_later_turns_compare_with_it(api: APIClient) -> None:
    post_json(api, URL, anthropic_body([user("a")], "b"))
    changed = [user("a"), assistant("B!"), user("c")]
    flagged = post_json(api, URL, anthropic_body(changed, "d")).json()
    assert (flagged["history_rewritten"], flagged["rewritten_at"]) == (True, 1)
    later = post_json(api, URL, anthropic_body([*changed, assistant("d"), user("e")], "f")).json()
    assert later["history_rewritten"] is False and later["branch"] == ""


def test_dropped_message_is_a_rewrite_at_its_position(api: APIClient) -> None:
    post_json(api, URL, anthropic_body([user("a")], "b"))
    post_json(api, URL, anthropic_body([user("a"), assistant("b"), user("c")], "d"))
    response = post_json(api, URL, anthropic_body([user("a"), user("c")], "e"))
    assert response.json()["history_rewritten"] is True
    assert response.json()["rewritten_at"] == 1


def test_idempotency_key_makes_a_retry_a_no_op(api: APIClient) -> None:
    body = anthropic_body([user("Where is ORD-1?")], "Shipped.")
    first = post_json(api, URL, body, HTTP_IDEMPOTENCY_KEY="retry-1")
    again = post_json(api, URL, body, HTTP_IDEMPOTENCY_KEY="retry-1")
    assert first.status_code == 201
    assert again.status_code == 201
    assert again.json() == first.json()
    assert Exchange.objects.count() == 1
    assert Message.objects.count() == 2
    assert IdempotencyKey.objects.count() == 1


def test_idempotency_key_reused_with_another_body_is_refused(api: APIClient, counts: Any) -> None:
    post_json(api, URL, anthropic_body([user("a")], "b"), HTTP_IDEMPOTENCY_KEY="k")
    before = counts()
    response = post_json(api, URL, anthropic_body([user("other")], "b"), HTTP_IDEMPOTENCY_KEY="k")
    assert response.status_code == 409
    assert response.json()["error"] == "idempotency_key_reused"
    assert response.json()["field"] == "Idempotency-Key"
    assert counts() == before


def test_conversation_of_another_customer_is_refused(api: APIClient, counts: Any) -> None:
    post_json(api, URL, anthropic_body([user("a")], "b"))
    before = counts()
    body = anthropic_body([user("a"), assistant("b"), user("c")], "d") | {"customer": "cus_2"}
    response = post_json(api, URL, body)
    assert response.status_code == 409
    assert response.json() == {
        "error": "customer_mismatch",
        "detail": "this conversation belongs to another customer",
        "field": "customer",
        "at": None,
    }
    assert counts() == before


def test_queue_comes_from_labels(api: APIClient) -> None:
    post_json(
        api,
        URL,
        anthropic_body([user("a")], "b") | {"labels": {"queue": "returns", "tier": "gold"}},
    )
    conversation = Conversation.objects.get(external_id="c1")
    assert conversation.queue == "returns"
    assert conversation.labels == {"queue": "returns", "tier": "gold"}


@pytest.mark.parametrize(
    ("header", "expected_error"),
    [
        (None, "not_authenticated"),
        ("Bearer nope", "authentication_failed"),
        ("Token x", "not_authenticated"),
        ("Bearer a b", "authentication_failed"),
    ],
)
def test_ingest_needs_a_valid_token(
    db: Any, header: str | None, expected_error: str, counts: Any
) -> None:
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    before = counts()
    response = post_json(client, URL, anthropic_body([user("a")], "b"))
    assert response.status_code == 401
    assert response.json()["error"] == expected_error
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert counts() == before


def test_revoked_token_is_refused(api: APIClient) -> None:
    ServiceToken.objects.update(revoked_at="2026-01-01T00:00:00Z")
    assert post_json(api, URL, anthropic_body([user("a")], "b")).status_code == 401
    assert api.get("/api/v1/conversations/c1/messages").status_code == 401


def test_replay_of_a_missing_conversation_is_404(api: APIClient) -> None:
    response = api.get("/api/v1/conversations/nope/messages")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_replay_needs_a_token(db: Any) -> None:
    assert APIClient().get("/api/v1/conversations/c1/messages").status_code == 401
