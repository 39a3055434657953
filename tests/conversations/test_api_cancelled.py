"""``cancelled``: a stream the chat stopped reading is stored as far as it arrived, flagged, and
replayed as stored; the same cut stream without it is refused; ``cancelled`` with a response or
of the wrong type is a 400 naming it. Nothing is stored by a refusal."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from conversations.models import Conversation, Exchange
from tests.conftest import post_json

URL = "/api/v1/exchanges"
pytestmark = pytest.mark.django_db

REQUEST = json.dumps(
    {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "messages": [{"role": "user", "content": "Where is order ORD-1?"}],
    }
)


def _event(data: dict[str, Any]) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


# The chat closed while the answer streamed: no content_block_stop, no message_delta, no
# message_stop, and the last event cut off mid-JSON.
CUT = (
    _event(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [],
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        }
    )
    + _event(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    + _event(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "I checked order ORD-1: it left"},
        }
    )
    + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"ty'
)


def _body(**extra: Any) -> dict[str, Any]:
    return {
        "conversation": "conv-cut",
        "customer": "cus-1",
        "format": "anthropic.messages",
        "request": REQUEST,
        "stream": CUT,
        **extra,
    }


def test_a_cancelled_stream_is_stored_as_far_as_it_arrived_and_flagged(api: Any) -> None:
    refused = post_json(api, URL, _body())
    assert refused.status_code == 400
    assert (refused.json()["field"], refused.json()["error"]) == ("stream", "truncated_stream")
    assert not Conversation.objects.exists()

    stored = post_json(api, URL, _body(cancelled=True))
    assert stored.status_code == 201, stored.json()
    (exchange,) = Exchange.objects.all()
    assert exchange.cancelled and exchange.streamed and not exchange.truncated
    assert exchange.response_model == "claude-sonnet-4-5-20250929"

    replay = api.get(reverse("api-conversation-messages", args=["conv-cut"]))
    assert replay.status_code == 200
    assert replay.content.endswith(
        b'{"role":"assistant","content":[{"type":"text","text":"I checked order ORD-1: it left"}]}'
        b"]}"
    )

    call_command("setup_roles", stdout=io.StringIO())
    browser = Client()
    browser.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    page = browser.get(reverse("conversation-detail", args=[exchange.conversation_id]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "cancelled by the chat before the end" in html
    assert "I checked order ORD-1: it left" in html


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"cancelled": True, "stream": None, "response": "{}"}, "cancelled_response"),
        ({"cancelled": "yes"}, "invalid"),
        ({"cancelled": 1}, "invalid"),
    ],
)
def test_cancelled_is_checked(api: Any, extra: dict[str, Any], code: str) -> None:
    body = {k: v for k, v in _body(**extra).items() if v is not None}
    response = post_json(api, URL, body)
    assert response.status_code == 400, response.json()
    error = response.json()
    assert (error["error"], error["field"], error["at"]) == (code, "cancelled", "$.cancelled")
    assert not Conversation.objects.exists()


def test_cancelled_false_or_null_is_a_whole_stream(api: Any) -> None:
    for value in (False, None):
        response = post_json(api, URL, _body(cancelled=value))
        assert response.status_code == 400
        assert response.json()["error"] == "truncated_stream"
