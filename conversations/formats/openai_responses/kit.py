"""The kit of ``openai.responses`` (``formats/kit.py`` says what each part is for)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..kit import (
    DemoFacts,
    Fixture,
    Kit,
    LiveSample,
    PythonSdk,
    ReasoningSample,
    Sample,
    json_text,
    sdk_create,
    sse,
)
from .profile import FORMAT

EXAMPLE = {
    "conversation": "c-2",
    "customer": "u-9",
    "format": FORMAT,
    "request": json_text({"model": "gpt-5-mini", "input": "Where is order ORD-1?"}),
    "stream": "event: response.completed\n"
    "data: "
    + json_text(
        {
            "type": "response.completed",
            "sequence_number": 0,
            "response": {
                "id": "resp_1",
                "object": "response",
                "status": "completed",
                "model": "gpt-5-mini-2025-08-07",
                "output": [
                    {
                        "id": "msg_1",
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": [
                            {"type": "output_text", "text": "It shipped.", "annotations": []}
                        ],
                    }
                ],
                "usage": {"input_tokens": 12, "output_tokens": 5},
            },
        }
    )
    + "\n\n",
    "labels": {"queue": "billing"},
}


def demo(s: DemoFacts) -> list[Sample]:
    """An order lookup: a reasoning item with its summary, a function call, its output, the
    answer."""
    user = {"role": "user", "content": [{"type": "input_text", "text": s.question}]}
    reasoning = {
        "id": f"rs_{s.order[-6:]}",
        "type": "reasoning",
        "encrypted_content": "gAAAAAB" + "q" * 60,
        "summary": [{"type": "summary_text", "text": s.thinking}],
    }
    call = {
        "id": f"fc_{s.order[-6:]}",
        "type": "function_call",
        "status": "completed",
        "name": "lookup_order",
        "call_id": f"call_{s.order[-6:]}",
        "arguments": json_text({"order_id": s.order}),
    }
    req1 = {
        "model": "gpt-5-mini",
        "input": [user],
        "reasoning": {"effort": "medium", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "store": False,
    }
    usage = {
        "input_tokens": 380,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 240,
        "output_tokens_details": {"reasoning_tokens": 192},
        "total_tokens": 620,
    }
    resp1 = {
        "id": f"resp_{s.order[-6:]}a",
        "object": "response",
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "model": "gpt-5-mini-2025-08-07",
        "output": [reasoning, call],
        "usage": usage,
    }
    output = {
        "type": "function_call_output",
        "call_id": f"call_{s.order[-6:]}",
        "output": json_text(s.tool_result()),
    }
    req2 = {**req1, "input": [user, reasoning, call, output]}
    message = {
        "id": f"msg_{s.order[-6:]}",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "annotations": [], "text": s.answer}],
    }
    resp2 = {
        **resp1,
        "id": f"resp_{s.order[-6:]}b",
        "output": [message],
        "usage": {**usage, "output_tokens": 70, "output_tokens_details": {"reasoning_tokens": 0}},
    }
    return [
        Sample(json_text(req1), response=json_text(resp1)),
        Sample(json_text(req2), response=json_text(resp2)),
    ]


def finish(raw: str) -> Sample:
    incomplete = raw in ("max_output_tokens", "content_filter")
    response = {
        "id": "resp_1",
        "object": "response",
        "model": "m",
        "status": "incomplete" if incomplete else raw,
        "incomplete_details": {"reason": raw} if incomplete else None,
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "x", "annotations": []}],
            }
        ],
    }
    return Sample(json.dumps({"model": "m", "input": "hi"}), response=json.dumps(response))


def live_text(deltas: Sequence[str]) -> str:
    return sse(
        [
            {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}},
            {
                "type": "response.content_part.added",
                "output_index": 0,
                "content_index": 0,
                "part": {"type": "output_text", "text": ""},
            },
            *(
                {
                    "type": "response.output_text.delta",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": d,
                }
                for d in deltas
            ),
            {"type": "response.output_text.done", "output_index": 0, "content_index": 0},
            {"type": "response.completed", "response": {"status": "completed"}},
        ]
    )


def _client(base_url: str, asynchronous: bool) -> Any:
    import openai

    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return cls(base_url=base_url + "/v1", api_key="sk-fake", max_retries=0, timeout=30.0)


def _arguments(model: str, question: str) -> dict[str, Any]:
    return {"model": model, "input": [{"role": "user", "content": question}]}


KIT = Kit(
    format=FORMAT,
    minimal_request={"model": "gpt-5-mini", "input": "Where is my order ORD-1234567?"},
    example=EXAMPLE,
    demo=demo,
    reasoning=ReasoningSample(
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "weigh it"}],
        },
        ("weigh it",),
    ),
    finish=finish,
    live=LiveSample(
        idle='data: {"type": "response.created", "response": {"id": "r"}}\n\n', text=live_text
    ),
    fixtures=(
        Fixture("providers/*__openai*"),
        Fixture("providers/*__test_openai_responses*"),
        Fixture("providers/*__test_reasoning_summary*"),
        Fixture("streams/openai-responses-*"),
    ),
    sdk=PythonSdk("openai", _client, sdk_create("responses", _arguments)),
)
