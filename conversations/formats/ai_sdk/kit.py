"""The kit of ``ai-sdk.ui`` (``formats/kit.py`` says what each part is for). No Python SDK: the
UI message stream is captured where the chat backend answers its browser (the JS client)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..kit import DemoFacts, Fixture, Kit, LiveSample, ReasoningSample, Sample, json_text, sse
from .profile import FORMAT

EXAMPLE = {
    "conversation": "c-4",
    "customer": "u-9",
    "format": FORMAT,
    "request": json_text(
        {"messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}]}
    ),
    "response": json_text(
        {
            "id": "m2",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "reasoning", "text": "Greet back.", "state": "done"},
                {"type": "text", "text": "Hello!", "state": "done"},
            ],
        }
    ),
}


def demo(s: DemoFacts) -> list[Sample]:
    """One UI message: reasoning, a tool part with its output, the answer."""
    user = {
        "id": f"u_{s.order[-6:]}",
        "role": "user",
        "parts": [{"type": "text", "text": s.question}],
    }
    assistant = {
        "id": f"a_{s.order[-6:]}",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": s.thinking, "state": "done"},
            {
                "type": "tool-getOrderStatus",
                "toolCallId": f"call_{s.order[-6:]}",
                "state": "output-available",
                "input": {"orderId": s.order},
                "output": s.tool_result(),
            },
            {"type": "step-start"},
            {"type": "text", "text": s.answer, "state": "done"},
        ],
    }
    req = {"id": s.conversation, "messages": [user], "trigger": "submit-message"}
    return [Sample(json_text(req), response=json_text(assistant))]


def finish(raw: str) -> Sample:
    chunks = [
        {"type": "start", "messageId": "a1"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "x"},
        {"type": "text-end", "id": "t"},
        {"type": "finish", "finishReason": raw},
    ]
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    return Sample(json.dumps({"messages": [user]}), stream=sse(chunks, done=True))


def live_text(deltas: Sequence[str]) -> str:
    return sse(
        [
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            *({"type": "text-delta", "id": "t", "delta": d} for d in deltas),
            {"type": "text-end", "id": "t"},
            {"type": "finish"},
        ],
        done=True,
    )


KIT = Kit(
    format=FORMAT,
    minimal_request={
        "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Where is my order?"}]}
        ]
    },
    example=EXAMPLE,
    demo=demo,
    reasoning=ReasoningSample(
        {
            "id": "a",
            "role": "assistant",
            "parts": [{"type": "reasoning", "text": "weigh it", "state": "done"}],
        },
        ("weigh it",),
    ),
    finish=finish,
    live=LiveSample(idle='data: {"type": "start"}\n\n', text=live_text),
    fixtures=(
        Fixture("streams/ai-sdk-*"),
        Fixture("ai_sdk/assistant-stream.sse", request="ai_sdk/chat-request.json"),
    ),
)
