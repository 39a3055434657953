"""AI SDK UI exchanges through the API: hand-written payloads, and a message continued in place
after a client tool result (both versions kept, the later one current)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from conversations.models import Exchange, Message
from conversations.replay import envelope
from tests.conftest import post_json, raw_of

URL = "/api/v1/exchanges"
AI_SDK = Path(__file__).resolve().parent.parent / "fixtures" / "ai_sdk"
pytestmark = pytest.mark.django_db


def body(request: dict | str, *, response: dict | None = None, stream: str | None = None) -> dict:
    out = {
        "conversation": "chat-1",
        "customer": "cus_1",
        "format": "ai-sdk.ui",
        "request": request if isinstance(request, str) else json.dumps(request),
    }
    if response is not None:
        out["response"] = json.dumps(response)
    if stream is not None:
        out["stream"] = stream
    return out


def sse(*chunks: dict) -> str:
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


@pytest.mark.parametrize("answer", ["assistant-response.json", "assistant-stream.sse"])
def test_recorded_turn_replays_byte_identical(api: APIClient, answer: str) -> None:
    request = (AI_SDK / "chat-request.json").read_text()
    text = (AI_SDK / answer).read_text()
    payload = body(request) | ({"response": text} if answer.endswith(".json") else {"stream": text})
    response = post_json(api, URL, payload)
    assert response.status_code == 201, response.json()
    stored = list(Message.objects.order_by("sequence"))
    sent = json.loads(request)["messages"]
    assert [json.loads(raw_of(m)) for m in stored[: len(sent)]] == sent
    assert all(raw_of(m) in request for m in stored[: len(sent)])
    replay = api.get("/api/v1/conversations/chat-1/messages")
    assert replay.content == envelope(raw_of(m) for m in stored)


def test_continued_assistant_message_supersedes_the_sent_version(api: APIClient) -> None:
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Refund ORD-1?"}]}
    asking = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-askForConfirmation",
                "toolCallId": "c1",
                "state": "input-available",
                "input": {"message": "Refund 10 EUR?"},
            },
        ],
    }
    first = post_json(api, URL, body({"messages": [user]}, response=asking))
    assert first.status_code == 201
    # The browser answers the client tool and sends the same assistant message back, updated.
    answered = {
        **asking,
        "parts": [
            asking["parts"][0],
            {**asking["parts"][1], "state": "output-available", "output": "yes"},
        ],
    }
    stream = sse(
        {"type": "start", "messageId": "a1"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": "Refunded."},
        {"type": "text-end", "id": "t1"},
        {"type": "finish"},
    )
    second = post_json(api, URL, body({"messages": [user, answered]}, stream=stream))
    assert second.status_code == 201, second.json()
    # The answered tool call differs from what was stored on purpose: not a rewrite...
    assert second.json()["history_rewritten"] is False
    current = json.loads(api.get("/api/v1/conversations/chat-1/messages").content)["messages"]
    assert [m["id"] for m in current] == ["u1", "a1"]
    assert current[1]["parts"][-1] == {"type": "text", "text": "Refunded.", "state": "done"}
    # ...and both versions are kept as received, the earlier one no longer current.
    assert Message.objects.filter(superseded=True).count() == 1
    # The next turn sends the current history: nothing is flagged.
    third = post_json(
        api,
        URL,
        body(
            {
                "messages": [
                    *current,
                    {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Thanks"}]},
                ]
            },
            response={
                "id": "a2",
                "role": "assistant",
                "parts": [{"type": "text", "text": "Welcome"}],
            },
        ),
    )
    assert third.json()["history_rewritten"] is False, third.json()
    assert not Exchange.objects.filter(history_rewritten=True).exists()


@pytest.mark.parametrize(
    ("name", "unknown"),
    [("ai-sdk-unknown-chunk.sse", ["reasoning-file"]), ("ai-sdk-v6-parts.sse", [])],
)
def test_chunk_types_read_past_flag_the_exchange(
    api: APIClient, name: str, unknown: list[str]
) -> None:
    """Issue 13: a chunk type the format does not know is read past and the exchange says so."""
    stream = (AI_SDK.parent / "streams" / name).read_text(encoding="utf-8")
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Where is it?"}]}
    response = post_json(api, URL, body({"messages": [user]}, stream=stream))
    assert response.status_code == 201, response.json()
    assert Exchange.objects.get().unknown_chunks == unknown
