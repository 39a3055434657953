"""A live answer for the browser test: an Anthropic stream that searches the web (a server tool,
call and result in the same response) and then answers in Markdown."""

from __future__ import annotations

import json
from typing import Any

ANSWER_PIECES = [
    "Your order **ORD-7",
    "770001** has *shipp",
    "ed*.\n\n- carrier: DHL\n",
    "- <script>window.__live_pwned = 1</script> arrives `Monday`\n",
]
ANSWER = "".join(ANSWER_PIECES)


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def live_stream() -> list[str]:
    """The SSE text in the order it arrives, one event (or text delta) a piece."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_live_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 120, "output_tokens": 1},
        },
    }
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://carrier.example.com/track",
                "title": "Tracking",
                "encrypted_content": "abc",
            }
        ],
    }
    pieces = [
        _event("message_start", start),
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": call},
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"query": "ORD-7770001"}'},
            },
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 1, "content_block": result},
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 1}),
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    for text in ANSWER_PIECES:
        pieces.append(
            _event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 2,
                    "delta": {"type": "text_delta", "text": text},
                },
            )
        )
    pieces += [
        _event("content_block_stop", {"type": "content_block_stop", "index": 2}),
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 60, "server_tool_use": {"web_search_requests": 1}},
            },
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]
    return pieces
