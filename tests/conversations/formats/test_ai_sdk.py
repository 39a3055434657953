"""ai-sdk.ui: the AI SDK UI chat request, the assistant UIMessage and the UI message stream
(pure Python, no database).

The payloads under tests/fixtures/ai_sdk are hand-written (no AI SDK UI recordings exist); any
recording of this format added under tests/fixtures/providers is picked up too.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversations.blocks import Block, BlockClass, ParsedExchange
from conversations.formats import FormatError, get
from conversations.formats.ai_sdk import FORMAT
from conversations.formats.ai_sdk.js import fix_json as _fix_json
from conversations.formats.base import compact
from tests.conversations.formats.json_paths import paths, replaced
from tests.providers import Recorded, fixture_files, format_of, load

PARSER = get(FORMAT)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ai_sdk"
REQUEST = (FIXTURES / "chat-request.json").read_text(encoding="utf-8")
RESPONSE = (FIXTURES / "assistant-response.json").read_text(encoding="utf-8")
STREAM = (FIXTURES / "assistant-stream.sse").read_text(encoding="utf-8")

MIN_REQUEST = json.dumps(
    {"messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}
)


def _recorded() -> list[Recorded]:
    found = []
    for name in fixture_files():
        try:
            fmt = format_of(name)
        except KeyError:
            continue
        if fmt == FORMAT:
            found.extend(load(name))
    return found


EXCHANGES: list[Recorded] = [
    Recorded("ai_sdk/response", FORMAT, REQUEST, response=RESPONSE),
    Recorded("ai_sdk/stream", FORMAT, REQUEST, stream=STREAM),
    *_recorded(),
]


def parse(
    *, request: str = MIN_REQUEST, response: str | None = None, stream: str | None = None
) -> ParsedExchange:
    return PARSER.parse(request=request, response=response, stream=stream)


def sse(*chunks: dict[str, Any] | str, done: bool = True) -> str:
    """SSE text as the AI SDK writes it: ``data: <JSON>`` per chunk (a str is sent verbatim)."""
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines)


def streamed(*chunks: dict[str, Any] | str, request: str = MIN_REQUEST, done: bool = True) -> Any:
    """The accumulated message of a synthetic stream, and the parse."""
    parsed = parse(request=request, stream=sse(*chunks, done=done))
    return json.loads(parsed.output[0].raw), parsed


def text_chunks(pid: str, *deltas: str) -> list[dict[str, Any]]:
    return [
        {"type": "text-start", "id": pid},
        *({"type": "text-delta", "id": pid, "delta": d} for d in deltas),
        {"type": "text-end", "id": pid},
    ]


START = {"type": "start", "messageId": "msg_1"}
FINISH = {"type": "finish", "finishReason": "stop"}


def events(text: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[6:])
        for line in text.split("\n")
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


# -------------------------------------------------------------------------------------------
# Every fixture parses


@pytest.mark.parametrize("exchange", EXCHANGES, ids=[e.name for e in EXCHANGES])
def test_every_fixture_parses(exchange: Recorded) -> None:
    parsed = parse(
        request=exchange.request or MIN_REQUEST, response=exchange.response, stream=exchange.stream
    )
    assert len(parsed.output) == 1
    out = parsed.output[0]
    assert out.role == "assistant"
    assert json.loads(out.raw)["role"] == "assistant"
    assert parsed.history, "the request's messages become the history"
    assert parsed.history_is_full is True


# -------------------------------------------------------------------------------------------
# Request: history


def test_history_is_one_message_per_element_with_exact_source_text() -> None:
    parsed = parse(request=REQUEST, response=RESPONSE)
    elements = json.loads(REQUEST)["messages"]
    assert [m.role for m in parsed.history] == ["user", "assistant", "user", "assistant", "user"]
    assert len(parsed.history) == len(elements)
    position = 0
    for message, element in zip(parsed.history, elements, strict=True):
        found = REQUEST.index(message.raw, position)
        assert found > position  # in order, never overlapping
        position = found + len(message.raw)
        assert message.raw.startswith("{") and message.raw.endswith("}")
        assert json.loads(message.raw) == element


def test_history_raw_keeps_escapes_and_whitespace_byte_for_byte() -> None:
    element = (
        '{ "id":"u1" ,"role":"user",\n "parts":[{"type":"text","text":"caf\\u00e9 \\"x\\""}] }'
    )
    request = '{"messages":[ ' + element + ' ],\n"trigger":"submit-message"}'
    parsed = parse(request=request, response=RESPONSE)
    assert parsed.history[0].raw == element
    assert parsed.history[0].raw.encode("utf-8") == element.encode("utf-8")
    assert parsed.history[0].blocks[0].text == 'café "x"'


def _shape(block: Block) -> tuple[Any, ...]:
    return (block.type, block.cls, block.tool_name, block.call_id, block.is_error, block.status)


def test_history_blocks_are_typed_and_classified_in_order() -> None:
    history = parse(request=REQUEST, response=RESPONSE).history
    first_answer = history[1].blocks
    assert [_shape(b) for b in first_answer] == [
        ("reasoning", BlockClass.NEVER, None, None, None, None),
        (
            "tool-getOrderStatus",
            BlockClass.AUDIT,
            "getOrderStatus",
            "toolu_01HxQ7bTz3VfJc9wS2kLmN4p",
            False,
            "output-available",
        ),
        ("text", BlockClass.VISIBLE, None, None, None, None),
    ]
    assert first_answer[0].redacted is False  # the thinking text is there, only hidden
    assert first_answer[1].input == {"orderId": "A-1042"}
    assert first_answer[1].output["trackingId"] == "JD014600006161234567"
    assert first_answer[2].text.startswith("Your order A-1042 is on its way")

    second_answer = history[3].blocks
    assert [_shape(b) for b in second_answer] == [
        ("reasoning", BlockClass.NEVER, None, None, None, None),
        (
            "dynamic-tool",
            BlockClass.AUDIT,
            "crm_lookup_customer",
            "toolu_01Bq8VnK2rYxW5cT7mPzD3sF",
            False,
            "output-available",
        ),
        (
            "tool-getRefundStatus",
            BlockClass.AUDIT,
            "getRefundStatus",
            "toolu_01Nc3RkW9xZqT6vY1bLsJ8eH",
            True,
            "output-error",
        ),
        ("data-refundNotice", BlockClass.UNKNOWN, None, None, None, None),
        ("source-url", BlockClass.UNKNOWN, None, None, None, None),
        ("text", BlockClass.VISIBLE, None, None, None, None),
    ]
    assert second_answer[0].redacted is True  # empty text + redactedData: withheld
    assert second_answer[2].input == {"orderId": "A-0999"}
    assert second_answer[2].output == "Refund service unavailable (HTTP 503)"
    assert [b.text for b in history[0].blocks] == [
        "Hi, where is my order A-1042? It was supposed to arrive yesterday."
    ]


def test_step_start_gets_no_block() -> None:
    request = json.dumps(
        {
            "messages": [
                {
                    "id": "a",
                    "role": "assistant",
                    "parts": [{"type": "step-start"}, {"type": "text", "text": "x"}],
                }
            ]
        }
    )
    blocks = parse(request=request, response=RESPONSE).history[0].blocks
    assert [b.type for b in blocks] == ["text"]


@pytest.mark.parametrize(
    ("meta", "redacted"),
    [
        ({"anthropic": {"signature": "sig"}}, True),
        ({"anthropic": {"redactedData": "abc"}}, True),
        ({"google": {"thoughtSignature": "abc"}}, True),
        ({"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "gAAA"}}, True),
        ({"openai": {"itemId": "rs_1"}}, False),
        ({"anthropic": {"signature": ""}}, False),
        (None, False),
    ],
    ids=[
        "signature",
        "redacted-data",
        "thought-signature",
        "encrypted",
        "item-only",
        "empty",
        "none",
    ],
)
def test_empty_reasoning_with_a_withheld_marker_is_redacted(meta: Any, redacted: bool) -> None:
    part: dict[str, Any] = {"type": "reasoning", "text": "", "state": "done"}
    if meta is not None:
        part["providerMetadata"] = meta
    response = json.dumps({"id": "m", "role": "assistant", "parts": [part]})
    (block,) = parse(response=response).output[0].blocks
    assert block.cls is BlockClass.NEVER
    assert block.redacted is redacted


def test_reasoning_with_text_is_not_redacted_even_with_a_signature() -> None:
    part = {"type": "reasoning", "text": "x", "providerMetadata": {"anthropic": {"signature": "s"}}}
    response = json.dumps({"id": "m", "role": "assistant", "parts": [part]})
    assert parse(response=response).output[0].blocks[0].redacted is False


@pytest.mark.parametrize(
    "ptype",
    ["source-url", "source-document", "file", "data-weather", "step-finish", "compaction"],
)
def test_unclassified_parts_are_unknown_and_carry_nothing(ptype: str) -> None:
    part = {"type": ptype, "url": "https://x.test", "data": {"secret": 1}, "text": "t"}
    response = json.dumps({"id": "m", "role": "assistant", "parts": [part]})
    (block,) = parse(response=response).output[0].blocks
    assert block == Block(type=ptype, cls=BlockClass.UNKNOWN)


def test_requested_model_comes_from_the_body_when_present() -> None:
    assert parse(request=REQUEST, response=RESPONSE).params.requested_model == (
        "anthropic/claude-sonnet-4.5"
    )
    assert parse(response=RESPONSE).params.requested_model is None


# -------------------------------------------------------------------------------------------
# Response


def test_response_raw_is_the_exact_text_trimmed_of_surrounding_whitespace() -> None:
    out = parse(request=REQUEST, response=RESPONSE).output[0]
    assert out.raw.encode("utf-8") == RESPONSE.strip(" \t\n\r").encode("utf-8")
    padded = "\r\n  \t" + RESPONSE + "\n\n "
    again = parse(request=REQUEST, response=padded).output[0]
    assert again.raw.encode("utf-8") == out.raw.encode("utf-8")
    start = padded.index(again.raw)
    assert padded[:start].strip() == ""
    assert padded[start + len(again.raw) :].strip() == ""


def test_response_blocks_and_params() -> None:
    parsed = parse(request=REQUEST, response=RESPONSE)
    blocks = parsed.output[0].blocks
    assert [b.cls for b in blocks] == [BlockClass.NEVER, BlockClass.AUDIT, BlockClass.VISIBLE]
    assert blocks[1].tool_name == "getShipmentTracking"
    assert blocks[1].input == {"carrier": "DHL", "trackingId": "JD014600006161234567"}
    assert blocks[1].output["status"] == "out_for_delivery"
    params = parsed.params
    assert params.response_id == "msg_a3_5d1f88"
    assert (
        params.usage.input_tokens,
        params.usage.cache_read_tokens,
        params.usage.cache_write_tokens,
        params.usage.output_tokens,
        params.usage.reasoning_tokens,
    ) == (2310, 1792, None, 187, 64)
    assert params.stop_reason is None  # a UIMessage carries none
    assert params.truncated is False
    assert params.stream_error is None


def test_usage_v6_details_shape_is_read() -> None:
    usage = {
        "inputTokens": 100,
        "inputTokenDetails": {"noCacheTokens": 10, "cacheReadTokens": 80, "cacheWriteTokens": 10},
        "outputTokens": 50,
        "outputTokenDetails": {"textTokens": 20, "reasoningTokens": 30},
    }
    response = json.dumps(
        {"id": "m", "metadata": {"usage": usage}, "role": "assistant", "parts": []}
    )
    got = parse(response=response).params.usage
    assert (got.input_tokens, got.cache_read_tokens, got.cache_write_tokens) == (100, 80, 10)
    assert (got.output_tokens, got.reasoning_tokens) == (50, 30)


def test_no_usage_is_invented() -> None:
    response = json.dumps({"id": "m", "metadata": {"tokens": 5}, "role": "assistant", "parts": []})
    got = parse(response=response).params.usage
    assert got.input_tokens is None and got.output_tokens is None


# -------------------------------------------------------------------------------------------
# Stream: the recorded turn


def test_stream_accumulates_to_the_response_of_the_same_turn() -> None:
    parsed = parse(request=REQUEST, stream=STREAM)
    raw = parsed.output[0].raw
    assert json.loads(raw) == json.loads(RESPONSE)
    # keys in the order the SDK's objects have them, serialised once, compactly
    assert raw == compact(json.loads(RESPONSE))


def test_stream_blocks_and_params() -> None:
    parsed = parse(request=REQUEST, stream=STREAM)
    response_blocks = parse(request=REQUEST, response=RESPONSE).output[0].blocks
    assert parsed.output[0].blocks == response_blocks
    params = parsed.params
    assert params.stop_reason == "stop"
    assert params.truncated is False
    assert params.stream_error is None
    assert params.response_id == "msg_a3_5d1f88"
    assert params.usage.input_tokens == 2310
    assert params.usage.reasoning_tokens == 64
    assert params.requested_model == "anthropic/claude-sonnet-4.5"


def test_streamed_tool_input_comes_from_its_deltas_when_no_input_available_follows() -> None:
    chunks = [c for c in events(STREAM) if c["type"] != "tool-input-available"]
    message, _ = streamed(*chunks, request=REQUEST)
    tool = message["parts"][2]
    assert tool["input"] == {"carrier": "DHL", "trackingId": "JD014600006161234567"}
    assert tool["state"] == "output-available"


# -------------------------------------------------------------------------------------------
# NEVER content never reaches a Block


def _reasoning_secrets() -> list[str]:
    secrets: list[str] = []

    def from_parts(parts: list[dict[str, Any]]) -> None:
        for part in parts:
            if part["type"] == "reasoning":
                if part["text"]:
                    secrets.append(part["text"])
                for meta in part.get("providerMetadata", {}).values():
                    secrets.extend(v for v in meta.values() if isinstance(v, str))

    for message in json.loads(REQUEST)["messages"]:
        from_parts(message["parts"])
    from_parts(json.loads(RESPONSE)["parts"])
    for chunk in events(STREAM):
        if chunk["type"] == "reasoning-delta" and chunk["delta"]:
            secrets.append(chunk["delta"])
    return secrets


SECRETS = _reasoning_secrets()


@pytest.mark.parametrize("exchange", EXCHANGES[:2], ids=[e.name for e in EXCHANGES[:2]])
def test_reasoning_never_leaks_into_blocks(exchange: Recorded) -> None:
    assert len(SECRETS) >= 8
    parsed = parse(request=REQUEST, response=exchange.response, stream=exchange.stream)
    messages = [*parsed.history, *parsed.output]
    everything_raw = "".join(m.raw for m in messages)
    rendered = repr([m.blocks for m in messages])
    for secret in SECRETS:
        assert secret not in rendered
    # the deliberation is still kept, in the raw message bytes only
    kept = [s for s in SECRETS if s in everything_raw]
    assert len(kept) >= 6
    for message in messages:
        for block in message.blocks:
            if block.cls in (BlockClass.NEVER, BlockClass.UNKNOWN):
                assert (block.text, block.input, block.output, block.tool_name) == (
                    None,
                    None,
                    None,
                    None,
                )


# -------------------------------------------------------------------------------------------
# Stream edge cases


def test_error_chunk_mid_stream_keeps_what_arrived_and_stops_there() -> None:
    message, parsed = streamed(
        START,
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "Let me check"},
        {"type": "error", "errorText": "An error occurred."},
        {"type": "text-delta", "id": "t", "delta": " IGNORED"},
        {"type": "text-delta", "id": "never-started", "delta": "x"},
        "{not json",
        FINISH,
    )
    assert message == {
        "id": "msg_1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "Let me check", "state": "streaming"},
        ],
    }
    assert parsed.params.stream_error == "error"
    assert parsed.params.truncated is True
    assert parsed.params.stop_reason is None
    assert parsed.output[0].blocks[0].text == "Let me check"


def test_error_chunk_as_the_last_event_without_done_is_not_a_cut() -> None:
    _, parsed = streamed(
        START, *text_chunks("t", "a"), {"type": "error", "errorText": "boom"}, done=False
    )
    assert parsed.params.stream_error == "error"


def test_abort_chunk_marks_the_stream_truncated() -> None:
    message, parsed = streamed(
        START,
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "Hel"},
        {"type": "abort"},
    )
    assert message["parts"] == [{"type": "text", "text": "Hel", "state": "streaming"}]
    assert (parsed.params.stream_error, parsed.params.truncated) == ("abort", True)


def test_unknown_chunk_types_are_ignored() -> None:
    plain = [START, *text_chunks("t", "hi"), FINISH]
    noisy = [
        START,
        {"type": "x-future-chunk", "payload": {"a": 1}},
        *text_chunks("t", "hi"),
        {"type": "data"},  # not a data-* chunk
        {"type": "Text-Start", "id": "t"},
        {"type": "reasoning-part-finish"},
        FINISH,
    ]
    assert streamed(*noisy)[1].output[0].raw == streamed(*plain)[1].output[0].raw


@pytest.mark.parametrize(
    ("chunks", "done", "at"),
    [
        ([START, *text_chunks("t", "a")], False, "$[4]"),
        (
            [
                START,
                {"type": "text-start", "id": "t"},
                {"type": "text-delta", "id": "t", "delta": "a"},
            ],
            False,
            "$[3]",
        ),
        ([], False, "$[0]"),
    ],
    ids=["after-text-end", "mid-text", "empty"],
)
def test_stream_cut_before_finish_or_done_is_truncated(
    chunks: list[dict[str, Any]], done: bool, at: str
) -> None:
    with pytest.raises(FormatError) as err:
        parse(stream=sse(*chunks, done=done))
    assert (err.value.field, err.value.at, err.value.code) == ("stream", at, "truncated_stream")


def test_stream_cut_inside_the_last_event_is_truncated() -> None:
    text = sse(START, {"type": "text-start", "id": "t"}, done=False) + 'data: {"type":"text-del'
    with pytest.raises(FormatError) as err:
        parse(stream=text)
    assert (err.value.field, err.value.at, err.value.code) == ("stream", "$[2]", "truncated_stream")


def test_recorded_stream_cut_anywhere_before_finish_is_truncated() -> None:
    cut = STREAM[: STREAM.index('data: {"type":"finish"')]
    with pytest.raises(FormatError) as err:
        parse(request=REQUEST, stream=cut)
    assert err.value.code == "truncated_stream"
    assert err.value.at == f"$[{len(events(cut))}]"


@pytest.mark.parametrize(
    "ending",
    ['data: {"type":"finish"}', "data: [DONE]", 'data: {"type":"finish"}\n'],
    ids=["finish-unterminated", "done-unterminated", "finish-one-newline"],
)
def test_final_event_without_blank_line_is_still_read(ending: str) -> None:
    text = sse(START, *text_chunks("t", "ok"), done=False) + ending
    assert json.loads(parse(stream=text).output[0].raw)["parts"][0]["text"] == "ok"


def test_finish_without_done_and_done_without_finish_both_end_the_stream() -> None:
    assert streamed(START, FINISH, done=False)[1].params.stop_reason == "stop"
    assert streamed(START, done=True)[1].params.stop_reason is None


def test_nothing_after_done_is_read() -> None:
    text = sse(START, *text_chunks("t", "ok"), FINISH) + "data: {garbage\n\ndata: 5\n\n"
    assert json.loads(parse(stream=text).output[0].raw)["parts"][0]["text"] == "ok"


def test_keep_alive_comments_and_crlf_are_ignored() -> None:
    plain = sse(START, *text_chunks("t", "a", "b"), FINISH)
    noisy = ": stream-open\r\n\r\n" + plain.replace("\n", "\r\n").replace(
        "data: [DONE]", ": keep-alive\r\n\r\ndata: [DONE]"
    )
    assert parse(stream=noisy).output[0].raw == parse(stream=plain).output[0].raw


def test_finish_reason_length_is_truncated() -> None:
    _, parsed = streamed(
        START, *text_chunks("t", "a"), {"type": "finish", "finishReason": "length"}
    )
    assert (parsed.params.stop_reason, parsed.params.truncated) == ("length", True)


@pytest.mark.parametrize(
    ("chunks", "at"),
    [
        ([START, {"type": "text-delta", "id": "t9", "delta": "x"}], "$[1].id"),
        (
            [START, *text_chunks("t", "a"), {"type": "text-delta", "id": "t", "delta": "x"}],
            "$[4].id",
        ),
        ([START, {"type": "text-end", "id": "t"}], "$[1].id"),
        ([START, {"type": "reasoning-delta", "id": "r", "delta": "x"}], "$[1].id"),
        ([START, {"type": "reasoning-end", "id": "r"}], "$[1].id"),
        (
            [
                START,
                {"type": "text-start", "id": "t"},
                {"type": "finish-step"},
                {"type": "text-delta", "id": "t", "delta": "x"},
            ],
            "$[3].id",
        ),
        (
            [START, {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{"}],
            "$[1].toolCallId",
        ),
        (
            [START, {"type": "tool-output-available", "toolCallId": "c", "output": 1}],
            "$[1].toolCallId",
        ),
        (
            [START, {"type": "tool-output-error", "toolCallId": "c", "errorText": "e"}],
            "$[1].toolCallId",
        ),
        (
            [START, {"type": "tool-approval-request", "toolCallId": "c", "approvalId": "a"}],
            "$[1].toolCallId",
        ),
        ([START, {"type": "tool-output-denied", "toolCallId": "c"}], "$[1].toolCallId"),
    ],
    ids=[
        "text-delta",
        "text-delta-after-end",
        "text-end",
        "reasoning-delta",
        "reasoning-end",
        "delta-after-finish-step",
        "tool-input-delta",
        "tool-output-available",
        "tool-output-error",
        "tool-approval-request",
        "tool-output-denied",
    ],
)
def test_update_for_an_id_that_never_started(chunks: list[dict[str, Any]], at: str) -> None:
    with pytest.raises(FormatError) as err:
        parse(stream=sse(*chunks, FINISH))
    assert (err.value.field, err.value.at, err.value.code) == ("stream", at, "unknown_id")


def test_message_without_a_message_id_has_no_id() -> None:
    message, parsed = streamed({"type": "start"}, *text_chunks("t", "a"), FINISH)
    assert (
        parsed.output[0].raw
        == '{"role":"assistant","parts":[{"type":"text","text":"a","state":"done"}]}'
    )
    assert parsed.params.response_id is None
    assert "id" not in message


def test_two_text_parts_interleaved_by_id() -> None:
    message, _ = streamed(
        START,
        {"type": "text-start", "id": "a"},
        {"type": "text-start", "id": "b"},
        {"type": "text-delta", "id": "b", "delta": "B1"},
        {"type": "text-delta", "id": "a", "delta": "A1"},
        {"type": "text-delta", "id": "b", "delta": "B2"},
        {"type": "text-end", "id": "a"},
        {"type": "text-end", "id": "b"},
        FINISH,
    )
    assert [p["text"] for p in message["parts"]] == ["A1", "B1B2"]


def test_provider_metadata_is_kept_on_text_and_reasoning_in_sdk_key_order() -> None:
    _, parsed = streamed(
        START,
        {"type": "reasoning-start", "id": "r"},
        {"type": "reasoning-delta", "id": "r", "delta": "hmm"},
        {"type": "reasoning-end", "id": "r", "providerMetadata": {"openai": {"itemId": "rs_1"}}},
        {"type": "text-start", "id": "t", "providerMetadata": {"x": {"a": 1}}},
        {"type": "text-end", "id": "t"},
        FINISH,
    )
    parts = parsed.output[0].raw.split('"parts":', 1)[1]
    assert parts == (
        '[{"type":"reasoning","id":"r","text":"hmm","providerMetadata":{"openai":{"itemId":"rs_1"}},'
        '"state":"done"},{"type":"text","text":"","providerMetadata":{"x":{"a":1}},'
        '"state":"done"}]}'
    )


def test_metadata_from_start_message_metadata_and_finish_is_deep_merged() -> None:
    message, _ = streamed(
        {"type": "start", "messageId": "m", "messageMetadata": {"a": 1, "nested": {"x": 1}}},
        {"type": "message-metadata", "messageMetadata": {"nested": {"y": 2}, "list": [1]}},
        {"type": "finish", "messageMetadata": {"a": 2, "list": [2, 3]}},
    )
    assert list(message) == ["id", "metadata", "role", "parts"]
    assert message["metadata"] == {"a": 2, "nested": {"x": 1, "y": 2}, "list": [2, 3]}


def test_tool_call_states_and_sdk_key_order() -> None:
    call = "call_1"
    _, parsed = streamed(
        START,
        {"type": "start-step"},
        {"type": "tool-input-start", "toolCallId": call, "toolName": "getWeather"},
        {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": '{"city":'},
        {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": '"Berlin"}'},
        {
            "type": "tool-input-available",
            "toolCallId": call,
            "toolName": "getWeather",
            "input": {"city": "Berlin"},
            "providerMetadata": {"openai": {"itemId": "fc_1"}},
        },
        {"type": "tool-output-available", "toolCallId": call, "output": {"tempC": 4}},
        {"type": "finish-step"},
        FINISH,
    )
    raw = parsed.output[0].raw
    assert raw == (
        '{"id":"msg_1","role":"assistant","parts":[{"type":"step-start"},'
        '{"type":"tool-getWeather","toolCallId":"call_1","state":"output-available",'
        '"input":{"city":"Berlin"},"output":{"tempC":4},'
        '"callProviderMetadata":{"openai":{"itemId":"fc_1"}}}]}'
    )
    (block,) = parsed.output[0].blocks
    assert (block.tool_name, block.call_id, block.status, block.is_error) == (
        "getWeather",
        call,
        "output-available",
        False,
    )
    assert (block.input, block.output) == ({"city": "Berlin"}, {"tempC": 4})


def test_dynamic_tool_stream() -> None:
    message, parsed = streamed(
        START,
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "mcp_search", "dynamic": True},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"q":"x"}'},
        {
            "type": "tool-input-available",
            "toolCallId": "c",
            "toolName": "mcp_search",
            "input": {"q": "x"},
            "dynamic": True,
        },
        {"type": "tool-output-available", "toolCallId": "c", "output": ["r1"], "dynamic": True},
        FINISH,
    )
    assert message["parts"] == [
        {
            "type": "dynamic-tool",
            "toolName": "mcp_search",
            "toolCallId": "c",
            "state": "output-available",
            "input": {"q": "x"},
            "output": ["r1"],
        }
    ]
    assert list(message["parts"][0]) == [
        "type",
        "toolName",
        "toolCallId",
        "state",
        "input",
        "output",
    ]
    (block,) = parsed.output[0].blocks
    assert (block.type, block.tool_name, block.output) == ("dynamic-tool", "mcp_search", ["r1"])


def test_tool_input_error_keeps_the_raw_input() -> None:
    message, parsed = streamed(
        START,
        {
            "type": "tool-input-error",
            "toolCallId": "c",
            "toolName": "refund",
            "input": '{"amount": "ten"',
            "errorText": "Invalid input for tool refund",
        },
        FINISH,
    )
    assert message["parts"] == [
        {
            "type": "tool-refund",
            "toolCallId": "c",
            "state": "output-error",
            "rawInput": '{"amount": "ten"',
            "errorText": "Invalid input for tool refund",
        }
    ]
    (block,) = parsed.output[0].blocks
    assert (block.is_error, block.input, block.output) == (
        True,
        '{"amount": "ten"',
        "Invalid input for tool refund",
    )


def test_a_later_update_of_a_tool_part_replaces_raw_input_as_the_sdk_does() -> None:
    message, _ = streamed(
        START,
        {
            "type": "tool-input-error",
            "toolCallId": "c",
            "toolName": "t",
            "input": "{",
            "errorText": "e",
        },
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": {"a": 1}},
        FINISH,
    )
    assert message["parts"] == [
        {"type": "tool-t", "toolCallId": "c", "state": "input-available", "input": {"a": 1}}
    ]


def test_duplicate_tool_call_ids_update_the_first_part_like_parts_find() -> None:
    previous = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {
                "type": "tool-t",
                "toolCallId": "c",
                "state": "output-available",
                "input": 1,
                "output": 1,
            },
            {"type": "tool-t", "toolCallId": "c", "state": "input-available", "input": 2},
        ],
    }
    message, _ = streamed(
        {"type": "tool-output-available", "toolCallId": "c", "output": "new"},
        FINISH,
        request=_continuation_request(previous),
    )
    assert [p.get("output") for p in message["parts"]] == ["new", None]


def test_tool_output_error() -> None:
    message, parsed = streamed(
        START,
        {
            "type": "tool-input-available",
            "toolCallId": "c",
            "toolName": "refund",
            "input": {"o": 1},
        },
        {"type": "tool-output-error", "toolCallId": "c", "errorText": "HTTP 503"},
        FINISH,
    )
    assert message["parts"][0] == {
        "type": "tool-refund",
        "toolCallId": "c",
        "state": "output-error",
        "input": {"o": 1},
        "errorText": "HTTP 503",
    }
    block = parsed.output[0].blocks[0]
    assert (block.is_error, block.status, block.output) == (True, "output-error", "HTTP 503")


def test_tool_input_cut_by_an_error_keeps_the_partial_input_and_the_raw_text() -> None:
    message, parsed = streamed(
        START,
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "getWeather"},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"city": "Ber'},
        {"type": "error", "errorText": "overloaded"},
    )
    part = message["parts"][0]
    assert (part["state"], part["input"]) == ("input-streaming", {"city": "Ber"})
    block = parsed.output[0].blocks[0]
    assert block.input == '{"city": "Ber'  # cut off: the raw text received
    assert block.status == "input-streaming"


def test_tool_input_start_alone_has_no_input() -> None:
    message, parsed = streamed(
        START,
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "t"},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"a'},
        {"type": "abort"},
    )
    assert message["parts"][0]["input"] == {}
    assert parsed.output[0].blocks[0].input == '{"a'


def test_tool_approval_and_denial_states() -> None:
    message, _ = streamed(
        START,
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "refund", "input": {}},
        {"type": "tool-approval-request", "toolCallId": "c", "approvalId": "ap_1"},
        {"type": "tool-input-available", "toolCallId": "d", "toolName": "refund", "input": {}},
        {"type": "tool-output-denied", "toolCallId": "d"},
        FINISH,
    )
    first, second = message["parts"]
    assert (first["state"], first["approval"]) == ("approval-requested", {"id": "ap_1"})
    assert second["state"] == "output-denied"


def test_provider_executed_tools_are_counted() -> None:
    _, parsed = streamed(
        START,
        {
            "type": "tool-input-available",
            "toolCallId": "s1",
            "toolName": "web_search",
            "input": {"query": "dhl"},
            "providerExecuted": True,
        },
        {
            "type": "tool-output-available",
            "toolCallId": "s1",
            "output": [],
            "providerExecuted": True,
        },
        {
            "type": "tool-input-available",
            "toolCallId": "s2",
            "toolName": "web_search",
            "input": {"query": "ups"},
            "providerExecuted": True,
        },
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "local", "input": {}},
        FINISH,
    )
    assert parsed.params.server_tool_counts == {"web_search": 2}


def test_source_file_and_data_parts() -> None:
    message, parsed = streamed(
        START,
        {"type": "source-url", "sourceId": "s1", "url": "https://a.test", "title": "A"},
        {"type": "source-document", "sourceId": "s2", "mediaType": "application/pdf", "title": "T"},
        {"type": "file", "url": "data:image/png;base64,AAAA", "mediaType": "image/png"},
        {"type": "data-progress", "id": "p", "data": {"pct": 10}},
        {"type": "data-progress", "id": "p", "data": {"pct": 100}},
        {"type": "data-note", "data": "n1"},
        {"type": "data-note", "data": "n2", "transient": True},
        FINISH,
    )
    assert message["parts"] == [
        {"type": "source-url", "sourceId": "s1", "url": "https://a.test", "title": "A"},
        {"type": "source-document", "sourceId": "s2", "mediaType": "application/pdf", "title": "T"},
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AAAA"},
        {"type": "data-progress", "id": "p", "data": {"pct": 100}},
        {"type": "data-note", "data": "n1"},
    ]
    assert [b.cls for b in parsed.output[0].blocks] == [BlockClass.UNKNOWN] * 5


def _continuation_request(last_assistant: dict[str, Any]) -> str:
    return json.dumps(
        {
            "messages": [
                {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "refund me"}]},
                last_assistant,
            ],
            "trigger": "submit-message",
        }
    )


def test_a_request_ending_with_the_assistant_message_is_continued() -> None:
    """A client tool result sent back: useChat appends the new parts to that same message."""
    previous = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-askForConfirmation",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {"message": "Refund 10 EUR?"},
                "output": "yes",
            },
        ],
    }
    request = _continuation_request(previous)
    message, parsed = streamed(
        {"type": "start", "messageId": "a1"},
        {"type": "start-step"},
        *text_chunks("t", "Done."),
        FINISH,
        request=request,
    )
    assert message == {
        **previous,
        "parts": [
            *previous["parts"],
            {"type": "step-start"},
            {"type": "text", "text": "Done.", "state": "done"},
        ],
    }
    assert parsed.history[1].raw == json.dumps(previous)
    assert [b.type for b in parsed.output[0].blocks] == ["tool-askForConfirmation", "text"]


def test_a_continued_message_gets_tool_output_for_an_earlier_call() -> None:
    """A tool approval sent back: the server runs the tool, the stream carries its output."""
    previous = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {
                "type": "tool-refund",
                "toolCallId": "c1",
                "state": "approval-responded",
                "input": {"amount": 10},
                "approval": {"id": "ap1", "approved": True},
                "providerExecuted": True,
            }
        ],
    }
    message, parsed = streamed(
        {"type": "start", "messageId": "a1"},
        {"type": "tool-output-available", "toolCallId": "c1", "output": {"status": "refunded"}},
        FINISH,
        request=_continuation_request(previous),
    )
    assert message["parts"] == [
        {
            "type": "tool-refund",
            "toolCallId": "c1",
            "state": "output-available",
            "input": {"amount": 10},
            "approval": {"id": "ap1", "approved": True},
            "providerExecuted": True,
            "output": {"status": "refunded"},
        }
    ]
    assert parsed.params.server_tool_counts == {}  # that call was already in the history
    assert parsed.output[0].blocks[0].output == {"status": "refunded"}


def test_not_a_continuation_after_a_user_message() -> None:
    message, _ = streamed({"type": "start", "messageId": "a2"}, *text_chunks("t", "x"), FINISH)
    assert message["id"] == "a2"
    assert len(message["parts"]) == 1


def test_nan_in_a_chunk_is_not_json() -> None:
    text = sse(START, '{"type":"data-x","data":NaN}', FINISH)
    with pytest.raises(FormatError) as err:
        parse(stream=text)
    assert (err.value.field, err.value.at, err.value.code) == ("stream", "$[1].data", "not_json")


def test_lone_surrogate_in_a_stream_is_refused() -> None:
    text = sse(
        START,
        {"type": "text-start", "id": "t"},
        '{"type":"text-delta","id":"t","delta":"\\ud800"}',
        {"type": "text-end", "id": "t"},
        FINISH,
    )
    with pytest.raises(FormatError) as err:
        parse(stream=text)
    assert (err.value.field, err.value.code) == ("stream", "invalid_unicode")


@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        ("", ""),
        ("nul", "null"),
        ("fals", "false"),
        ("12.", "12"),
        ("-", ""),
        ("2.5e-", "2.5"),
        ('"abc', '"abc"'),
        ('"value with \\', '"value with "'),
        ('{"a":"\\u12', '{"a":""}'),
        ("[[1], [2", "[[1], [2]]"),
        ("[[false], [nu", "[[false], [null]]"),
        ("[1, ", "[1]"),
        ('{"key":', "{}"),
        ('{"k1": 1, "k2":', '{"k1": 1}'),
        ('{"key": "value"  ', '{"key": "value"}'),
        ('{"a": {"b": ["c", {"d": "e",', '{"a": {"b": ["c", {"d": "e"}]}}'),
        (
            '{"type":"div","children":[{"type":"Card","props":{}',
            '{"type":"div","children":[{"type":"Card","props":{}}]}',
        ),
    ],
)
def test_fix_json_matches_the_sdk(text: str, fixed: str) -> None:
    """Cases from vercel/ai packages/ai/src/util/fix-json.test.ts."""
    assert _fix_json(text) == fixed


# -------------------------------------------------------------------------------------------
# Bad input: FormatError with the exact field and path


def _req(*messages: Any, **extra: Any) -> str:
    return json.dumps({"messages": list(messages), **extra})


def _user(*parts: Any, **extra: Any) -> dict[str, Any]:
    return {"id": "u", "role": "user", "parts": list(parts), **extra}


TEXT = {"type": "text", "text": "hi"}
DEEP = "[" * 100_000 + "]" * 100_000

REQUEST_CASES = [
    ("not-json", "{nope", "$", "not_json"),
    ("nul-byte", '{"messages":[]}\x00', "$", "not_json"),
    ("array", "[]", "$", "wrong_type"),
    ("no-messages", "{}", "$.messages", "missing"),
    ("messages-object", '{"messages":{}}', "$.messages", "wrong_type"),
    ("message-number", _req(1), "$.messages[0]", "wrong_type"),
    ("no-role", _req({"id": "u", "parts": []}), "$.messages[0].role", "missing"),
    ("role-tool", _req(_user(role="tool")), "$.messages[0].role", "invalid_role"),
    ("role-number", _req(_user(role=5)), "$.messages[0].role", "wrong_type"),
    ("id-number", _req(_user(id=5)), "$.messages[0].id", "wrong_type"),
    ("no-parts", _req({"id": "u", "role": "user"}), "$.messages[0].parts", "missing"),
    ("parts-string", _req(_user(parts="x")), "$.messages[0].parts", "wrong_type"),
    ("part-number", _req(_user(3)), "$.messages[0].parts[0]", "wrong_type"),
    ("part-no-type", _req(_user({})), "$.messages[0].parts[0].type", "missing"),
    ("part-type-null", _req(_user({"type": None})), "$.messages[0].parts[0].type", "wrong_type"),
    ("text-missing", _req(_user({"type": "text"})), "$.messages[0].parts[0].text", "missing"),
    (
        "text-number",
        _req(_user({"type": "text", "text": 1})),
        "$.messages[0].parts[0].text",
        "wrong_type",
    ),
    (
        "reasoning-null",
        _req(_user(TEXT, {"type": "reasoning", "text": None})),
        "$.messages[0].parts[1].text",
        "wrong_type",
    ),
    (
        "tool-no-call-id",
        _req(_user({"type": "tool-x", "state": "input-available"})),
        "$.messages[0].parts[0].toolCallId",
        "missing",
    ),
    (
        "tool-no-state",
        _req(_user({"type": "tool-x", "toolCallId": "c"})),
        "$.messages[0].parts[0].state",
        "missing",
    ),
    (
        "dynamic-no-name",
        _req(_user({"type": "dynamic-tool", "toolCallId": "c", "state": "input-available"})),
        "$.messages[0].parts[0].toolName",
        "missing",
    ),
    (
        "second-message",
        _req(_user(TEXT), _user({"type": 7})),
        "$.messages[1].parts[0].type",
        "wrong_type",
    ),
    ("nan", '{"messages":[],"temperature":NaN}', "$", "not_json"),
    ("deep", '{"messages":' + DEEP + "}", "$", "too_deep"),
]


@pytest.mark.parametrize(
    ("request_text", "at", "code"),
    [c[1:] for c in REQUEST_CASES],
    ids=[c[0] for c in REQUEST_CASES],
)
def test_bad_request(request_text: str, at: str, code: str) -> None:
    with pytest.raises(FormatError) as err:
        parse(request=request_text, response=RESPONSE)
    assert (err.value.field, err.value.at, err.value.code) == ("request", at, code)
    assert err.value.detail


def _resp(**fields: Any) -> str:
    return json.dumps({"id": "m", "role": "assistant", "parts": [], **fields})


RESPONSE_CASES = [
    ("not-json", "nope", "$", "not_json"),
    ("empty", "", "$", "not_json"),
    ("array", "[]", "$", "wrong_type"),
    ("no-role", json.dumps({"id": "m", "parts": []}), "$.role", "missing"),
    ("user-role", _resp(role="user"), "$.role", "invalid_role"),
    ("unknown-role", _resp(role="tool"), "$.role", "invalid_role"),
    ("no-parts", json.dumps({"id": "m", "role": "assistant"}), "$.parts", "missing"),
    ("part-type", _resp(parts=[{"type": 1}]), "$.parts[0].type", "wrong_type"),
    (
        "tool-call-id",
        _resp(parts=[{"type": "tool-a", "toolCallId": 1, "state": "x"}]),
        "$.parts[0].toolCallId",
        "wrong_type",
    ),
    ("id-number", _resp(id=1), "$.id", "wrong_type"),
    ("infinity", '{"role":"assistant","parts":[],"metadata":{"t":Infinity}}', "$", "not_json"),
    ("deep", DEEP, "$", "too_deep"),
]


@pytest.mark.parametrize(
    ("response", "at", "code"),
    [c[1:] for c in RESPONSE_CASES],
    ids=[c[0] for c in RESPONSE_CASES],
)
def test_bad_response(response: str, at: str, code: str) -> None:
    with pytest.raises(FormatError) as err:
        parse(response=response)
    assert (err.value.field, err.value.at, err.value.code) == ("response", at, code)
    assert err.value.detail


STREAM_CASES = [
    ("data-not-json", sse("{bad"), "$[0].data", "not_json"),
    ("chunk-number", sse("5"), "$[0]", "wrong_type"),
    ("chunk-no-type", sse({}), "$[0].type", "missing"),
    ("chunk-type-number", sse({"type": 3}), "$[0].type", "wrong_type"),
    ("text-start-no-id", sse({"type": "text-start"}), "$[0].id", "missing"),
    (
        "delta-number",
        sse({"type": "text-start", "id": "t"}, {"type": "text-delta", "id": "t", "delta": 5}),
        "$[1].delta",
        "wrong_type",
    ),
    (
        "tool-no-name",
        sse({"type": "tool-input-start", "toolCallId": "c"}),
        "$[0].toolName",
        "missing",
    ),
    (
        "tool-dynamic-string",
        sse({"type": "tool-input-start", "toolCallId": "c", "toolName": "t", "dynamic": "yes"}),
        "$[0].dynamic",
        "wrong_type",
    ),
    ("start-id-number", sse({"type": "start", "messageId": 5}), "$[0].messageId", "wrong_type"),
    (
        "finish-reason-number",
        sse({"type": "finish", "finishReason": 5}),
        "$[0].finishReason",
        "wrong_type",
    ),
    ("data-id-number", sse({"type": "data-x", "id": 1, "data": 1}), "$[0].id", "wrong_type"),
    ("source-no-url", sse({"type": "source-url", "sourceId": "s"}), "$[0].url", "missing"),
    (
        "unknown-id",
        sse(START, {"type": "text-delta", "id": "t", "delta": "x"}),
        "$[1].id",
        "unknown_id",
    ),
    ("cut", sse(START, done=False), "$[1]", "truncated_stream"),
    ("deep", sse('{"type":"data-x","data":' + DEEP + "}"), "$", "too_deep"),
]


@pytest.mark.parametrize(
    ("stream", "at", "code"),
    [c[1:] for c in STREAM_CASES],
    ids=[c[0] for c in STREAM_CASES],
)
def test_bad_stream(stream: str, at: str, code: str) -> None:
    with pytest.raises(FormatError) as err:
        parse(stream=stream)
    assert (err.value.field, err.value.at, err.value.code) == ("stream", at, code)
    assert err.value.detail


# -------------------------------------------------------------------------------------------
# Hypothesis: anything in any position raises FormatError or parses


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["tool-x", "dynamic-tool", "text", "reasoning", "assistant", "c", "t", "0"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["type", "id", "text", "parts", "role", "toolCallId", "state", "input"])
            | st.text(max_size=6),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


def _check_ok(parsed: ParsedExchange) -> None:
    for message in [*parsed.history, *parsed.output]:
        assert isinstance(message.raw, str)
        message.raw.encode("utf-8")
    for message in parsed.output:
        json.loads(message.raw)


def _only_format_errors(**kwargs: str) -> None:
    try:
        parsed = PARSER.parse(
            **{"request": MIN_REQUEST, "response": None, "stream": None, **kwargs}
        )
    except FormatError as err:
        assert err.field in ("request", "response", "stream")
        assert err.at.startswith("$")
        assert err.code and err.detail
    else:
        _check_ok(parsed)


REQUEST_VALUE = json.loads(REQUEST)
RESPONSE_VALUE = json.loads(RESPONSE)
STREAM_CHUNKS = events(STREAM)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text())
def test_fuzz_request_text(text: str) -> None:
    _only_format_errors(request=text, response=RESPONSE)


@FUZZ
@given(st.text())
def test_fuzz_response_text(text: str) -> None:
    _only_format_errors(response=text)


@FUZZ
@given(st.text())
def test_fuzz_stream_text(text: str) -> None:
    _only_format_errors(stream=text)


@FUZZ
@given(st.sampled_from(paths(REQUEST_VALUE)), JSON_VALUES)
def test_fuzz_request_values(path: tuple[Any, ...], value: Any) -> None:
    _only_format_errors(request=json.dumps(replaced(REQUEST_VALUE, path, value)), response=RESPONSE)


@FUZZ
@given(st.sampled_from(paths(RESPONSE_VALUE)), JSON_VALUES)
def test_fuzz_response_values(path: tuple[Any, ...], value: Any) -> None:
    _only_format_errors(response=json.dumps(replaced(RESPONSE_VALUE, path, value)))


STREAM_PATHS = [(i, p) for i, chunk in enumerate(STREAM_CHUNKS) for p in paths(chunk)]


@FUZZ
@given(st.sampled_from(STREAM_PATHS), JSON_VALUES, st.booleans())
def test_fuzz_stream_values(where: tuple[int, tuple[Any, ...]], value: Any, done: bool) -> None:
    i, path = where
    chunks = list(STREAM_CHUNKS)
    chunks[i] = replaced(chunks[i], path, value)
    _only_format_errors(request=REQUEST, stream=sse(*chunks, done=done))


CHUNK_TYPES = [
    "start", "finish", "start-step", "finish-step", "text-start", "text-delta", "text-end",
    "reasoning-start", "reasoning-delta", "reasoning-end", "tool-input-start", "tool-input-delta",
    "tool-input-available", "tool-input-error", "tool-output-available", "tool-output-error",
    "tool-approval-request", "tool-output-denied", "source-url", "source-document", "file",
    "data-x", "message-metadata", "error", "abort", "x-unknown",
]  # fmt: skip

CHUNKS = st.fixed_dictionaries(
    {"type": st.sampled_from(CHUNK_TYPES)},
    optional={
        "id": st.sampled_from(["a", "b"]) | JSON_VALUES,
        "delta": st.sampled_from(["x", '{"a', "1}"]),
        "toolCallId": st.sampled_from(["c1", "c2"]),
        "toolName": st.sampled_from(["t", "u"]),
        "inputTextDelta": st.sampled_from(['{"a":', '"b"}', "[", "nul"]),
        "input": JSON_VALUES,
        "output": JSON_VALUES,
        "errorText": st.just("e"),
        "approvalId": st.just("ap"),
        "dynamic": st.booleans(),
        "providerExecuted": st.booleans(),
        "messageId": st.just("m"),
        "messageMetadata": JSON_VALUES,
        "providerMetadata": JSON_VALUES,
        "data": JSON_VALUES,
        "transient": st.booleans(),
        "sourceId": st.just("s"),
        "url": st.just("u"),
        "mediaType": st.just("text/plain"),
        "title": st.just("T"),
        "finishReason": st.sampled_from(["stop", "length"]),
    },
)


@FUZZ
@given(st.lists(CHUNKS, max_size=25), st.booleans(), st.booleans())
def test_fuzz_chunk_sequences(chunks: list[dict[str, Any]], done: bool, continued: bool) -> None:
    request = REQUEST
    if continued:  # end the history with an assistant message: the stream continues it
        value = copy.deepcopy(REQUEST_VALUE)
        value["messages"].pop()
        request = json.dumps(value)
    _only_format_errors(request=request, stream=sse(*chunks, done=done))
