"""Provider strings in plain words, for the people reading a conversation.

Each table maps what a provider (or the AI SDK) sends to what an agent reads. A value missing
from a table is shown as received, with its raw form beside it: never guessed. To add one, add a
row to the table of its kind (the raw value exactly as the format stores it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..projection.redaction import redact

# Exchange.stop_reason, every format: Anthropic stop_reason, OpenAI Responses status (or the
# incomplete reason), Chat Completions finish_reason, AI SDK finishReason.
FINISH_REASONS: dict[str, str] = {
    # Anthropic
    "end_turn": "finished its answer",
    "tool_use": "stopped to call a tool",
    "max_tokens": "was cut off by the output token limit",
    "stop_sequence": "stopped at a stop sequence",
    "pause_turn": "paused a long turn (the chat backend resumes it)",
    "refusal": "refused to answer",
    "model_context_window_exceeded": "ran out of context window",
    # OpenAI Responses (status, or the reason of an incomplete response)
    "completed": "finished",
    "incomplete": "did not complete",
    "failed": "failed",
    "cancelled": "was cancelled",
    "in_progress": "was still running",
    "max_output_tokens": "was cut off by the output token limit",
    "content_filter": "was stopped by the content filter",
    # Chat Completions
    "stop": "finished its answer",
    "length": "was cut off by the output token limit",
    "tool_calls": "stopped to call a tool",
    "function_call": "stopped to call a tool",
    # AI SDK
    "tool-calls": "stopped to call a tool",
    "content-filter": "was stopped by the content filter",
    "error": "ended with an error",
    "other": "stopped for another reason",
}

# A tool's state or status: AI SDK tool part states, OpenAI item statuses.
TOOL_STATES: dict[str, tuple[str, str]] = {
    # (words, tone: ok | error | pending)
    "input-streaming": ("input still arriving", "pending"),
    "input-available": ("called, no result yet", "pending"),
    "approval-requested": ("waiting for the customer's approval", "pending"),
    "approval-responded": ("approval answered, no result yet", "pending"),
    "output-available": ("succeeded", "ok"),
    "output-error": ("failed", "error"),
    "output-denied": ("denied by the customer", "error"),
    "completed": ("completed", "ok"),
    "in_progress": ("still running", "pending"),
    "searching": ("searching", "pending"),
    "interpreting": ("running", "pending"),
    "generating": ("generating", "pending"),
    "incomplete": ("did not complete", "error"),
    "failed": ("failed", "error"),
}

# Server tools (run by the provider, not by the chat backend), by what they did.
SERVER_TOOLS: dict[str, str] = {
    "web_search": "Searched the web",
    "web_search_preview": "Searched the web",
    "web_fetch": "Fetched a web page",
    "code_execution": "Ran code",
    "bash_code_execution": "Ran a command in the code sandbox",
    "text_editor_code_execution": "Edited a file in the code sandbox",
    "code_interpreter": "Ran code",
    "file_search": "Searched files",
    "image_generation": "Generated an image",
    "computer": "Used a computer",
    "computer_use": "Used a computer",
    "local_shell": "Ran a shell command",
    "shell": "Ran a shell command",
    "tool_search_tool_regex": "Searched its tools",
    "tool_search_tool_bm25": "Searched its tools",
}

# Anthropic result block types that belong to a server tool (``<tool>_tool_result``).
_CLIENT_RESULTS = frozenset({"tool_result", "mcp_tool_result", "function_call_output", "tool"})


def finish_words(reason: str) -> str:
    if not reason:
        return "no finish reason reported"
    return FINISH_REASONS.get(reason, f"finish reason “{reason}”")


def is_result(provider_type: str) -> bool:
    """Whether a tool block is a result (its call is another block)."""
    return provider_type in _CLIENT_RESULTS or provider_type.endswith(
        ("_tool_result", "_call_output")
    )


def server_tool(provider_type: str, tool_name: str) -> str | None:
    """What a server tool did, in words; None for a tool the chat backend ran."""
    if provider_type.startswith("mcp_"):
        return f"Called {tool_name or 'a tool'} on an MCP server"
    server = provider_type == "server_tool_use" or (
        provider_type.endswith("_tool_result") and provider_type not in _CLIENT_RESULTS
    )
    # OpenAI Responses: every *_call item but function and custom tool calls runs at OpenAI.
    server = server or (
        provider_type.endswith("_call")
        and provider_type not in ("function_call", "custom_tool_call")
    )
    if not server:
        return None
    name = tool_name or provider_type.removesuffix("_call").removesuffix("_tool_result")
    return SERVER_TOOLS.get(name, f"Used the provider's {name.replace('_', ' ')} tool")


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def key_words(key: str) -> str:
    """``order_id``, ``orderId`` → "order id"."""
    return _CAMEL.sub(" ", key).replace("_", " ").replace("-", " ").lower().strip()


def field_label(path: str) -> str:
    """A projected field's path as a label: ``$.status`` → "status", ``$.items[*].sku`` →
    "items > sku" (with a single right-pointing angle quote), ``$`` → "value"."""
    parts = [p for p in path.removeprefix("$").replace("[*]", "").split(".") if p]
    return " \u203a ".join(key_words(p) for p in parts) or "value"


EVENT_SENTENCES: dict[str, str] = {
    "user_replied": "The customer replied.",
    "rated": "The customer rated the conversation",
    "escalated": "Escalated to a person",
    "abandoned": "The customer left without a resolution",
    "resolved": "Marked resolved",
}


def value_words(value: Any, *, limit: int = 300) -> str:
    """A JSON value from the chat backend as short readable text, redacted (event values are
    the backend's free-form JSON and may carry customer text): ``{"reason": "tool failed"}`` →
    "reason: tool failed"."""
    if value is None:
        return ""
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (int, float, str)):
        text = str(value)
    elif isinstance(value, Mapping):
        text = "; ".join(
            f"{key_words(str(k))}: {value_words(v, limit=limit)}"
            for k, v in value.items()
            if v not in (None, "", [], {})
        )
    elif isinstance(value, list):
        text = ", ".join(value_words(v, limit=limit) for v in value)
    else:
        text = str(value)
    text = redact(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_LEADS = ("reason", "score", "rating", "stars", "value")


def event_sentence(kind: str, value: Any) -> str:
    """An event in a sentence: ``escalated`` with ``{"reason": "tool failed", "queue": "tier
    2"}`` → "Escalated to a person: tool failed (queue: tier 2).". The reason (or, for a rating,
    the score) leads; other keys follow in parentheses; a plain value is the lead."""
    base = EVENT_SENTENCES.get(kind, f"Event “{kind}”").rstrip(".")
    lead, rest = "", value
    if isinstance(value, Mapping):
        key = next((k for k in _LEADS if value.get(k) not in (None, "")), None)
        if key is not None:
            lead = value_words(value[key])
            rest = {k: v for k, v in value.items() if k != key}
    elif value is not None:
        lead, rest = value_words(value), None
    sentence = f"{base}: {lead}" if lead else base
    if detail := value_words(rest) if rest else "":
        sentence += f" ({detail})"
    return sentence + "."
