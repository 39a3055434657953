"""Helpers for the retention tests: conversations ingested through the API, with planted text."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.test import APIClient

from tests.conftest import post_json

URL = "/api/v1/exchanges"


def exchange_body(
    conversation: str, customer: str, text: str, *, queue: str = "billing"
) -> dict[str, Any]:
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": f"question {text}"}],
    }
    response = {
        "id": f"msg_{conversation}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": f"answer {text}"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 7},
    }
    return {
        "conversation": conversation,
        "customer": customer,
        "format": "anthropic.messages",
        "request": json.dumps(request),
        "response": json.dumps(response),
        "labels": {"queue": queue},
    }


def ingest(api: APIClient, conversation: str, customer: str, text: str, **kw: Any) -> Any:
    response = post_json(api, URL, exchange_body(conversation, customer, text, **kw))
    assert response.status_code == 201, response.content
    return response
