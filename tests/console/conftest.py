"""A small world for console tests: the roles, users of every kind, conversations in two queues
with planted markers in reasoning and in a dropped tool field, and planted PII in visible text."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command

from conversations.ingest.planning import exchange_input
from conversations.models import Conversation
from conversations.services import conversation_ingest_exchange, queue_grant

REASONING_MARKER = "MARKER-REASONING-CONSOLE-4d2a"
SIGNATURE_MARKER = "MARKER-SIGNATURE-CONSOLE-77e1"
DROPPED_MARKER = "MARKER-DROPPED-FIELD-CONSOLE-0b9c"
PII = {
    "email": "zoe.planted@example.com",
    "card": "4242 4242 4242 4242",
    "phone": "+44 20 7946 0958",
}


def exchange(conversation: str, queue: str, *, turns: int = 1) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for i in range(turns):
        messages.append(
            {
                "role": "user",
                "content": f"Question {i}: my email is {PII['email']}, card {PII['card']}",
            }
        )
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"Answer {i}"}]})
    messages.append({"role": "user", "content": f"Call me on {PII['phone']} about ORD-7654321"})
    content = [
        {"type": "thinking", "thinking": REASONING_MARKER, "signature": SIGNATURE_MARKER},
        {"type": "text", "text": "Let me look up your order."},
        {
            "type": "tool_use",
            "id": f"toolu_{conversation}",
            "name": "get_order",
            "input": {"order_id": "ORD-7654321", "internal_note": DROPPED_MARKER},
        },
    ]
    return {
        "conversation": conversation,
        "customer": f"cus-{conversation}",
        "format": "anthropic.messages",
        "request": json.dumps(
            {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": messages}
        ),
        "response": json.dumps(
            {
                "id": "msg_x",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": content,
                "stop_reason": "tool_use",
                "usage": {
                    "input_tokens": 100,
                    "output_tokens": 121,
                    "output_tokens_details": {"thinking_tokens": 121},
                },
            }
        ),
        "labels": {"queue": queue},
    }


def ingest(body: dict[str, Any]) -> Conversation:
    conversation_ingest_exchange(data=exchange_input(body))
    return Conversation.objects.get(external_id=body["conversation"])


@dataclass
class World:
    billing: Conversation
    shipping: Conversation
    users: dict[str, Any]


ROLES = ["anonymous", "agent", "other_agent", "reviewer", "compliance", "admin", "inactive"]


@pytest.fixture
def world(db: Any) -> World:
    call_command("setup_roles", stdout=io.StringIO())
    billing = ingest(exchange("conv-billing", "billing"))
    shipping = ingest(exchange("conv-shipping", "shipping"))
    User = get_user_model()
    users: dict[str, Any] = {"anonymous": None}

    def make(name: str, group: str | None, **extra: Any) -> Any:
        user = User.objects.create_user(name, password="pw-" + name, **extra)
        if group:
            user.groups.add(Group.objects.get(name=group))
        users[name] = user
        return user

    queue_grant(principal=make("agent", "support_agent"), queue_name="billing")
    queue_grant(principal=make("other_agent", "support_agent"), queue_name="shipping")
    queue_grant(principal=make("reviewer", "reviewer"), queue_name="billing")
    make("compliance", "compliance")
    make("admin", "admin", is_staff=True)
    inactive = make("inactive", "support_agent", is_active=True)
    queue_grant(principal=inactive, queue_name="billing")
    inactive.is_active = False
    inactive.save()
    return World(billing, shipping, users)


def client_for(client: Any, world: World, role: str) -> Any:
    user = world.users[role]
    if user is not None:
        client.force_login(user) if user.is_active else client.logout()
    return client
