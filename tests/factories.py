"""Factories (factory_boy) for the data tests need: users with their roles and queues, ingest
bodies, and conversations stored the way the chat backend stores them (through the ingest
service, so every row a conversation has is there: messages encrypted, blocks projected, keys).

    agent = UserFactory(username="agent", groups=["support_agent"], queues=["billing"])
    body = ExchangeBodyFactory(conversation="c-1", text="MARK-1", queue="shipping")
    conversation = ConversationFactory(body__text="MARK-2")
    conversation = ConversationFactory(body=any_ingest_body)

Roles are the groups ``manage.py setup_roles`` creates: call ``roles()`` first (idempotent).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import factory
from django.contrib.auth.models import Group
from django.core.management import call_command

from conversations.ingest.body import exchange_input
from conversations.models import Conversation
from conversations.services import conversation_ingest_exchange, queue_grant


def roles() -> None:
    """The groups support_agent, reviewer, compliance and admin, with their permissions."""
    call_command("setup_roles", stdout=io.StringIO())


class UserFactory(factory.django.DjangoModelFactory):
    """A console user. ``groups``: role names; ``queues``: queue names the user may see."""

    class Meta:
        model = "auth.User"
        skip_postgeneration_save = True

    class Params:
        raw_password = factory.LazyAttribute(lambda o: f"pw-{o.username}")

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.LazyAttribute(lambda o: _hashed(o.raw_password))
    is_active = True

    @factory.post_generation
    def groups(self, create: bool, names: Sequence[str] | None, **_: Any) -> None:
        for name in names or ():
            self.groups.add(Group.objects.get(name=name))

    @factory.post_generation
    def queues(self, create: bool, names: Sequence[str] | None, **_: Any) -> None:
        for name in names or ():
            queue_grant(principal=self, queue_name=name)


def _hashed(raw: str) -> str:
    from django.contrib.auth.hashers import make_password

    return make_password(raw)


def _json(value: Any) -> str:
    return json.dumps(value)


class ExchangeBodyFactory(factory.DictFactory):
    """A ``POST /api/v1/exchanges`` body: one Anthropic Messages exchange, the customer's
    ``question`` and the assistant's ``answer`` (both carry ``text``, to plant a marker), after
    the ``history`` messages; ``content`` replaces the answer's content blocks (thinking,
    tool_use...). Any body field can be given as is (``request=...``, ``format=...``)."""

    class Params:
        text = factory.Sequence(lambda n: f"text-{n}")
        question = factory.LazyAttribute(lambda o: f"question {o.text}")
        answer = factory.LazyAttribute(lambda o: f"answer {o.text}")
        history: Sequence[dict[str, Any]] = ()
        content = factory.LazyAttribute(lambda o: [{"type": "text", "text": o.answer}])
        model = "claude-sonnet-4-5"
        response_model = "claude-sonnet-4-5"
        response_id = factory.LazyAttribute(lambda o: f"msg_{o.conversation}")
        stop_reason = "end_turn"
        usage = factory.LazyFunction(lambda: {"input_tokens": 5, "output_tokens": 7})
        queue = "billing"

    conversation = factory.Sequence(lambda n: f"conv-{n}")
    customer = factory.LazyAttribute(lambda o: f"cus-{o.conversation}")
    format = "anthropic.messages"
    request = factory.LazyAttribute(
        lambda o: _json(
            {
                "model": o.model,
                "max_tokens": 1024,
                "messages": [*o.history, {"role": "user", "content": o.question}],
            }
        )
    )
    response = factory.LazyAttribute(
        lambda o: _json(
            {
                "id": o.response_id,
                "type": "message",
                "role": "assistant",
                "model": o.response_model,
                "content": o.content,
                "stop_reason": o.stop_reason,
                "usage": o.usage,
            }
        )
    )
    labels = factory.LazyAttribute(lambda o: {"queue": o.queue} if o.queue else {})


class ConversationFactory(factory.Factory):
    """A conversation stored through ``conversation_ingest_exchange`` from ``body`` (an
    ``ExchangeBodyFactory`` unless given); returns its Conversation row."""

    class Meta:
        model = Conversation

    body = factory.SubFactory(ExchangeBodyFactory)

    @classmethod
    def _create(cls, model_class: type[Conversation], body: dict[str, Any]) -> Conversation:
        conversation_ingest_exchange(data=exchange_input(body))
        return model_class.objects.get(external_id=body["conversation"])

    @classmethod
    def _build(cls, model_class: type[Conversation], **kwargs: Any) -> Conversation:
        raise TypeError("a conversation exists only once ingested: use ConversationFactory()")


def ingest(body: dict[str, Any]) -> Conversation:
    """The conversation of ``body`` (an ingest body), stored through the real ingest service."""
    return ConversationFactory(body=body)


EXCHANGES_URL = "/api/v1/exchanges"


def post_exchange(api: Any, **fields: Any) -> Any:
    """POST an ``ExchangeBodyFactory(**fields)`` body to the API (as the chat backend does) and
    check it was stored (201)."""
    from tests.conftest import post_json

    response = post_json(api, EXCHANGES_URL, ExchangeBodyFactory(**fields))
    assert response.status_code == 201, response.content
    return response


def demo_conversation(fmt: str) -> list[dict[str, Any]]:
    """The bodies of the first demo conversation in format ``fmt`` (``demo_bodies`` rotates
    through the registered formats by name)."""
    from conversations.demo import demo_bodies
    from conversations.formats import names

    index = names().index(fmt)
    bodies = [
        b for b in demo_bodies(index + 1) if b["conversation"].startswith(f"conv_{index:06d}_")
    ]
    assert bodies and {b["format"] for b in bodies} == {fmt}
    return bodies
