"""One ingest body per format, shown on the OpenAPI page beside the schema of ``body.py``.

``tests/conversations/test_ingest_body.py`` posts each one (each must be stored: 201) and fails
for a registered format without one, so the page never shows a body the API refuses.
"""

from __future__ import annotations

import json
from typing import Any


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


EXAMPLES: dict[str, dict[str, Any]] = {
    "anthropic.messages": {
        "conversation": "c-1",
        "customer": "u-9",
        "format": "anthropic.messages",
        "request": _json_text(
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 1024,
                "thinking": {"type": "enabled", "budget_tokens": 512},
                "messages": [{"role": "user", "content": "Where is order ORD-1?"}],
            }
        ),
        "response": _json_text(
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
            }
        ),
        "started_at": "2026-11-29T10:00:00Z",
        "latency_ms": 1234,
        "labels": {"queue": "billing"},
    },
    "openai.responses": {
        "conversation": "c-2",
        "customer": "u-9",
        "format": "openai.responses",
        "request": _json_text({"model": "gpt-5-mini", "input": "Where is order ORD-1?"}),
        "stream": "event: response.completed\n"
        "data: "
        + _json_text(
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
    },
    "openai.chat": {
        "conversation": "c-3",
        "customer": "u-9",
        "format": "openai.chat",
        "request": _json_text(
            {"model": "deepseek-reasoner", "messages": [{"role": "user", "content": "Hi"}]}
        ),
        "response": _json_text(
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
    },
    "ai-sdk.ui": {
        "conversation": "c-4",
        "customer": "u-9",
        "format": "ai-sdk.ui",
        "request": _json_text(
            {"messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}]}
        ),
        "response": _json_text(
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
    },
}
