"""Realistic demo exchanges in every provider format, shaped like the recorded fixtures.

``demo_bodies(n)`` yields ``POST /api/v1/exchanges`` bodies (dicts) for ``n`` conversations of
customer support with reasoning models that call tools: an order lookup, a refund, a tracking
question, in Anthropic Messages, OpenAI Responses, Chat Completions and AI SDK UI formats.
Used by ``seed_demo`` and by the benchmarks (the same bodies the API would receive).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

FIRST = [
    "Ana",
    "Ben",
    "Chloé",
    "Dmitri",
    "Eva",
    "Farah",
    "Gus",
    "Hana",
    "Ivo",
    "Jules",
    "Kofi",
    "Lena",
]
LAST = ["Moreau", "Okafor", "Schmidt", "Tanaka", "Silva", "Novak", "Haddad", "Larsen", "Rossi"]
QUEUES = ["billing", "shipping", "returns", "technical"]
CARRIERS = ["DHL", "UPS", "La Poste", "PostNL"]
STATUSES = ["shipped", "processing", "delivered", "delayed"]

QUESTIONS = [
    "Hi, where is my order {order}? It was supposed to arrive on Monday. My email is {email}.",
    "Hello, I was charged twice for order {order}. Can you check? You can call me on {phone}.",
    "My parcel {order} says delivered but I never got it. I'm at {email}.",
    "Can I still change the delivery address for {order}? Phone: {phone}",
]
THINKING = [
    "The customer asks about order {order}. I should look it up before answering "
    "and not guess the status.",
    "Two charges on {order}: check the payment records first, then explain the refund timeline.",
]
ANSWERS = [
    "Your order {order} is {status} with {carrier}; tracking number {tracking}. "
    "It should arrive within two days.",
    "I checked order {order}: it is {status}. I've opened a refund for the duplicate charge; "
    "it takes 3 to 5 business days.",
]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Scenario:
    def __init__(self, rng: random.Random, index: int) -> None:
        self.rng = rng
        first, last = rng.choice(FIRST), rng.choice(LAST)
        self.customer = f"cus_{index:06d}"
        self.conversation = f"conv_{index:06d}_{rng.randrange(16**6):06x}"
        self.order = f"ORD-{rng.randrange(10**6, 10**7)}"
        self.email = f"{first.lower()}.{last.lower()}@example.com".replace("é", "e")
        self.phone = "+33 6 " + " ".join(str(rng.randrange(10, 99)) for _ in range(4))
        self.status = rng.choice(STATUSES)
        self.carrier = rng.choice(CARRIERS)
        self.tracking = f"1Z{rng.randrange(16**10):010X}"
        self.queue = rng.choice(QUEUES)
        self.question = rng.choice(QUESTIONS).format(**self.__dict__)
        self.thinking = rng.choice(THINKING).format(**self.__dict__)
        self.answer = rng.choice(ANSWERS).format(**self.__dict__)
        # 37 minutes apart over 20 days from 2026-11-01, then round again: a million demo
        # conversations stay in the past, in the window ingest accepts (conversations/bounds.py).
        self.started = datetime(2026, 11, 1, 9, tzinfo=UTC) + timedelta(
            minutes=(37 * index) % (20 * 24 * 60)
        )

    def tool_result(self) -> dict[str, Any]:
        return {
            "order_id": self.order,
            "status": self.status,
            "carrier": self.carrier,
            "tracking_id": self.tracking,
            "shipping_address": f"{self.rng.randrange(1, 200)} rue de la Paix, 75002 Paris",
            "customer_email": self.email,
        }

    def body(self, fmt: str, request: Any, response: Any, step: int) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "customer": self.customer,
            "format": fmt,
            "request": _compact(request),
            "response": _compact(response),
            "started_at": (self.started + timedelta(seconds=40 * step)).isoformat(),
            "latency_ms": self.rng.randrange(800, 9000),
            "labels": {"queue": self.queue},
        }


def _anthropic(s: _Scenario) -> list[dict[str, Any]]:
    model = "claude-sonnet-4-5"
    user = {"role": "user", "content": s.question}
    content1 = [
        {"type": "thinking", "thinking": s.thinking, "signature": "EqQB" + "x" * 40},
        {"type": "text", "text": "Let me look that order up for you."},
        {
            "type": "tool_use",
            "id": f"toolu_{s.order[-6:]}",
            "name": "get_order",
            "input": {"order_id": s.order},
        },
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
    tool_result = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": f"toolu_{s.order[-6:]}",
                "content": _compact(s.tool_result()),
            }
        ],
    }
    req2 = {**req1, "messages": [user, {"role": "assistant", "content": content1}, tool_result]}
    resp2 = {
        "id": f"msg_{s.order[-6:]}b",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": s.answer}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            **usage,
            "input_tokens": 640,
            "cache_read_input_tokens": 412,
            "output_tokens": 58,
        },
    }
    return [
        s.body("anthropic.messages", req1, resp1, 0),
        s.body("anthropic.messages", req2, resp2, 1),
    ]


def _openai_responses(s: _Scenario) -> list[dict[str, Any]]:
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
        "arguments": _compact({"order_id": s.order}),
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
        "output": _compact(s.tool_result()),
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
    return [s.body("openai.responses", req1, resp1, 0), s.body("openai.responses", req2, resp2, 1)]


def _openai_chat(s: _Scenario) -> list[dict[str, Any]]:
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
    return [s.body("openai.chat", req, resp, 0)]


def _ai_sdk(s: _Scenario) -> list[dict[str, Any]]:
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
    return [s.body("ai-sdk.ui", req, assistant, 0)]


BUILDERS = [_anthropic, _openai_responses, _openai_chat, _ai_sdk]


def demo_bodies(n: int, *, seed: int = 7, start: int = 0) -> Iterator[dict[str, Any]]:
    """Exchange bodies for ``n`` conversations, in order, each conversation's exchanges in turn."""
    rng = random.Random(seed)
    for index in range(start, start + n):
        scenario = _Scenario(rng, index)
        yield from BUILDERS[index % len(BUILDERS)](scenario)
