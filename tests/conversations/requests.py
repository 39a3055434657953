"""Minimal provider requests for recordings that kept only the response."""

from __future__ import annotations

import json

from tests.providers import Recorded

MINIMAL_REQUEST = {
    "anthropic.messages": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Where is my order ORD-1234567?"}],
    },
    "openai.responses": {"model": "gpt-5-mini", "input": "Where is my order ORD-1234567?"},
    "openai.chat": {
        "model": "deepseek-reasoner",
        "messages": [{"role": "user", "content": "Where is my order ORD-1234567?"}],
    },
    "ai-sdk.ui": {
        "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Where is my order?"}]}
        ]
    },
}


def body_for(recorded: Recorded, *, conversation: str, customer: str = "cus_1") -> dict:
    body = {
        "conversation": conversation,
        "customer": customer,
        "format": recorded.format,
        "request": recorded.request
        or json.dumps(MINIMAL_REQUEST[recorded.format], ensure_ascii=False),
        "labels": {"queue": "billing"},
    }
    if recorded.response is not None:
        body["response"] = recorded.response
    else:
        body["stream"] = recorded.stream
    return body
