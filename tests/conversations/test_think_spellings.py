"""A Chat answer whose ``content`` opens with the model's deliberation spelled otherwise than the
servers' exact ``<think>`` token (``<THINK>``, attributes, ``</think >``, mixed case) keeps it
out of the agent's page, the text exports and the live stream's events, as ``<think>`` is: the
openai_chat profile's ``Inline`` rule is read the same way at ingest and live."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.live import state
from conversations.models import Block, Conversation
from tests.conftest import post_json
from tests.live.conftest import chunk_body, live_prefix, stored_conversation
from tests.live.test_api_chunks import send

__all__ = ["live_prefix"]

pytestmark = pytest.mark.django_db

SPELLINGS = [
    ("<THINK>{m} look it up</THINK>\n\n", "upper"),
    ('<think reason="x">{m} look it up</think>', "attributes"),
    ("  <Think>{m} look it up</think  >\n", "closing-spaces"),
    ("<think data-a='1' >{m} look it up</ThInK>", "mixed"),
    ("<think/>{m} never closed", "self-closing"),
]
ANSWER = "Your order ships on Tuesday."


def exchange_body(conversation: str, content: str) -> dict[str, Any]:
    request = {"model": "qwq-32b", "messages": [{"role": "user", "content": "where is it?"}]}
    message = {"role": "assistant", "content": content}
    response = {
        "id": "c1",
        "object": "chat.completion",
        "model": "qwq-32b",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    return {
        "format": "openai.chat",
        "conversation": conversation,
        "customer": "cus-think",
        "labels": {"queue": "billing"},
        "request": json.dumps(request),
        "response": json.dumps(response),
    }


@pytest.mark.parametrize(("spelled", "name"), SPELLINGS, ids=[n for _, n in SPELLINGS])
def test_the_page_and_the_exports_never_show_the_span(
    api: APIClient, admin_client: Any, spelled: str, name: str
) -> None:
    marker = f"PLANTED-SPELLED-THINK-{name.upper()}"
    answer = "" if name == "self-closing" else ANSWER
    body = exchange_body(f"think-{name}", spelled.format(m=marker) + answer)
    response = post_json(api, "/api/v1/exchanges", body)
    assert response.status_code == 201, response.content
    pk = Conversation.objects.get(external_id=f"think-{name}").pk
    kept = Block.objects.filter(conversation_id=pk, provider_type="think")
    assert kept.count() == 1 and kept.get().text in (None, "")
    for url in (
        f"/conversations/{pk}/",
        *(f"/conversations/{pk}/export.{f}" for f in ("md", "txt", "json")),
    ):
        page = admin_client.get(url)
        assert page.status_code == 200, url
        text = page.content.decode()
        assert marker not in text, url
        assert "look it up" not in text, url
        if answer:
            assert answer in text, url


@pytest.mark.parametrize(("spelled", "name"), SPELLINGS, ids=[n for _, n in SPELLINGS])
def test_the_live_events_never_carry_the_span(api: APIClient, spelled: str, name: str) -> None:
    marker = f"PLANTED-LIVE-THINK-{name.upper()}"
    pk = stored_conversation(api, f"live-think-{name}", "openai.chat")
    content = spelled.format(m=marker) + ANSWER
    pieces = [content[i : i + 3] for i in range(0, len(content), 3)]
    for seq, piece in enumerate(pieces):
        event = {
            "id": "c2",
            "object": "chat.completion.chunk",
            "model": "qwq-32b",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
        }
        body = chunk_body(
            None, f"live-think-{name}", seq, f"data: {json.dumps(event)}\n\n", format="openai.chat"
        )
        assert send(api, body).status_code == 202
    events = state.events_after(pk, 0)
    text = json.dumps(events)
    assert marker not in text and "look it up" not in text
    shown = "".join(e.get("text", "") for e in events if e["type"] == "text")
    # What is shown is the answer's beginning (the hold-back keeps its tail until the close).
    assert ANSWER.startswith(shown) if name != "self-closing" else shown == ""
    assert any(e["type"] == "thinking" for e in events)
