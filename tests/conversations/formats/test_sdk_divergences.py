"""Issue 13: the six places where a format's accumulated message differed from what the provider's
own SDK builds from the same stream, each on a hand-made minimal stream under
tests/fixtures/streams (README there). Every expected message here is the SDK's (``anthropic``
beta ``accumulate_event``, ``openai`` ``ChatCompletionStreamState`` / ``ResponseStreamState``,
``ai`` ``readUIMessageStream``), serialised as the project stores a streamed turn; the
differential test (tests/conversations/formats/differential) runs the SDKs themselves on the same
files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conversations.blocks import Block, BlockClass, ParsedExchange
from conversations.formats import FormatError, get
from tests.conversations.requests import minimal_request

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"


def parse(fmt: str, name: str) -> ParsedExchange:
    stream = (STREAMS / name).read_text(encoding="utf-8")
    return get(fmt).parse(request=json.dumps(minimal_request(fmt)), response=None, stream=stream)


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --- 1. Anthropic compaction blocks ------------------------------------------------------------


def test_compaction_delta_fills_the_compaction_block() -> None:
    (message,) = parse("anthropic.messages", "anthropic-compaction.sse").output
    summary = (
        "The customer asked for a refund of order 1234; "
        "the order was found and the refund approved."
    )
    assert message.raw == compact(
        {
            "role": "assistant",
            "content": [
                {
                    "type": "compaction",
                    "content": summary,
                    "encrypted_content": "EqQBCkYIBxgCKkDcompactionblob==",
                },
                {"type": "text", "text": "Your refund is on its way."},
            ],
        }
    )
    # Still unknown (DESIGN section 1): no content on the Block, whatever the message holds.
    assert message.blocks[0] == Block("compaction", BlockClass.UNKNOWN)


# --- 2. Chat Completions audio -----------------------------------------------------------------


def test_audio_deltas_merge_into_one_audio_object() -> None:
    (message,) = parse("openai.chat", "openai-chat-audio.sse").output
    assert message.raw == compact(
        {
            "role": "assistant",
            "audio": {
                "id": "audio_6744a1b2c3",
                "transcript": "Your order has shipped.",
                "data": "UklGRiQAAABXQVZFZm10IBAAAAABAAEA",
                "expires_at": 1730003600,
            },
        }
    )


# --- 3. Anthropic tool input that JSON cannot hold ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("anthropic-tool-input-lone-surrogate.sse", "bad_unicode"),
        ("anthropic-tool-input-overflow.sse", "not_json"),
        ("anthropic-tool-input-nan.sse", "not_json"),
    ],
)
def test_tool_input_that_cannot_be_stored_as_json_is_refused(name: str, code: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse("anthropic.messages", name)
    assert (caught.value.field, caught.value.code) == ("stream", code)
    # The tool_use block's start event: where the input that does not fit began.
    assert caught.value.at == "$[1].data.content_block"


# --- 4. Responses items that never got output_item.done -----------------------------------------


def test_an_item_without_its_done_event_is_taken_from_the_completed_response() -> None:
    reasoning, message = parse("openai.responses", "openai-responses-no-item-done.sse").output
    assert reasoning.raw == compact(
        {
            "id": "rs_nodone_1",
            "type": "reasoning",
            "encrypted_content": "gAAAA-final-blob-after-the-summary",
            "summary": [{"type": "summary_text", "text": "**Checking the order**"}],
        }
    )
    assert json.loads(message.raw)["status"] == "completed"


# --- 5. AI SDK 6.x parts, and chunk types this code does not know -------------------------------


def test_ai_sdk_6_parts() -> None:
    parsed = parse("ai-sdk.ui", "ai-sdk-v6-parts.sse")
    (message,) = parsed.output
    assert message.raw == compact(
        {
            "id": "msg_v6_1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "text": "Looking up the order.",
                    "providerMetadata": {
                        "openai": {"itemId": "rs_v6_1", "reasoningEncryptedContent": None}
                    },
                    "state": "done",
                },
                {
                    "type": "tool-web_search",
                    "toolCallId": "ws_1",
                    "state": "output-available",
                    "input": {"query": "order 1234"},
                    "output": {"status": "completed"},
                    "providerExecuted": True,
                    "resultProviderMetadata": {"openai": {"itemId": "ws_v6_1"}},
                },
                {"type": "step-start"},
                {
                    "type": "tool-apply_patch",
                    "toolCallId": "patch_1",
                    "state": "input-streaming",
                    "input": "*** Begin Patch\n*** Update File: notes.txt\n",
                    "inputEncoding": "text",
                    "rawInput": "*** Begin Patch\n*** Update File: notes.txt\n",
                },
            ],
        }
    )
    patch = message.blocks[-1]
    assert (patch.tool_name, patch.status, patch.input) == (
        "apply_patch",
        "input-streaming",
        "*** Begin Patch\n*** Update File: notes.txt\n",
    )
    assert parsed.params.unknown_chunks == []


def test_an_unknown_chunk_type_is_ignored_and_flagged() -> None:
    parsed = parse("ai-sdk.ui", "ai-sdk-unknown-chunk.sse")
    assert parsed.output[0].raw == compact(
        {
            "id": "msg_unknown_1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "text", "text": "Your order has shipped.", "state": "done"},
            ],
        }
    )
    assert parsed.params.unknown_chunks == ["reasoning-file"]
    assert parsed.params.stream_error is None  # ignored, not an error: docs/formats.md says why


# --- 6. Surrogate pairs split across deltas; a Chat tool name split across chunks ---------------


@pytest.mark.parametrize(
    ("fmt", "name", "text"),
    [
        ("anthropic.messages", "anthropic-split-surrogate-pair.sse", "Thanks \U0001f600 bye"),
        ("openai.chat", "openai-chat-split-surrogate-pair.sse", "One moment \U0001f60a"),
        ("openai.responses", "openai-responses-split-surrogate-pair.sse", "Done \U0001f44d"),
        ("ai-sdk.ui", "ai-sdk-split-surrogate-pair.sse", "Merci \U0001f389"),
    ],
)
def test_a_surrogate_pair_split_across_two_deltas_is_one_character(
    fmt: str, name: str, text: str
) -> None:
    (message,) = parse(fmt, name).output
    assert text in message.raw
    message.raw.encode("utf-8")  # storable as it is
    assert [b.text for b in message.blocks if b.cls is BlockClass.VISIBLE] == [text]


def test_a_chat_tool_name_split_across_chunks_is_joined() -> None:
    (message,) = parse("openai.chat", "openai-chat-split-tool-name.sse").output
    assert message.raw == compact(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_split_1",
                    "type": "function",
                    "function": {
                        "name": "get_order_status",
                        "arguments": '{"order_id": "1234"}',
                    },
                }
            ],
        }
    )
    assert message.blocks[0].tool_name == "get_order_status"
