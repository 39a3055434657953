"""Markers planted in a live stream's thinking, signature and encrypted reasoning never reach
Redis (every command the server sends it, captured with MONITOR: keys, values, pub/sub
messages), the logs, or an SSE byte; visible text reaches Redis only redacted."""

from __future__ import annotations

import json
import logging
import random
import threading
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.live import state
from tests.conftest import post_json
from tests.live.conftest import chunk_body, stored_conversation
from tests.live.test_filters import cuts

pytestmark = pytest.mark.django_db

THINKING = "MARKER-LIVE-THINKING-9f3c"
SIGNATURE = "MARKER-LIVE-SIGNATURE-1a7e"
ENCRYPTED = "MARKER-LIVE-ENCRYPTED-55d0"
SUMMARY = "MARKER-LIVE-SUMMARY-c2b8"
CHAT_REASONING = "MARKER-LIVE-REASONING-0e41"
CARD = "4242 4242 4242 4242"
MARKERS = [THINKING, SIGNATURE, ENCRYPTED, SUMMARY, CHAT_REASONING]


def _sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"event: {e.get('type', 'message')}\ndata: {json.dumps(e)}\n\n" for e in events)


STREAMS = {
    "anthropic.messages": _sse(
        [
            {"type": "message_start", "message": {"id": "m", "content": []}},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
            *(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": f"step {i} {THINKING} "},
                }
                for i in range(30)
            ),
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": SIGNATURE},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "redacted_thinking", "data": ENCRYPTED},
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "text", "text": ""},
            },
            *(
                {
                    "type": "content_block_delta",
                    "index": 2,
                    "delta": {"type": "text_delta", "text": t},
                }
                for t in ["Your card ", CARD[:7], CARD[7:], " is on file. ", "All good. " * 8]
            ),
            {"type": "content_block_stop", "index": 2},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
            {"type": "message_stop"},
        ]
    ),
    "openai.responses": _sse(
        [
            {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {
                    "type": "reasoning",
                    "id": "rs",
                    "encrypted_content": ENCRYPTED,
                    "summary": [],
                },
            },
            *(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "output_index": 0,
                    "summary_index": 0,
                    "delta": f"{SUMMARY} {i} ",
                }
                for i in range(30)
            ),
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "type": "reasoning",
                    "id": "rs",
                    "encrypted_content": ENCRYPTED,
                    "summary": [{"type": "summary_text", "text": SUMMARY}],
                },
            },
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {"type": "message", "id": "m", "role": "assistant", "content": []},
            },
            {
                "type": "response.content_part.added",
                "output_index": 1,
                "content_index": 0,
                "part": {"type": "output_text", "text": ""},
            },
            *(
                {
                    "type": "response.output_text.delta",
                    "output_index": 1,
                    "content_index": 0,
                    "delta": t,
                }
                for t in ["Your card ", CARD[:7], CARD[7:], " is on file. ", "All good. " * 8]
            ),
            {"type": "response.output_text.done", "output_index": 1, "content_index": 0},
            {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
        ]
    ),
    "openai.chat": "".join(
        f"data: {json.dumps(e)}\n\n"
        for e in [
            *(
                {
                    "choices": [
                        {"index": 0, "delta": {"reasoning_content": f"{CHAT_REASONING} {i} "}}
                    ]
                }
                for i in range(30)
            ),
            *(
                {"choices": [{"index": 0, "delta": {"content": t}}]}
                for t in ["Your card ", CARD[:7], CARD[7:], " is on file. ", "All good. " * 8]
            ),
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
    )
    + "data: [DONE]\n\n",
    "ai-sdk.ui": "".join(
        f"data: {json.dumps(e)}\n\n"
        for e in [
            {"type": "start"},
            {
                "type": "reasoning-start",
                "id": "r1",
                "providerMetadata": {"anthropic": {"signature": SIGNATURE}},
            },
            *(
                {"type": "reasoning-delta", "id": "r1", "delta": f"{THINKING} {i} "}
                for i in range(30)
            ),
            {"type": "reasoning-end", "id": "r1"},
            {"type": "text-start", "id": "t1"},
            *(
                {"type": "text-delta", "id": "t1", "delta": t}
                for t in ["Your card ", CARD[:7], CARD[7:], " is on file. ", "All good. " * 8]
            ),
            {"type": "text-end", "id": "t1"},
            {"type": "finish"},
        ]
    )
    + "data: [DONE]\n\n",
}


class Monitor:
    """Every command Redis receives while it runs (MONITOR), as text."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._conn = state.client().monitor()
        self._conn.__enter__()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.lines.append(self._conn.next_command()["command"])
            except Exception:
                return

    def stop(self) -> str:
        state.client().ping()  # one more command, so the reader wakes
        self._stop.set()
        self._thread.join(timeout=2)
        self._conn.__exit__(None, None, None)
        return "\n".join(self.lines)


@pytest.mark.parametrize("fmt", list(STREAMS))
def test_markers_never_reach_redis_logs_or_subscribers(
    api: APIClient, fmt: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    name = f"live-markers-{fmt}"
    pk = stored_conversation(api, name, fmt)
    pubsub = state.client().pubsub()
    pubsub.psubscribe(state.key("*"))
    monitor = Monitor()
    try:
        for seq, piece in enumerate(cuts(STREAMS[fmt], random.Random(5), most=60)):
            r = post_json(
                api, "/api/v1/live/chunks", chunk_body(None, name, seq, piece, format=fmt)
            )
            assert r.status_code == 202, r.json()
    finally:
        seen = monitor.stop()
    messages = []
    while (m := pubsub.get_message(timeout=0.05)) is not None:
        if m["type"] == "pmessage":
            messages.append(m["data"].decode())
    published = "\n".join(messages)
    stored = "\n".join(
        v.decode(errors="replace")
        for k in state.client().scan_iter(state.key("*"))
        if state.client().type(k) == b"string"
        for v in [state.client().get(k) or b""]
    )
    kept = "\n".join(x.decode() for x in state.client().lrange(state.key("log", pk), 0, -1))
    assert "SET" in seen.upper() and "PUBLISH" in seen.upper()  # the capture saw the writes
    for marker in MARKERS:
        for where, text in [
            ("redis", seen),
            ("pubsub", published),
            ("keys", stored),
            ("log", kept),
            ("logs", caplog.text),
        ]:
            assert marker not in text, (marker, where)
    # the visible text went out, redacted: the card never in the clear, in part or whole
    assert "is on file" in published and "[card" in published
    for where, text in [("redis", seen), ("pubsub", published)]:
        assert "4242 4242" not in text and CARD[7:] not in text, where
