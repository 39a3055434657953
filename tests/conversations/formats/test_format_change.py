"""A conversation whose format changes mid-way (issue 28): a backend that moves from the
Responses API to Chat Completions, or from OpenAI to Anthropic, posts the next exchange of the
same conversation in the new format. It is accepted, the stored messages keep the format they
came in (their exchange's), and the history comparison never reads one format's stored messages
with another format's parser (it refused the exchange: a 400 ``missing 'role'`` at a path in no
posted body).

The OpenAI-then-Anthropic conversation is pydantic-ai's recording
(tests/conversations/formats/corpus/pydantic-ai/, README there): gpt-5 on the Responses API,
then claude with the first answer's reasoning sent back as text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conversations.formats.registry import message_blocks
from conversations.models import Exchange, Message
from tests.conftest import post_json, raw_of
from tests.providers import load

URL = "/api/v1/exchanges"
CASSETTE = (
    Path(__file__).parent
    / "corpus"
    / "pydantic-ai"
    / "test_anthropic_model_thinking_part_from_other_model.yaml"
)
pytestmark = pytest.mark.django_db


def _bodies(conversation: str) -> list[dict[str, Any]]:
    out = []
    for interaction in yaml.safe_load(CASSETTE.read_text(encoding="utf-8"))["interactions"]:
        request = interaction["request"]
        fmt = "openai.responses" if "openai.com" in request["uri"] else "anthropic.messages"
        out.append(
            {
                "conversation": conversation,
                "customer": "cus_1",
                "format": fmt,
                "request": json.dumps(request["parsed_body"], ensure_ascii=False),
                "response": json.dumps(interaction["response"]["parsed_body"], ensure_ascii=False),
            }
        )
    return out


def _stored(conversation: str) -> list[tuple[str, str]]:
    rows = Message.objects.filter(conversation__external_id=conversation).order_by("sequence")
    return [(m.exchange.format, raw_of(m)) for m in rows.select_related("exchange")]


def test_openai_then_anthropic_is_accepted_and_each_message_keeps_its_format(api: Any) -> None:
    bodies = _bodies("switch-openai-anthropic")
    assert [b["format"] for b in bodies] == ["openai.responses", "anthropic.messages"]
    for body in bodies:
        response = post_json(api, URL, body)
        assert response.status_code == 201, response.json()
    stored = _stored("switch-openai-anthropic")
    assert {fmt for fmt, _ in stored} == {"openai.responses", "anthropic.messages"}
    for fmt, raw in stored:
        message_blocks(fmt, raw)  # each stored message reads in its own format
    exchanges = Exchange.objects.filter(conversation__external_id="switch-openai-anthropic")
    first, second = exchanges.order_by("id")
    # The history sent differs from the stored one (another protocol): said, not re-parsed.
    assert (first.rewrite_kind, second.rewrite_kind) == ("", "edited")


def test_responses_then_chat_is_accepted(api: Any) -> None:
    """Two real recordings in one conversation: a Responses tool loop, then DeepSeek's Chat
    Completions answer posted as the conversation's next exchange (its history in Chat form)."""
    conversation = "switch-responses-chat"
    (first, *_) = load("vercel-ai__openai-reasoning-encrypted-content.1.chunks.txt")
    responses = {
        "conversation": conversation,
        "customer": "cus_1",
        "format": "openai.responses",
        "request": json.dumps({"model": "gpt-5", "input": "Where is my order?"}),
        "stream": first.stream,
    }
    (chat,) = load("vercel-ai__deepseek-reasoning.chunks.txt")
    history = [
        {"role": "user", "content": "Where is my order?"},
        {"role": "assistant", "content": "Let me look it up."},
        {"role": "user", "content": "Thanks"},
    ]
    chat_body = {
        "conversation": conversation,
        "customer": "cus_1",
        "format": "openai.chat",
        "request": json.dumps({"model": "deepseek-reasoner", "messages": history}),
        "stream": chat.stream,
    }
    for body in (responses, chat_body):
        response = post_json(api, URL, body)
        assert response.status_code == 201, response.json()
    stored = _stored(conversation)
    assert [fmt for fmt, _ in stored][-1] == "openai.chat"
    for fmt, raw in stored:
        message_blocks(fmt, raw)
