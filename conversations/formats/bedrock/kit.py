"""The kit of ``bedrock.converse`` (``formats/kit.py`` says what each part is for). Its streams
are binary: a sample's stream is ``stream_base64``, and its live chunks are base64 too (the
live API's ``chunk_base64``)."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..kit import DemoFacts, Fixture, Kit, LiveSample, PythonSdk, ReasoningSample, Sample, json_text
from .eventstream import encode_frame
from .profile import FORMAT

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def endpoint(model: str = MODEL, *, streamed: bool = False) -> str:
    """The path a boto3 ``bedrock-runtime`` client calls: the model id percent-encoded."""
    from urllib.parse import quote

    return f"/model/{quote(model, safe='')}/{'converse-stream' if streamed else 'converse'}"


def frames(events: Sequence[Mapping[str, Any]], *, padding: bool = True) -> bytes:
    """Events ``{<type>: <payload>}`` as the provider's eventstream frames (each payload with
    the padding member ``p``, as Bedrock sends it). A type ending in ``Exception`` is an
    exception frame."""
    out = b""
    for event in events:
        ((name, payload),) = event.items()
        body = dict(payload)
        if padding and not name.endswith("Exception"):
            body["p"] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"[: 1 + len(out) % 30]
        kind = "exception" if name.endswith("Exception") else "event"
        out += encode_frame(name, json.dumps(body).encode(), kind=kind)
    return out


def stream_base64(events: Sequence[Mapping[str, Any]]) -> str:
    return base64.b64encode(frames(events)).decode()


MINIMAL_REQUEST = {
    "messages": [{"role": "user", "content": [{"text": "Where is my order ORD-1234567?"}]}]
}

EXAMPLE = {
    "conversation": "c-bedrock-1",
    "customer": "u-9",
    "format": FORMAT,
    "endpoint": endpoint(),
    "request": json_text(
        {
            "messages": [{"role": "user", "content": [{"text": "Where is order ORD-1?"}]}],
            "inferenceConfig": {"maxTokens": 1024},
            "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 512}},
        }
    ),
    "response": json_text(
        {
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "reasoningContent": {
                                "reasoningText": {"text": "Look it up.", "signature": "EqQB..."}
                            }
                        },
                        {"text": "It shipped yesterday."},
                    ],
                }
            },
            "stopReason": "end_turn",
            "usage": {"inputTokens": 20, "outputTokens": 30, "totalTokens": 50},
            "metrics": {"latencyMs": 1234},
        }
    ),
    "started_at": "2026-11-29T10:00:00Z",
    "latency_ms": 1234,
    "labels": {"queue": "billing"},
}


def demo(s: DemoFacts) -> list[Sample]:
    """An order lookup on Bedrock: reasoning with its signature, a tool call, its result, then
    the answer streamed (the eventstream, the reasoning block sent back unmodified)."""
    user = {"role": "user", "content": [{"text": s.question}]}
    call_id = f"tooluse_{s.order[-6:]}"
    reasoning = {"reasoningText": {"text": s.thinking, "signature": "EqQB" + "y" * 40}}
    content1 = [
        {"reasoningContent": reasoning},
        {"text": "Let me look that order up for you."},
        {"toolUse": {"toolUseId": call_id, "name": "get_order", "input": {"order_id": s.order}}},
    ]
    req1 = {
        "messages": [user],
        "system": [{"text": "You are the support assistant of an online shop."}],
        "inferenceConfig": {"maxTokens": 4096},
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "get_order",
                        "inputSchema": {"json": {"type": "object"}},
                    }
                }
            ]
        },
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
    }
    resp1 = {
        "output": {"message": {"role": "assistant", "content": content1}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 412, "outputTokens": 161, "totalTokens": 573},
        "metrics": {"latencyMs": 2100},
    }
    result = {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": call_id, "content": [{"json": s.tool_result()}]}}],
    }
    req2 = {**req1, "messages": [user, {"role": "assistant", "content": content1}, result]}
    words = s.answer.split(" ")
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    events += [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": w + " "}}}
        for w in words[:-1]
    ]
    events += [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": words[-1]}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
        {
            "metadata": {
                "usage": {
                    "inputTokens": 228,
                    "outputTokens": 58,
                    "cacheReadInputTokens": 412,
                    "cacheWriteInputTokens": 0,
                    "totalTokens": 698,
                },
                "metrics": {"latencyMs": 900},
            }
        },
    ]
    return [
        Sample(json_text(req1), response=json_text(resp1), endpoint=endpoint()),
        Sample(
            json_text(req2),
            stream_base64=stream_base64(events),
            endpoint=endpoint(streamed=True),
        ),
    ]


def finish(raw: str) -> Sample:
    request = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    response = {
        "output": {"message": {"role": "assistant", "content": [{"text": "x"}]}},
        "stopReason": raw,
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    }
    return Sample(json.dumps(request), response=json.dumps(response), endpoint=endpoint("m"))


def live_text(deltas: Sequence[str]) -> str:
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    events += [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": d}}} for d in deltas
    ]
    events += [
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    return stream_base64(events)


def _client(base_url: str, asynchronous: bool) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=base_url,
        aws_access_key_id="AKIAFAKE",
        aws_secret_access_key="fake",  # noqa: S106 (a fake provider's)
        config=Config(retries={"max_attempts": 1}, read_timeout=30),
    )


def _call(client: Any, model: str, question: str, streamed: bool) -> Any:
    messages = [{"role": "user", "content": [{"text": question}]}]
    if streamed:
        answer = client.converse_stream(modelId=model, messages=messages)
        return list(answer["stream"])
    return [client.converse(modelId=model, messages=messages)]


KIT = Kit(
    format=FORMAT,
    minimal_request=MINIMAL_REQUEST,
    example=EXAMPLE,
    demo=demo,
    reasoning=ReasoningSample(
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "weigh it", "signature": "s"}}}
            ],
        },
        ("weigh it",),
    ),
    finish=finish,
    live=LiveSample(idle=stream_base64([{"messageStart": {"role": "assistant"}}]), text=live_text),
    fixtures=(Fixture("bedrock/*"),),
    sdk=PythonSdk("boto3", _client, _call),
)
