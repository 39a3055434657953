"""POST /api/v1/conversations/{conversation}/events: what the customer did next."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.demo import demo_bodies
from conversations.models import Conversation, ConversationEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation(api: APIClient) -> Conversation:
    api.post("/api/v1/exchanges", next(demo_bodies(1)), format="json")
    return Conversation.objects.get()


def url(conversation: Conversation | str) -> str:
    external = conversation if isinstance(conversation, str) else conversation.external_id
    return f"/api/v1/conversations/{external}/events"


def test_event_is_recorded(api: APIClient, conversation: Conversation) -> None:
    response = api.post(
        url(conversation),
        {"type": "rated", "at": "2026-11-30T10:00:00Z", "value": 4},
        format="json",
    )
    assert response.status_code == 201
    event = ConversationEvent.objects.get()
    assert (event.type, event.value, event.conversation_id) == ("rated", 4, conversation.pk)
    assert response.json()["id"] == event.pk
    conversation.refresh_from_db()
    assert conversation.last_activity_at.isoformat().startswith("2026-11-30T10:00")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "shouted", "at": "2026-11-30T10:00:00Z"}, "type"),
        ({"type": "rated"}, "at"),
        ({"type": "rated", "at": "soon"}, "at"),
        ({"type": "rated", "at": "2026-11-30T10:00:00Z", "extra": True}, "extra"),
    ],
)
def test_bad_event_is_refused(
    api: APIClient, conversation: Conversation, body: dict, field: str, counts: Any
) -> None:
    before = counts()
    response = api.post(url(conversation), body, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert response.json()["at"] == f"$.{field}"
    assert counts() == before


def test_event_for_a_missing_conversation_is_404(api: APIClient, counts: Any) -> None:
    before = counts()
    response = api.post(url("nope"), {"type": "rated", "at": "2026-11-30T10:00:00Z"}, format="json")
    assert response.status_code == 404
    assert counts() == before


def test_event_needs_a_token(conversation: Conversation) -> None:
    response = APIClient().post(
        url(conversation), {"type": "rated", "at": "2026-11-30T10:00:00Z"}, format="json"
    )
    assert response.status_code == 401
