"""Labels that say what is true (issue 35): a restricted field is kept, and an agent's role may
not see it: "restricted: not shown to your role", never "[not kept]" nor "Kept as: drop"; last
activity is the latest message (an answer arrives ``latency_ms`` after its call started) or
event."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conversations.models import Conversation, FieldPolicy
from conversations.services import conversation_record_event, field_policy_save
from tests.factories import ExchangeBodyFactory, UserFactory, ingest, roles

pytestmark = pytest.mark.django_db

STARTED = datetime(2026, 11, 30, 2, 16, 40, tzinfo=UTC)


def _restricted_world() -> Conversation:
    roles()
    field_policy_save(
        policy=FieldPolicy(
            tool_name="get_order",
            side="output",
            path="$.shipping_address",
            storage_class="restricted",
            note="test",
        )
    )
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_order",
            "input": {"order_id": "ORD-1234567"}}  # fmt: skip
    first = ExchangeBodyFactory(conversation="conv-labels", content=[call], stop_reason="tool_use")
    ingest(first)
    result = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": '{"order_id": "ORD-1234567", "status": "shipped", '
                '"shipping_address": "12 rue de la Paix, 75002 Paris", "secret_note": "x"}',
            }
        ],
    }
    history = [
        {"role": "user", "content": "question text-labels"},
        {"role": "assistant", "content": [call]},
        result,
    ]
    second = ExchangeBodyFactory(
        conversation="conv-labels", history=history, text="labels", response_id="msg_2"
    )
    second["request"] = second["request"].replace(
        ',{"role": "user", "content": "question labels"}', ""
    )
    return ingest(second)


def _call_page(client: Any, conversation: Conversation) -> str:
    page = client.get(f"/conversations/{conversation.pk}/").content.decode()
    link = re.search(rf"/conversations/{conversation.pk}/calls/[^/]+/", page)
    assert link, "no tool call on the page"
    return client.get(link.group(0)).content.decode()


def test_an_agent_is_told_a_restricted_field_is_restricted_not_dropped(client: Any) -> None:
    conversation = _restricted_world()
    agent = UserFactory(username="agent", groups=["support_agent"], queues=["billing"])
    admin = UserFactory(username="admin", groups=["admin"])
    client.force_login(agent)
    page = client.get(f"/conversations/{conversation.pk}/").content.decode()
    assert "1 field restricted: not shown to your role" in page
    details = _call_page(client, conversation)
    row = re.search(r"<tr[^>]*>(?:(?!</tr>).)*shipping_address(?:(?!</tr>).)*</tr>", details, re.S)
    assert row, details
    assert "restricted: not shown to your role" in row.group(0)
    assert "[not kept]" not in row.group(0) and ">drop<" not in row.group(0)
    assert "rue de la Paix" not in details
    # A field no policy keeps is still called what it is.
    dropped = re.search(r"<tr[^>]*>(?:(?!</tr>).)*secret_note(?:(?!</tr>).)*</tr>", details, re.S)
    assert dropped and "[not kept]" in dropped.group(0) and ">drop<" in dropped.group(0)
    # Whoever may see restricted fields sees the value.
    client.force_login(admin)
    details = _call_page(client, conversation)
    assert "rue de la Paix" in details or "[address" in details
    assert "not shown to your role" not in details


def test_last_activity_is_the_latest_message(client: Any) -> None:
    roles()
    body = ExchangeBodyFactory(conversation="conv-late", text="late")
    body["started_at"] = STARTED.isoformat()
    body["latency_ms"] = 4_000
    conversation = ingest(body)
    answered = STARTED + timedelta(seconds=4)
    assert conversation.last_activity_at == answered
    agent = UserFactory(username="agent", groups=["support_agent"], queues=["billing"])
    client.force_login(agent)
    listing = client.get("/").content.decode()
    assert f'datetime="{answered.isoformat()}"' in listing
    # An event after the answer moves it on; one before does not move it back.
    conversation_record_event(
        conversation=conversation, type="rated", at=STARTED + timedelta(seconds=1), value={}
    )
    conversation.refresh_from_db()
    assert conversation.last_activity_at == answered
    later = STARTED + timedelta(minutes=2)
    conversation_record_event(conversation=conversation, type="resolved", at=later, value={})
    conversation.refresh_from_db()
    assert conversation.last_activity_at == later
