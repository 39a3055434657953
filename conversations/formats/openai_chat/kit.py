"""The kit of ``openai.chat`` (``formats/kit.py`` says what each part is for)."""

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
    "conversation": "c-3",
    "customer": "u-9",
    "format": FORMAT,
    "request": json_text(
        {"model": "deepseek-reasoner", "messages": [{"role": "user", "content": "Hi"}]}
    ),
    "response": json_text(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "deepseek-reasoner",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "Hello!",
                        "reasoning_content": "Greet back.",
                    },
                    "finish_reason": "stop",
                }
            ],
        }
    ),
}


def demo(s: DemoFacts) -> list[Sample]:
    """DeepSeek's reasoner answering from its reasoning_content, one call."""
    messages = [
        {"role": "system", "content": "You are a helpful support assistant for an online shop."},
        {"role": "user", "content": s.question},
    ]
    req = {"model": "deepseek-reasoner", "messages": messages, "max_tokens": 2048}
    resp = {
        "id": f"chatcmpl-{s.order[-6:]}",
        "object": "chat.completion",
        "model": "deepseek-reasoner",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": s.answer,
                    "reasoning_content": s.thinking,
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 120,
            "completion_tokens": 210,
            "prompt_cache_hit_tokens": 64,
            "completion_tokens_details": {"reasoning_tokens": 150},
        },
    }
    return [Sample(json_text(req), response=json_text(resp))]


def finish(raw: str) -> Sample:
    response = {
        "id": "c1",
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": raw}
        ],
    }
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    return Sample(json.dumps(request), response=json.dumps(response))


def live_text(deltas: Sequence[str]) -> str:
    return sse(
        [{"choices": [{"index": 0, "delta": {"content": d}}]} for d in deltas]
        + [{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}],
        done=True,
    )


def _client(base_url: str, asynchronous: bool) -> Any:
    import openai

    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return cls(base_url=base_url + "/v1", api_key="sk-fake", max_retries=0, timeout=30.0)


def _arguments(model: str, question: str) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": question}]}


KIT = Kit(
    format=FORMAT,
    minimal_request={
        "model": "deepseek-reasoner",
        "messages": [{"role": "user", "content": "Where is my order ORD-1234567?"}],
    },
    example=EXAMPLE,
    demo=demo,
    reasoning=ReasoningSample(
        {"role": "assistant", "content": "hi", "reasoning_content": "weigh it"}, ("weigh it",)
    ),
    finish=finish,
    live=LiveSample(idle='data: {"id": "c", "choices": []}\n\n', text=live_text),
    fixtures=(Fixture("providers/*__deepseek*"), Fixture("streams/openai-chat-*")),
    sdk=PythonSdk("openai", _client, sdk_create("chat.completions", _arguments)),
)
