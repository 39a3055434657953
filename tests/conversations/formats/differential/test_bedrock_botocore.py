"""``bedrock.converse`` against botocore (the AWS SDK for Python's core): every recorded
ConverseStream (tests/fixtures/bedrock) and generated ones, read by botocore's ``EventStream``
with the bedrock-runtime service model (its reads cut at random places, as a socket delivers
them), and accumulated from what botocore yields as the AWS documentation's ConverseStream
example does (text, toolUse input, reasoning text and signature, per content block index). The
console's stored message must be that accumulation: the same blocks, the same text, the same
signatures and redacted bytes, the same stop reason and usage. botocore drops the padding
member ``p`` and every member its model lacks; so does the console's message. botocore raises on
an exception frame; the console keeps what came before it and names the exception.

Differences, on purpose (docs/formats.md): botocore refuses an empty ``contentBlockStart``
(``"start": {}``, in one of the AI SDK's mock streams: "ContentBlockStart must have one and only
one member set"); the console lets the block's first delta name its type. A text block that
received citation deltas is stored as ``citationsContent`` (the Converse response's own shape
for cited text); a streamed tool result's text pieces are joined."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import botocore.session
import pytest
from botocore.eventstream import EventStream
from botocore.exceptions import EventStreamError
from botocore.parsers import EventStreamJSONParser, ResponseParserError

from conversations.formats import get
from conversations.formats.bedrock.kit import endpoint, frames
from tests.conversations.formats.bedrock_corpus import exchanges

FMT = get("bedrock.converse")
MODEL = botocore.session.get_session().get_service_model("bedrock-runtime")
SHAPE = MODEL.operation_model("ConverseStream").output_shape.members["stream"]


class _Raw:
    def __init__(self, data: bytes, seed: int) -> None:
        self.data, self.rng = data, random.Random(seed)

    def stream(self) -> Any:
        i = 0
        while i < len(self.data):
            n = self.rng.randrange(1, 300)
            yield self.data[i : i + n]
            i += n

    def close(self) -> None:
        pass


def botocore_events(data: bytes, seed: int = 0) -> tuple[list[dict[str, Any]], str | None]:
    """What botocore yields for the stream, and the exception it raised (its code), if any."""
    out: list[dict[str, Any]] = []
    try:
        for event in EventStream(
            _Raw(data, seed), SHAPE, EventStreamJSONParser(), "ConverseStream"
        ):
            out.append(event)
    except EventStreamError as exc:
        return out, exc.response.get("Error", {}).get("Code")
    return out, None


def accumulate(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The AWS documentation's ConverseStream handling, extended to every delta botocore
    yields: a message, its stop reason and usage."""
    blocks: dict[int, dict[str, Any]] = {}
    stop, usage = None, {}
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            for kind, value in start["start"].items():
                blocks[start["contentBlockIndex"]] = {"kind": kind, "start": value, "parts": []}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            block = blocks.setdefault(
                delta["contentBlockIndex"], {"kind": None, "start": {}, "parts": []}
            )
            for kind, value in delta["delta"].items():
                block["kind"] = block["kind"] or ({"citation": "text"}.get(kind, kind))
                block["parts"].append((kind, value))
        elif "messageStop" in event:
            stop = event["messageStop"].get("stopReason")
        elif "metadata" in event:
            usage = event["metadata"].get("usage", usage)
    content = []
    for i in sorted(blocks):
        b = blocks[i]
        parts = b["parts"]
        if b["kind"] == "text":
            text = "".join(v for k, v in parts if k == "text")
            cites = [v for k, v in parts if k == "citation"]
            content.append(
                {"citationsContent": {"content": [{"text": text}], "citations": cites}}
                if cites
                else {"text": text}
            )
        elif b["kind"] == "reasoningContent":
            values = [v for _, v in parts]
            redacted = b"".join(v["redactedContent"] for v in values if "redactedContent" in v)
            if redacted:
                content.append(
                    {"reasoningContent": {"redactedContent": base64.b64encode(redacted).decode()}}
                )
                continue
            body = {"text": "".join(v.get("text", "") for v in values)}
            signatures = [v["signature"] for v in values if "signature" in v]
            if signatures:
                body["signature"] = signatures[-1]
            content.append({"reasoningContent": {"reasoningText": body}})
        elif b["kind"] == "toolUse":
            raw = "".join(v["input"] for _, v in parts)
            content.append({"toolUse": {**b["start"], "input": json.loads(raw) if raw else {}}})
        elif b["kind"] == "toolResult":
            items: list[dict[str, Any]] = []
            for _, value in parts:
                for item in value:
                    if "text" in item and items and list(items[-1]) == ["text"]:
                        items[-1] = {"text": items[-1]["text"] + item["text"]}
                    else:
                        items.append(item)
            content.append({"toolResult": {**b["start"], "content": items}})
    return {"message": {"role": "assistant", "content": content}, "stop": stop, "usage": usage}


def _same(ours: Any, theirs: Any) -> None:
    """Block by block, member by member (key order aside: botocore's dicts follow its model)."""
    assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)


def _check(data: bytes, seed: int = 0) -> None:
    events, error = botocore_events(data, seed)
    reference = accumulate(events)
    parsed = FMT.parse(
        request=json.dumps({"messages": [{"role": "user", "content": [{"text": "q"}]}]}),
        stream_base64=base64.b64encode(data).decode(),
        endpoint=endpoint(streamed=True),
    )
    assert parsed.params.stream_error == error
    ours = (
        json.loads(parsed.output[0].raw) if parsed.output else {"role": "assistant", "content": []}
    )
    _same(ours, reference["message"])
    assert parsed.params.stop_reason == reference["stop"]
    usage = reference["usage"]
    assert (parsed.params.usage.input_tokens, parsed.params.usage.output_tokens) == (
        usage.get("inputTokens"),
        usage.get("outputTokens"),
    )


STREAMS = [e for e in exchanges() if e.stream_base64 is not None and e.status == 200]


EMPTY_START = "vercel-ai__amazon-bedrock-tool-no-args.chunks.txt"


@pytest.mark.parametrize("e", [s for s in STREAMS if s.name != EMPTY_START], ids=lambda e: e.name)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_recorded_stream_is_stored_as_botocore_reads_it(e: Any, seed: int) -> None:
    _check(e.data, seed)


def test_an_empty_block_start_botocore_refuses_is_named_by_its_first_delta() -> None:
    (e,) = [s for s in STREAMS if s.name == EMPTY_START]
    with pytest.raises(ResponseParserError, match="one and only one member"):
        botocore_events(e.data)
    parsed = FMT.parse(**e.fields())
    assert [b.type for b in parsed.output[0].blocks] == ["text", "toolUse"]


def _generated() -> dict[str, list[dict[str, Any]]]:
    sig = {"reasoningContent": {"signature": "EqQBsig"}}
    return {
        "reasoning-tool-loop": [
            {"messageStart": {"role": "assistant"}},
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"text": "think "}},
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"text": "more"}},
                }
            },
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": sig}},
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {
                "contentBlockStart": {
                    "contentBlockIndex": 1,
                    "start": {
                        "toolUse": {"toolUseId": "t", "name": "f", "type": "server_tool_use"}
                    },
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 1,
                    "delta": {"toolUse": {"input": '{"a": [1, '}},
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 1,
                    "delta": {"toolUse": {"input": '"é"]}'}},
                }
            },
            {"contentBlockStop": {"contentBlockIndex": 1}},
            {"messageStop": {"stopReason": "tool_use"}},
            {
                "metadata": {
                    "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
                    "metrics": {"latencyMs": 1},
                }
            },
        ],
        "citations-and-results": [
            {"messageStart": {"role": "assistant"}},
            {
                "contentBlockStart": {
                    "contentBlockIndex": 0,
                    "start": {
                        "toolResult": {"toolUseId": "t", "type": "x_result", "status": "success"}
                    },
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"toolResult": [{"text": "a"}, {"text": "b"}]},
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"toolResult": [{"json": {"k": 1}}]},
                }
            },
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "Cited."}}},
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 1,
                    "delta": {"citation": {"title": "T", "sourceContent": [{"text": "s"}]}},
                }
            },
            {"contentBlockStop": {"contentBlockIndex": 1}},
            {"messageStop": {"stopReason": "end_turn"}},
        ],
        "redacted": [
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"redactedContent": "AAECAw=="}},
                }
            },
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "ok"}}},
            {"messageStop": {"stopReason": "end_turn"}},
        ],
        "throttled": [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "so far"}}},
            {"throttlingException": {"message": "Too many requests"}},
        ],
    }


@pytest.mark.parametrize("name", sorted(_generated()))
@pytest.mark.parametrize("seed", [0, 7])
def test_generated_streams_are_stored_as_botocore_reads_them(name: str, seed: int) -> None:
    _check(frames(_generated()[name]), seed)
