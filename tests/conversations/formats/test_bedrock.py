"""``bedrock.converse``: every recorded exchange (tests/fixtures/bedrock) read and replayed as
received, the eventstream checked frame by frame (a bad frame a 400 naming its byte offset), the
model read from the endpoint, the stream's shapes (padding, citations, typed tool starts,
streamed tool results, exceptions) stored as meant, and unknown block types kept and hidden."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.blocks import BlockClass
from conversations.formats import FormatError, get
from conversations.formats.base import object_member_spans
from conversations.formats.bedrock.eventstream import encode_frame, read_frames
from conversations.formats.bedrock.kit import endpoint, frames, stream_base64
from conversations.formats.profile import PRESERVED
from tests.conversations.formats.bedrock_corpus import exchanges

FMT = get("bedrock.converse")
EXCHANGES = exchanges()
ANSWERED = [e for e in EXCHANGES if e.status == 200]
REQUEST = json.dumps({"messages": [{"role": "user", "content": [{"text": "hi"}]}]})
STREAM = endpoint(streamed=True)


def parse_events(events: list[dict[str, Any]], **kwargs: Any) -> Any:
    return FMT.parse(
        request=REQUEST, stream_base64=stream_base64(events), endpoint=STREAM, **kwargs
    )


def text_events(*pieces: str) -> list[dict[str, Any]]:
    return [
        {"messageStart": {"role": "assistant"}},
        *({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": p}}} for p in pieces),
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


def test_the_corpus_holds_json_streams_reasoning_and_tools() -> None:
    kinds = {b.type for e in ANSWERED for m in FMT.parse(**e.fields()).output for b in m.blocks}
    assert {"text", "reasoningContent", "toolUse", "toolResult"} <= kinds
    assert sum(e.stream_base64 is not None for e in ANSWERED) >= 10
    assert sum(e.response is not None for e in ANSWERED) >= 10


@pytest.mark.parametrize("e", ANSWERED, ids=lambda e: e.name)
def test_every_recording_is_read_and_its_message_replays_as_received(e: Any) -> None:
    parsed = FMT.parse(**e.fields())
    (out,) = parsed.output
    assert parsed.params.requested_model and parsed.params.stop_reason in FMT.profile.finishes
    assert FMT.message_blocks(out.raw) == out.blocks
    if e.response is not None:
        # The stored answer is output.message's exact text.
        members = object_member_spans(e.response, field="response")
        assert out.raw == object_member_spans(members["output"].raw, field="r")["message"].raw
        return
    # A streamed answer: every reasoning signature and redacted block exactly as streamed, no
    # padding member, the visible text the deltas' text.
    stored = json.loads(out.raw)
    events = [f.data(field="s") for f in read_frames(e.data)[0]]
    deltas = [ev["contentBlockDelta"]["delta"] for ev in events if "contentBlockDelta" in ev]
    for d in deltas:
        reasoning = d.get("reasoningContent", {})
        for key in ("signature", "redactedContent"):
            if key in reasoning:
                assert reasoning[key] in out.raw
    assert '"p":' not in out.raw
    text = "".join(d["text"] for d in deltas if "text" in d)
    shown = "".join(b.text or "" for b in out.blocks if b.cls is BlockClass.VISIBLE)
    assert shown == text
    assert stored["role"] == "assistant"


@pytest.mark.parametrize("e", ANSWERED, ids=lambda e: e.name)
def test_no_block_carries_a_word_of_reasoning_or_a_signature(e: Any) -> None:
    parsed = FMT.parse(**e.fields())
    secrets = []
    for m in [*parsed.history, *parsed.output]:
        for item in json.loads(m.raw).get("content", []):
            reasoning = item.get("reasoningContent") if isinstance(item, dict) else None
            if isinstance(reasoning, dict):
                text = reasoning.get("reasoningText") or {}
                secrets += [
                    text.get("text"),
                    text.get("signature"),
                    reasoning.get("redactedContent"),
                ]
        for b in m.blocks:
            if b.cls is BlockClass.NEVER:
                assert (b.text, b.input, b.output) == (None, None, None)
    shown = json.dumps([[b.text, b.input, b.output] for m in parsed.output for b in m.blocks])
    for secret in filter(None, secrets):
        assert secret[:40] not in shown


def test_a_provider_error_body_is_refused() -> None:
    (e,) = [e for e in EXCHANGES if e.status != 200]
    with pytest.raises(FormatError) as info:
        FMT.parse(**e.fields())
    assert (info.value.field, info.value.at, info.value.code) == (
        "response",
        "$.message",
        "provider_error",
    )


# --- the eventstream ---------------------------------------------------------------------------


def test_a_frame_whose_crc_does_not_match_is_refused_at_its_offset() -> None:
    data = bytearray(frames(text_events("a", "b")))
    second = int.from_bytes(data[0:4], "big")
    data[second + 20] ^= 0xFF  # inside the second frame's headers: its message CRC fails
    with pytest.raises(FormatError) as info:
        FMT.parse(request=REQUEST, stream_base64=base64.b64encode(data).decode(), endpoint=STREAM)
    assert (info.value.field, info.value.at, info.value.code) == (
        "stream_base64",
        f"$[{second}]",
        "invalid",
    )
    data = bytearray(frames(text_events("a")))
    data[5] ^= 0x01  # the prelude's own CRC
    with pytest.raises(FormatError) as info:
        FMT.parse(request=REQUEST, stream_base64=base64.b64encode(data).decode(), endpoint=STREAM)
    assert (info.value.at, info.value.code) == ("$[0]", "invalid")


@pytest.mark.parametrize("keep", [3, 12, 40], ids=["prelude", "headers", "payload"])
def test_a_stream_cut_inside_a_frame_is_truncated_at_that_frame(keep: int) -> None:
    data = frames(text_events("a", "b"))
    last = len(frames(text_events("a", "b")[:-1]))
    cut = data[: last + keep]
    with pytest.raises(FormatError) as info:
        FMT.parse(request=REQUEST, stream_base64=base64.b64encode(cut).decode(), endpoint=STREAM)
    assert (info.value.at, info.value.code) == (f"$[{last}]", "truncated_stream")
    # Cancelled by the client: what arrived is the message.
    parsed = FMT.parse(
        request=REQUEST,
        stream_base64=base64.b64encode(cut).decode(),
        endpoint=STREAM,
        cancelled=True,
    )
    assert parsed.output[0].blocks[0].text == "ab" and parsed.params.cancelled


def test_a_stream_without_message_stop_is_truncated() -> None:
    with pytest.raises(FormatError) as info:
        parse_events(text_events("a")[:-1])
    assert info.value.code == "truncated_stream"


def test_an_exception_frame_is_an_error_finish_with_what_arrived() -> None:
    events = [*text_events("half an ")[:-2], {"throttlingException": {"message": "slow down"}}]
    parsed = parse_events(events)
    assert parsed.params.stream_error == "throttlingException" and parsed.params.truncated
    assert parsed.output[0].blocks[0].text == "half an "


def test_padding_citations_typed_tool_starts_and_streamed_tool_results() -> None:
    citation = {"title": "Doc", "sourceContent": [{"text": "x"}], "location": {"web": {}}}
    events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "It is x."}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"citation": citation}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 1,
                "start": {
                    "toolUse": {"toolUseId": "t1", "name": "search", "type": "server_tool_use"}
                },
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"q":'}}}},
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '"x"}'}}}},
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 2,
                "start": {
                    "toolResult": {"toolUseId": "t1", "type": "search_result", "status": "success"}
                },
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"toolResult": [{"text": "fo"}]}}},
        {"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"toolResult": [{"text": "und"}]}}},
        {"contentBlockStop": {"contentBlockIndex": 2}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 5, "outputTokens": 7, "cacheReadInputTokens": 2}}},
    ]
    parsed = parse_events(events)
    stored = json.loads(parsed.output[0].raw)
    assert stored["content"] == [
        {"citationsContent": {"content": [{"text": "It is x."}], "citations": [citation]}},
        {
            "toolUse": {
                "toolUseId": "t1",
                "name": "search",
                "type": "server_tool_use",
                "input": {"q": "x"},
            }
        },
        {
            "toolResult": {
                "toolUseId": "t1",
                "type": "search_result",
                "status": "success",
                "content": [{"text": "found"}],
            }
        },
    ]
    blocks = parsed.output[0].blocks
    assert [b.cls for b in blocks] == [BlockClass.VISIBLE, BlockClass.AUDIT, BlockClass.AUDIT]
    assert blocks[0].text == "It is x." and blocks[2].call_id == "t1"
    usage = parsed.params.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (5, 7, 2)
    assert FMT.profile.usage.counted(5, 2, None).total == 7


def test_reasoning_deltas_keep_text_and_signature_and_redacted_bytes() -> None:
    events = [
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"text": "th"}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"text": "ink"}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"signature": "SIG"}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"reasoningContent": {"redactedContent": "AAEC"}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 1}},
        *text_events("ok")[1:],
    ]
    events[-3] = {"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"text": "ok"}}}
    events[-2] = {"contentBlockStop": {"contentBlockIndex": 2}}
    parsed = parse_events(events)
    assert json.loads(parsed.output[0].raw)["content"][:2] == [
        {"reasoningContent": {"reasoningText": {"text": "think", "signature": "SIG"}}},
        {"reasoningContent": {"redactedContent": "AAEC"}},
    ]
    traces = list(FMT.reasoning(json.loads(parsed.output[0].raw)))
    assert [t.text for t in traces] == ["think", ""] and traces[1].withheld


def test_a_block_type_the_console_does_not_know_is_kept_and_hidden() -> None:
    request = json.dumps(
        {"messages": [{"role": "user", "content": [{"text": "hi"}, {"hologram": {"x": 1}}]}]}
    )
    response = json.dumps(
        {
            "output": {
                "message": {"role": "assistant", "content": [{"futureBlock": {"secret": "s"}}]}
            },
            "stopReason": "end_turn",
        }
    )
    parsed = FMT.parse(request=request, response=response, endpoint=endpoint())
    assert parsed.history[0].blocks[1].cls is BlockClass.UNKNOWN
    (b,) = parsed.output[0].blocks
    assert (
        b.cls is BlockClass.UNKNOWN
        and b.text is None
        and '"secret":"s"' in parsed.output[0].raw.replace(" ", "")
    )


# --- the endpoint -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "model"),
    [
        (
            "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ),
        ("/model/amazon.nova-pro-v1:0/converse-stream", "amazon.nova-pro-v1:0"),
        (
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.meta.llama3/converse",
            "arn:aws:bedrock:us-east-1:1:inference-profile/us.meta.llama3",
        ),
        (
            "/gateway/aws/model/arn:aws:bedrock:eu:1:prompt-router/x/converse",
            "arn:aws:bedrock:eu:1:prompt-router/x",
        ),
    ],
)
def test_the_model_is_the_endpoint_s_model_id(path: str, model: str) -> None:
    sample = FMT.kit.finish("end_turn")
    parsed = FMT.parse(request=sample.request, response=sample.response, endpoint=path)
    assert parsed.params.requested_model == model


@pytest.mark.parametrize("path", [None, "/model//converse", "/converse", "/v1/messages"])
def test_an_endpoint_naming_no_model_is_refused_at_its_path(path: str | None) -> None:
    sample = FMT.kit.finish("end_turn")
    with pytest.raises(FormatError) as info:
        FMT.parse(request=sample.request, response=sample.response, endpoint=path)
    assert (info.value.field, info.value.at, info.value.code) == (
        "endpoint",
        "$.endpoint",
        "endpoint",
    )


# --- continuation -------------------------------------------------------------------------------


def test_anthropic_models_on_bedrock_follow_the_anthropic_rules_others_the_replay() -> None:
    rules = FMT.profile.continuation
    assert rules.rule("us.anthropic.claude-sonnet-4-5-20250929-v1:0", PRESERVED) is not None
    assert rules.rule("anthropic.claude-opus-5-5-v1:0", PRESERVED).name.endswith(
        "preserved-thinking"
    )  # type: ignore[union-attr]
    assert rules.rule("us.amazon.nova-pro-v1:0", PRESERVED) is None
    history = [
        {"role": "user", "content": [{"text": "q"}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "r", "signature": "s"}}},
                {"toolUse": {"toolUseId": "t", "name": "f", "input": {}}},
            ],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "t", "content": [{"text": "x"}]}}],
        },
    ]
    rule = rules.rule("anthropic.claude-3-7-sonnet-20250219-v1:0", PRESERVED)
    assert rule is not None
    open_loop, protected, cuts = rule.decide(history)
    # The open tool loop keeps its reasoning block: nothing of that turn is cut.
    assert open_loop and 1 in protected and cuts == {}
    closed = [
        *history,
        {"role": "assistant", "content": [{"text": "done"}]},
        {"role": "user", "content": [{"text": "next"}]},
    ]
    open_loop, _, cuts = rule.decide(closed)
    assert not open_loop and cuts == {1: {0}}


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_are_read_or_refused_precisely(data: bytes) -> None:
    try:
        FMT.parse(request=REQUEST, stream_base64=base64.b64encode(data).decode(), endpoint=STREAM)
    except FormatError as exc:
        assert exc.field == "stream_base64" and exc.at.startswith("$")


def test_encoded_frames_decode_to_what_was_encoded() -> None:
    frame = encode_frame("metadata", b'{"usage":{}}')
    (decoded,), used = read_frames(frame)
    assert (decoded.name, decoded.payload, used) == ("metadata", b'{"usage":{}}', len(frame))
