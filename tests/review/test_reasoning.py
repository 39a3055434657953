"""The reader of reasoning in stored messages (conversations/reviews/reasoning.py and each
format's reader): pure, no database."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.formats import names
from conversations.reviews.reasoning import (
    Trace,
    TraceKind,
    Withheld,
    fetched_reasoning,
    reasoning_of,
)


def read(fmt: str, value: Any) -> list[Trace]:
    return reasoning_of(fmt, json.dumps(value))


def test_anthropic_thinking_redacted_and_omitted() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "weigh the refund", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "thinking", "thinking": "", "signature": "sig2"},
            {"type": "thinking", "thinking": ""},  # nothing at all: nothing to say
            {"type": "text", "text": "visible answer"},
            {"type": "tool_use", "id": "t", "name": "n", "input": {"thinking": "no"}},
        ],
    }
    assert read("anthropic.messages", message) == [
        Trace(TraceKind.THINKING, "weigh the refund"),
        Trace(TraceKind.THINKING, withheld=Withheld.REDACTED),
        Trace(TraceKind.THINKING, withheld=Withheld.OMITTED),
    ]
    assert read("anthropic.messages", {"role": "user", "content": "plain"}) == []


def test_openai_reasoning_items() -> None:
    item = {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [
            {"type": "summary_text", "text": "first"},
            {"type": "summary_text", "text": "second"},
        ],
        "content": [{"type": "reasoning_text", "text": "raw"}],
        "encrypted_content": "opaque",
    }
    assert read("openai.responses", item) == [
        Trace(TraceKind.SUMMARY, "first", item_id="rs_1"),
        Trace(TraceKind.SUMMARY, "second", item_id="rs_1"),
        Trace(TraceKind.REASONING_TEXT, "raw", item_id="rs_1"),
    ]
    bare = {"id": "rs_2", "type": "reasoning", "summary": [], "encrypted_content": "opaque"}
    assert read("openai.responses", bare) == [
        Trace(TraceKind.SUMMARY, withheld=Withheld.MISSING, item_id="rs_2")
    ]
    message = {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}
    assert read("openai.responses", message) == []
    assert reasoning_of("openai.responses", '"a string input"') == []


def test_openai_fetched_response() -> None:
    body = {
        "output": [
            {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]},
            {"id": "m", "type": "message", "content": []},
        ]
    }
    fmt = "openai.responses"
    assert fetched_reasoning(fmt, body) == [Trace(TraceKind.SUMMARY, "s", item_id="rs_1")]
    assert fetched_reasoning(fmt, {"output": "no"}) == []
    assert fetched_reasoning(fmt, []) == []


def test_chat_reasoning_fields() -> None:
    message = {
        "role": "assistant",
        "content": "Hi",
        "reasoning_content": "deepseek thought",
        "reasoning": "openrouter thought",
        "reasoning_details": [
            {"type": "reasoning.summary", "summary": "summed"},
            {"type": "reasoning.text", "text": "detail"},
            {"type": "reasoning.encrypted", "data": "opaque"},
        ],
    }
    assert read("openai.chat", message) == [
        Trace(TraceKind.REASONING_CONTENT, "deepseek thought"),
        Trace(TraceKind.REASONING_CONTENT, "openrouter thought"),
        Trace(TraceKind.SUMMARY, "summed"),
        Trace(TraceKind.REASONING_CONTENT, "detail"),
        Trace(TraceKind.REASONING_CONTENT, withheld=Withheld.REDACTED),
    ]
    assert read("openai.chat", {"role": "assistant", "content": "Hi"}) == []


def test_ai_sdk_reasoning_parts() -> None:
    message = {
        "id": "a",
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "text": "part"},
            {
                "type": "reasoning",
                "text": "",
                "providerMetadata": {"anthropic": {"redactedData": "x"}},
            },
            {
                "type": "reasoning",
                "text": "",
                "providerMetadata": {"anthropic": {"signature": "x"}},
            },
            {"type": "reasoning", "text": "", "providerMetadata": {"openai": {"itemId": "rs"}}},
            {"type": "text", "text": "visible"},
        ],
    }
    assert read("ai-sdk.ui", message) == [
        Trace(TraceKind.REASONING_PART, "part"),
        Trace(TraceKind.REASONING_PART, withheld=Withheld.REDACTED),
        Trace(TraceKind.REASONING_PART, withheld=Withheld.OMITTED),
    ]


@pytest.mark.parametrize("raw", ["", "{", "[1,2]", "null", '{"content": 5}', '{"parts": {}}'])
@pytest.mark.parametrize("fmt", names())
def test_unexpected_shapes_are_skipped_not_raised(fmt: str, raw: str) -> None:
    assert reasoning_of(fmt, raw) == []


def test_an_unknown_format_has_no_reader() -> None:
    assert reasoning_of("gemini.generate", '{"thought": "x"}') == []
