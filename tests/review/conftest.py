"""A world for review tests: the roles, users of every kind, and conversations in each provider
format with planted markers in their reasoning and planted PII inside it.

Markers name what must be shown on the review page (thinking text, summaries, reasoning content,
AI SDK parts, a summary fetched from the fake provider) and what must never be shown anywhere
(signatures, redacted_thinking data, encrypted_content). Nothing here is mocked but the provider,
which is a real HTTP server on loopback (``fake_provider.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from conversations.models import Conversation, ReviewGrant
from conversations.reviews import review_grant_create
from tests.factories import ExchangeBodyFactory, UserFactory, ingest, roles

# Shown on the review page (after a purpose), nowhere else.
SHOWN = {
    "thinking": "MARKER-REVIEW-THINKING-a1f3",
    "oai_summary": "MARKER-REVIEW-OAI-SUMMARY-b7e2",
    "oai_content": "MARKER-REVIEW-OAI-CONTENT-c9d4",
    "chat": "MARKER-REVIEW-CHAT-REASONING-d2a8",
    "ai_sdk": "MARKER-REVIEW-AISDK-PART-e5b1",
    "fetched": "MARKER-REVIEW-FETCHED-SUMMARY-f6c7",
}
# Never shown, not even on the review page.
HIDDEN = {
    "signature": "MARKER-REVIEW-SIGNATURE-0a9e",
    "redacted_data": "MARKER-REVIEW-REDACTED-DATA-1b8f",
    "encrypted": "MARKER-REVIEW-ENCRYPTED-2c7a",
}
PII = {
    "email": "zoe.planted@example.com",
    "card": "4242 4242 4242 4242",
    "phone": "+44 20 7946 0958",
}
PURPOSE = {
    "purpose": "complaint",
    "reference": "SUP-4711",
    "statement": "Customer says the assistant refused a refund it should have offered.",
}
PASSWORD = "a-long-review-test-password"


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _body(name: str, fmt: str, request: Any, response: Any) -> dict[str, Any]:
    return ExchangeBodyFactory(
        conversation=name, format=fmt, request=compact(request), response=compact(response)
    )


def anthropic_body(name: str = "rv-anthropic") -> dict[str, Any]:
    content = [
        {
            "type": "thinking",
            "thinking": f"{SHOWN['thinking']}: the customer {PII['email']} paid with "
            f"{PII['card']}; I should check the refund policy.",
            "signature": HIDDEN["signature"],
        },
        {"type": "redacted_thinking", "data": HIDDEN["redacted_data"]},
        {"type": "thinking", "thinking": "", "signature": HIDDEN["signature"] + "-omitted"},
        {"type": "text", "text": "Let me look at your refund."},
    ]
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": f"Refund please, I am {PII['email']}"}],
    }
    response = {
        "id": "msg_review",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 50, "output_tokens": 90},
    }
    return _body(name, "anthropic.messages", request, response)


def openai_body(name: str = "rv-openai") -> dict[str, Any]:
    response = {
        "id": "resp_stored",
        "object": "response",
        "status": "completed",
        "model": "gpt-5-mini-2025-08-07",
        "output": [
            {
                "id": "rs_stored",
                "type": "reasoning",
                "encrypted_content": HIDDEN["encrypted"],
                "summary": [
                    {
                        "type": "summary_text",
                        "text": f"{SHOWN['oai_summary']}: call the customer on {PII['phone']}.",
                    }
                ],
                "content": [{"type": "reasoning_text", "text": SHOWN["oai_content"]}],
            },
            {
                "id": "msg_stored",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "I will call you.", "annotations": []}],
            },
        ],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 40,
            "output_tokens_details": {"reasoning_tokens": 32},
        },
    }
    request = {"model": "gpt-5-mini", "input": "Call me", "reasoning": {"summary": "auto"}}
    return _body(name, "openai.responses", request, response)


def openai_fetch_body(name: str, response_id: str) -> dict[str, Any]:
    """An OpenAI Responses exchange stored without a summary: only encrypted reasoning."""
    response = {
        "id": response_id,
        "object": "response",
        "status": "completed",
        "model": "gpt-5-2025-08-07",
        "output": [
            {
                "id": f"rs_{response_id}",
                "type": "reasoning",
                "encrypted_content": HIDDEN["encrypted"],
                "summary": [],
            },
            {
                "id": f"msg_{response_id}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
            },
        ],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 80,
            "output_tokens_details": {"reasoning_tokens": 64},
        },
    }
    return _body(name, "openai.responses", {"model": "gpt-5", "input": "Why?"}, response)


def fetched_response(response_id: str) -> dict[str, Any]:
    """What the fake provider returns for ``GET /v1/responses/{response_id}``."""
    return {
        "id": response_id,
        "object": "response",
        "status": "completed",
        "output": [
            {
                "id": f"rs_{response_id}",
                "type": "reasoning",
                "summary": [
                    {
                        "type": "summary_text",
                        "text": f"{SHOWN['fetched']}: write to {PII['email']} about it.",
                    }
                ],
            },
            {
                "id": "rs_other",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "another item"}],
            },
        ],
    }


def chat_body(name: str = "rv-chat") -> dict[str, Any]:
    response = {
        "id": "chatcmpl-review",
        "object": "chat.completion",
        "model": "deepseek-reasoner",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hello.",
                    "reasoning_content": SHOWN["chat"],
                },
                "finish_reason": "stop",
            }
        ],
    }
    request = {"model": "deepseek-reasoner", "messages": [{"role": "user", "content": "Hi"}]}
    return _body(name, "openai.chat", request, response)


def ai_sdk_body(name: str = "rv-aisdk") -> dict[str, Any]:
    response = {
        "id": "a-review",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": SHOWN["ai_sdk"], "state": "done"},
            {
                "type": "reasoning",
                "text": "",
                "providerMetadata": {"anthropic": {"redactedData": HIDDEN["redacted_data"]}},
                "state": "done",
            },
            {"type": "text", "text": "Hi!", "state": "done"},
        ],
    }
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}
    return _body(name, "ai-sdk.ui", {"messages": [user]}, response)


@dataclass
class World:
    users: dict[str, Any]
    conversations: dict[str, Conversation] = field(default_factory=dict)

    def grant(
        self,
        user: str = "reviewer",
        conversation: str = "anthropic",
        *,
        expires_in: timedelta = timedelta(days=1),
    ) -> ReviewGrant:
        return review_grant_create(
            reviewer=self.users[user],
            conversation=self.conversations[conversation],
            purpose=PURPOSE["purpose"],
            reference=PURPOSE["reference"],
            expires_at=timezone.now() + expires_in,
            granted_by=self.users["admin"],
        )


def make_world() -> World:
    roles()

    def user(name: str, group: str | None = None, **extra: Any) -> Any:
        queues = ["billing"] if group in ("support_agent", "reviewer") else []
        groups = [group] if group else []
        return UserFactory(
            username=name, raw_password=PASSWORD, groups=groups, queues=queues, **extra
        )

    users = {
        "agent": user("agent", "support_agent"),
        "reviewer": user("reviewer", "reviewer"),
        "other_reviewer": user("other_reviewer", "reviewer"),
        "compliance": user("compliance", "compliance"),
        "admin": user("admin", "admin", is_staff=True),
        "superuser": user("superuser", is_staff=True, is_superuser=True),
        "inactive": user("inactive", "reviewer"),
    }
    world = World(users)
    world.conversations = {
        "anthropic": ingest(anthropic_body()),
        "openai": ingest(openai_body()),
        "chat": ingest(chat_body()),
        "aisdk": ingest(ai_sdk_body()),
        "fetch": ingest(openai_fetch_body("rv-fetch", "resp_fetch_ok")),
    }
    return world


@pytest.fixture
def world(db: Any) -> World:
    return make_world()


@pytest.fixture(autouse=True)
def _no_real_provider(settings: Any) -> None:
    """No test reaches a real provider: no key unless a test sets one, and a base URL on the
    discard port of loopback."""
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9"
    settings.PROVIDER_TIMEOUT_SECONDS = 2.0
    settings.REVIEW_RATE_LIMIT = 20
    settings.REVIEW_ALERT_THRESHOLD = 10


def review_url(conversation: Conversation | int) -> str:
    pk = conversation if isinstance(conversation, int) else conversation.pk
    return f"/conversations/{pk}/review/"
