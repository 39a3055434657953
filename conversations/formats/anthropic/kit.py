"""The kit of ``anthropic.messages`` (``formats/kit.py`` says what each part is for)."""

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

MINIMAL_REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "Where is my order ORD-1234567?"}],
}

EXAMPLE = {
    "conversation": "c-1",
    "customer": "u-9",
    "format": FORMAT,
    "request": json.dumps(
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "thinking": {"type": "enabled", "budget_tokens": 512},
            "messages": [{"role": "user", "content": "Where is order ORD-1?"}],
        },
        separators=(",", ":"),
    ),
    "response": json.dumps(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "EqQB..."},
                {"type": "text", "text": "It shipped yesterday."},
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 20, "output_tokens": 30},
        },
        separators=(",", ":"),
    ),
    "started_at": "2026-11-29T10:00:00Z",
    "latency_ms": 1234,
    "labels": {"queue": "billing"},
}


def demo(s: DemoFacts) -> list[Sample]:
    """An order lookup: thinking, a tool call, its result, the answer (the second call reads
    the first's prompt from the cache). Its twists (``DEMO_TWISTS``, the facts' ``twist``):
    the answer cut off at ``max_tokens`` or refused, the lookup called twice with the same
    arguments in one answer, the lookup failing, or a third call whose history edits the
    model's first answer (a rewrite)."""
    twist = s.twist
    model = "claude-sonnet-4-5"
    user = {"role": "user", "content": s.question}
    call_id = f"toolu_{s.order[-6:]}"
    calls = [
        {"type": "tool_use", "id": call_id, "name": "get_order", "input": {"order_id": s.order}}
    ]
    if twist == "looping":  # the same call again, in the same answer
        calls.append({**calls[0], "id": call_id + "b"})
    opening = {"type": "text", "text": "Let me look that order up for you."}
    content1 = [
        {"type": "thinking", "thinking": s.thinking, "signature": "EqQB" + "x" * 40},
        opening,
        *calls,
    ]
    req1 = {
        "model": model,
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [{"name": "get_order", "input_schema": {"type": "object"}}],
        "messages": [user],
    }
    usage = {
        "input_tokens": 412,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 161,
    }
    resp1 = {
        "id": f"msg_{s.order[-6:]}a",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content1,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": usage,
    }
    results: list[dict[str, Any]] = []
    for call in calls:
        if twist == "tool_error":
            error = {"error": {"message": "order service timed out"}}
            results.append({"type": "tool_result", "tool_use_id": call["id"],
                            "content": json_text(error), "is_error": True})  # fmt: skip
        else:
            results.append({"type": "tool_result", "tool_use_id": call["id"],
                            "content": json_text(s.tool_result())})  # fmt: skip
    tool_result = {"role": "user", "content": results}
    req2 = {**req1, "messages": [user, {"role": "assistant", "content": content1}, tool_result]}
    stop, answer, out = "end_turn", s.answer, 58
    if twist == "truncated":  # the reasoning ate the allowance: the answer is cut off
        stop, answer, out = "max_tokens", s.answer[: len(s.answer) // 3], 4096
    elif twist == "refused":
        stop, answer = "refusal", "I can't help with that request."
    answer2 = [{"type": "text", "text": answer}]
    resp2 = {
        "id": f"msg_{s.order[-6:]}b",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": answer2,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            **usage,
            "input_tokens": 640,
            "cache_read_input_tokens": 412,
            "output_tokens": out,
        },
    }
    samples = [
        Sample(json_text(req1), response=json_text(resp1)),
        Sample(json_text(req2), response=json_text(resp2)),
    ]
    if twist == "rewritten":
        # The backend resends the history with the model's first answer edited: a rewrite the
        # model sees (the prompt cache misses from there).
        edited = [c if c is not opening else {**opening, "text": "Checking that order."}
                  for c in content1]  # fmt: skip
        req3 = {
            **req1,
            "messages": [
                user,
                {"role": "assistant", "content": edited},
                tool_result,
                {"role": "assistant", "content": answer2},
                {"role": "user", "content": "Thanks. Can it be delivered to my office instead?"},
            ],
        }
        resp3 = {
            **resp2,
            "id": f"msg_{s.order[-6:]}c",
            "content": [{"type": "text", "text": "I have asked the carrier to change it."}],
            "usage": {**usage, "input_tokens": 720, "output_tokens": 40},
        }
        samples.append(Sample(json_text(req3), response=json_text(resp3)))
    return samples


# What the demo's twists do in this format (``kit.DEMO_TWISTS``): all of them.
DEMO_TWISTS = frozenset({"truncated", "refused", "looping", "tool_error", "rewritten"})


def finish(raw: str) -> Sample:
    request = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "x"}],
        "stop_reason": raw,
    }
    return Sample(json.dumps(request), response=json.dumps(response))


def live_text(deltas: Sequence[str]) -> str:
    return sse(
        [
            {"type": "message_start", "message": {"id": "m", "content": []}},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            *(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": d},
                }
                for d in deltas
            ),
            {"type": "content_block_stop", "index": 0},
            {"type": "message_stop"},
        ]
    )


def _client(base_url: str, asynchronous: bool) -> Any:
    import anthropic

    cls = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
    return cls(base_url=base_url, api_key="sk-fake", max_retries=0, timeout=30.0)


def _arguments(model: str, question: str) -> dict[str, Any]:
    return {
        "model": model,
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": question}],
    }


KIT = Kit(
    format=FORMAT,
    minimal_request=MINIMAL_REQUEST,
    example=EXAMPLE,
    demo=demo,
    reasoning=ReasoningSample(
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "weigh it", "signature": "s"}],
        },
        ("weigh it",),
    ),
    finish=finish,
    live=LiveSample(idle='event: ping\ndata: {"type": "ping"}\n\n', text=live_text),
    fixtures=(
        Fixture("providers/*__anthropic*"),
        Fixture("providers/*__incomplete_partial_json_response*"),
        Fixture("providers/*__spliced-message-start*"),
        Fixture("providers/*__test_anthropic*"),
        Fixture("providers/*__test_pause_turn*"),
        Fixture("streams/anthropic-*"),
    ),
    sdk=PythonSdk("anthropic", _client, sdk_create("messages", _arguments)),
    demo_twists=DEMO_TWISTS,
)
