"""Conversations per format, in an open tool loop and outside one, with reasoning in an earlier
turn and in the last: the raw request texts carry odd spacing, so a re-serialised element could
not pass for the one received."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

REASONING = "MARKER-CONTINUATION-REASONING"


@dataclass(frozen=True)
class Case:
    fmt: str
    open_loop: bool
    request: str
    response: str
    history_cut: str  # the earlier assistant message as it must come back (its reasoning cut)
    left_out: int  # elements left out
    rule: str  # the continuation rule that decides (formats/<name>/profile.py)

    def body(self, conversation: str) -> dict[str, Any]:
        return {
            "conversation": conversation,
            "customer": f"cus-{conversation}",
            "format": self.fmt,
            "request": self.request,
            "response": self.response,
        }


def _j(value: Any) -> str:
    return json.dumps(value)


ANTHROPIC_HISTORY = (
    '{"role":"assistant","content":[ {"type":"thinking","thinking":"' + REASONING + '-1",'
    '"signature":"SIG-1"} , {"type": "text",  "text":"A1"} ]}'
)
ANTHROPIC_CUT = '{"role":"assistant","content":[{"type": "text",  "text":"A1"}]}'
ANTHROPIC_REQUEST = (
    '{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[ {"role": "user", "content": "Q1"},'
    + ANTHROPIC_HISTORY
    + ',{"role":"user","content":"Q2"}]}'
)


def _anthropic_response(content: list[Any], stop: str) -> str:
    return _j({"id": "msg_2", "type": "message", "role": "assistant",
               "model": "claude-sonnet-4-5-20250929", "content": content, "stop_reason": stop,
               "usage": {"input_tokens": 10, "output_tokens": 5}})  # fmt: skip


THINKING_2 = {"type": "thinking", "thinking": REASONING + "-2", "signature": "SIG-2"}
TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "get_order",
            "input": {"order_id": "ORD-1"}}  # fmt: skip

RESPONSES_HISTORY = '{"type": "reasoning", "id":"rs_1","summary":[],"encrypted_content":"ENC-1"}'
RESPONSES_REQUEST = (
    '{"model":"gpt-5-mini","input":[{"role":"user","content":"Q1"}, '
    + RESPONSES_HISTORY
    + ',{"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text",'
    '"text":"A1","annotations":[]}]},{"role":"user","content":"Q2"}]}'
)
REASONING_2 = {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "ENC-2"}


def _responses_response(output: list[Any]) -> str:
    return _j({"id": "resp_2", "object": "response", "status": "completed",
               "model": "gpt-5-mini-2025-08-07", "output": output,
               "usage": {"input_tokens": 12, "output_tokens": 5}})  # fmt: skip


CHAT_HISTORY = '{"role":"assistant", "content":"A1" ,"reasoning_content": "' + REASONING + '-1"}'
CHAT_CUT = '{"role":"assistant","content":"A1"}'  # members joined by ","
CHAT_REQUEST = (
    '{"model":"deepseek-reasoner","messages":[{"role":"user","content":"Q1"},'
    + CHAT_HISTORY
    + ',{"role":"user","content":"Q2"}]}'
)


def _chat_response(message: dict[str, Any], finish: str) -> str:
    return _j({"id": "chatcmpl-2", "object": "chat.completion", "model": "deepseek-reasoner",
               "choices": [{"index": 0, "message": message, "finish_reason": finish}]})  # fmt: skip


AI_HISTORY = (
    '{"id":"m2","role":"assistant","parts":[{"type":"step-start"}, {"type":"reasoning",'
    '"text":"' + REASONING + '-1","state":"done"},{"type":"text", "text":"A1","state":"done"}]}'
)
AI_CUT = (
    '{"id":"m2","role":"assistant","parts":[{"type":"step-start"},'
    '{"type":"text", "text":"A1","state":"done"}]}'
)
AI_REQUEST = (
    '{"model":"claude-sonnet-4-5","messages":[{"id":"m1","role":"user","parts":[{"type":"text",'
    '"text":"Q1"}]},'
    + AI_HISTORY
    + ',{"id":"m3","role":"user","parts":[{"type":"text","text":"Q2"}]}]}'
)
AI_REASONING_2 = {"type": "reasoning", "text": REASONING + "-2", "state": "done"}

CASES = {
    ("anthropic", False): Case(
        "anthropic.messages", False, ANTHROPIC_REQUEST,
        _anthropic_response([THINKING_2, {"type": "text", "text": "A2"}], "end_turn"),
        ANTHROPIC_CUT, 2, "anthropic.earlier-thinking",
    ),
    ("anthropic", True): Case(
        "anthropic.messages", True, ANTHROPIC_REQUEST,
        _anthropic_response([THINKING_2, {"type": "text", "text": "Looking."}, TOOL_USE],
                            "tool_use"),
        ANTHROPIC_CUT, 1, "anthropic.earlier-thinking",
    ),
    ("openai_responses", False): Case(
        "openai.responses", False, RESPONSES_REQUEST,
        _responses_response([REASONING_2, {"type": "message", "id": "msg_2", "role": "assistant",
                             "status": "completed", "content": [{"type": "output_text",
                             "text": "A2", "annotations": []}]}]),
        "", 0, "openai.responses.reasoning-with-its-item",
    ),
    ("openai_responses", True): Case(
        "openai.responses", True, RESPONSES_REQUEST,
        _responses_response([REASONING_2, {"type": "function_call", "id": "fc_1",
                             "call_id": "call_1", "name": "get_order",
                             "arguments": "{\"order_id\":\"ORD-1\"}", "status": "completed"}]),
        "", 0, "openai.responses.reasoning-with-its-item",
    ),
    ("openai_chat", False): Case(
        "openai.chat", False, CHAT_REQUEST,
        _chat_response({"role": "assistant", "content": "A2",
                        "reasoning_content": REASONING + "-2"}, "stop"),
        CHAT_CUT, 2, "deepseek.thinking-tool-turns",
    ),
    ("openai_chat", True): Case(
        "openai.chat", True, CHAT_REQUEST,
        _chat_response({"role": "assistant", "content": None,
                        "reasoning_content": REASONING + "-2",
                        "tool_calls": [{"id": "call_1", "type": "function", "function": {
                            "name": "get_order", "arguments": "{\"order_id\":\"ORD-1\"}"}}]},
                       "tool_calls"),
        CHAT_CUT, 1, "deepseek.thinking-tool-turns",
    ),
    ("ai_sdk", False): Case(
        "ai-sdk.ui", False, AI_REQUEST,
        _j({"id": "m4", "role": "assistant", "parts": [{"type": "step-start"}, AI_REASONING_2,
            {"type": "text", "text": "A2", "state": "done"}]}),
        AI_CUT, 2, "ai-sdk.anthropic-earlier-thinking",
    ),
    ("ai_sdk", True): Case(
        "ai-sdk.ui", True, AI_REQUEST,
        _j({"id": "m4", "role": "assistant", "parts": [{"type": "step-start"}, AI_REASONING_2,
            {"type": "tool-get_order", "toolCallId": "call_1", "state": "input-available",
             "input": {"order_id": "ORD-1"}}]}),
        AI_CUT, 1, "ai-sdk.anthropic-earlier-thinking",
    ),
}  # fmt: skip
