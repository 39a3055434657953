"""A small world for console tests: the roles, users of every kind, conversations in two queues
with planted markers in reasoning and in a dropped tool field, and planted PII in visible text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from conversations.models import Conversation
from tests.factories import ExchangeBodyFactory, UserFactory, ingest, roles

REASONING_MARKER = "MARKER-REASONING-CONSOLE-4d2a"
SIGNATURE_MARKER = "MARKER-SIGNATURE-CONSOLE-77e1"
DROPPED_MARKER = "MARKER-DROPPED-FIELD-CONSOLE-0b9c"
PII = {
    "email": "zoe.planted@example.com",
    "card": "4242 4242 4242 4242",
    "phone": "+44 20 7946 0958",
}


def exchange(conversation: str, queue: str, *, turns: int = 1) -> dict[str, Any]:
    """An Anthropic exchange after ``turns`` earlier turns, with PII in the customer's text, a
    planted marker in the reasoning and its signature, and one in a dropped tool field."""
    history: list[dict[str, Any]] = []
    for i in range(turns):
        history.append(
            {
                "role": "user",
                "content": f"Question {i}: my email is {PII['email']}, card {PII['card']}",
            }
        )
        history.append({"role": "assistant", "content": [{"type": "text", "text": f"Answer {i}"}]})
    return ExchangeBodyFactory(
        conversation=conversation,
        history=history,
        question=f"Call me on {PII['phone']} about ORD-7654321",
        content=[
            {"type": "thinking", "thinking": REASONING_MARKER, "signature": SIGNATURE_MARKER},
            {"type": "text", "text": "Let me look up your order."},
            {
                "type": "tool_use",
                "id": f"toolu_{conversation}",
                "name": "get_order",
                "input": {"order_id": "ORD-7654321", "internal_note": DROPPED_MARKER},
            },
        ],
        response_id="msg_x",
        response_model="claude-sonnet-4-5-20250929",
        stop_reason="tool_use",
        usage={
            "input_tokens": 100,
            "output_tokens": 121,
            "output_tokens_details": {"thinking_tokens": 121},
        },
        queue=queue,
    )


@dataclass
class World:
    billing: Conversation
    shipping: Conversation
    users: dict[str, Any]


ROLES = ["anonymous", "agent", "other_agent", "reviewer", "compliance", "admin", "inactive"]


@pytest.fixture
def world(db: Any) -> World:
    roles()
    billing = ingest(exchange("conv-billing", "billing"))
    shipping = ingest(exchange("conv-shipping", "shipping"))
    users: dict[str, Any] = {
        "anonymous": None,
        "agent": UserFactory(username="agent", groups=["support_agent"], queues=["billing"]),
        "other_agent": UserFactory(
            username="other_agent", groups=["support_agent"], queues=["shipping"]
        ),
        "reviewer": UserFactory(username="reviewer", groups=["reviewer"], queues=["billing"]),
        "compliance": UserFactory(username="compliance", groups=["compliance"]),
        "admin": UserFactory(username="admin", groups=["admin"], is_staff=True),
        "inactive": UserFactory(
            username="inactive", groups=["support_agent"], queues=["billing"], is_active=False
        ),
    }
    return World(billing, shipping, users)


def client_for(client: Any, world: World, role: str) -> Any:
    user = world.users[role]
    if user is not None:
        client.force_login(user) if user.is_active else client.logout()
    return client
