"""The registry: every format re-parses each stored message into the blocks ingest gave it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from conversations.formats import registry
from conversations.services import ExchangeInput, exchange_parse
from tests.conversations.requests import body_for
from tests.providers import fixture_files, load


@pytest.mark.parametrize("file_name", fixture_files())
def test_message_blocks_of_each_stored_message_equal_the_ingest_blocks(file_name: str) -> None:
    for recorded in load(file_name):
        body = body_for(recorded, conversation="c")
        data = ExchangeInput(
            conversation="c",
            customer="u",
            format=body["format"],
            request=body["request"],
            response=body.get("response"),
            stream=body.get("stream"),
        )
        parsed = exchange_parse(data)
        for message in [*parsed.history, *parsed.output]:
            again = registry.message_blocks(data.format, message.raw)
            # A tool input cut off by max_tokens is invalid JSON: the stored message keeps the
            # start's input, so only the ingest-time block had the partial text.
            expected = tuple(
                replace(b, input={}) if parsed.params.truncated and isinstance(b.input, str) else b
                for b in message.blocks
            )
            assert again == expected


def test_names_lists_the_four_formats() -> None:
    assert registry.names() == [
        "ai-sdk.ui",
        "anthropic.messages",
        "openai.chat",
        "openai.responses",
    ]


def test_match_form_drops_only_what_a_format_allows() -> None:
    item = {"type": "function_call", "status": "completed", "name": "f"}
    assert registry.match_form("openai.responses", item) == {"type": "function_call", "name": "f"}
    assert registry.match_form("anthropic.messages", item) == item
    assert json.dumps(registry.match_form("openai.chat", item)) == json.dumps(item)
