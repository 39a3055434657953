"""The profile of ``openai.chat``: what the console knows of the protocol, as data
(``formats/profile.py`` says what each part is). Chat Completions is spoken by many servers
besides OpenAI's: the reasoning fields of DeepSeek (``reasoning_content``) and OpenRouter
(``reasoning``), and the ``<think>`` convention of servers without a reasoning parser, are
theirs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...blocks import BlockClass
from ..profile import (
    Capture,
    Citation,
    Continuation,
    Cuts,
    Finish,
    FinishRule,
    Inline,
    Probe,
    Profile,
    ReasoningUsage,
    UsageProfile,
)

FORMAT = "openai.chat"

# Members of a message that carry the model's reasoning, by provider.
REASONING_KEYS = ("reasoning_content", "reasoning")

# DeepSeek-R1, QwQ and many vLLM / Ollama deployments without a reasoning parser write the
# deliberation into ``content``: ``<think>...</think>`` then the answer.
INLINE = Inline(block_types=frozenset({"content"}))

BLOCK_TYPES = {
    BlockClass.VISIBLE: frozenset({"content", "refusal"}),
    BlockClass.AUDIT: frozenset({"tool_calls", "tool"}),
    BlockClass.NEVER: frozenset({*REASONING_KEYS, INLINE.never_type}),
}

FINISHES = {
    "stop": FinishRule(Finish.FINISHED, "finished its answer"),
    "length": FinishRule(Finish.TRUNCATED, "was cut off by the output token limit"),
    "tool_calls": FinishRule(Finish.TOOL_CALL, "stopped to call a tool"),
    "function_call": FinishRule(Finish.TOOL_CALL, "stopped to call a tool"),
    "content_filter": FinishRule(Finish.REFUSED, "was stopped by the content filter"),
    # DeepSeek: the request was interrupted for lack of resources on its side.
    "insufficient_system_resource": FinishRule(
        Finish.OTHER, "was interrupted: the provider ran short of resources"
    ),
}


def _continuation(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    """``reasoning_content`` of assistant messages before the open tool loop is left out."""

    def genuine_user(v: Any) -> bool:
        return isinstance(v, dict) and v.get("role") == "user"

    last_user = max((i for i, v in enumerate(values) if genuine_user(v)), default=-1)
    turn = range(last_user + 1, len(values))
    assistants = [
        i for i in turn if isinstance(values[i], dict) and values[i].get("role") == "assistant"
    ]
    open_loop = bool(assistants) and bool(values[assistants[-1]].get("tool_calls"))
    protected = set(turn) if open_loop else set()
    cuts: Cuts = {
        i: {"reasoning_content"}
        for i, v in enumerate(values)
        if i not in protected
        and isinstance(v, dict)
        and v.get("role") == "assistant"
        and "reasoning_content" in v
    }
    return open_loop, protected, cuts


CONTINUATION = Continuation(
    decide=_continuation,
    member="",
    citations=(
        Citation(
            url="https://api-docs.deepseek.com/guides/reasoning_model",
            quote="the CoT from previous rounds is not concatenated into the context",
            checked="2025-11-20",
        ),
        Citation(
            url="https://api-docs.deepseek.com/guides/thinking_mode",
            quote="in thinking mode with tool calls, reasoning_content must be sent back within "
            "the tool loop",
            checked="2025-11-20",
        ),
    ),
)


def _probes(
    model: str, budget: int, question: str
) -> list[tuple[str, int, int | None, dict[str, Any]]]:
    def body(n: int) -> dict[str, Any]:
        return {
            "model": model,
            "max_completion_tokens": n,
            "reasoning_effort": "high",
            "messages": [{"role": "user", "content": question}],
        }

    return [("at_budget", 16, None, body(16)), ("no_room", 256, None, body(256))]


PROFILE = Profile(
    format=FORMAT,
    label="Chat Completions",
    block_types=BLOCK_TYPES,
    finishes=FINISHES,
    usage=UsageProfile(
        reports=frozenset(
            {"input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens"}
        ),
        reasoning=ReasoningUsage.SPLIT,
        input_includes_cache=True,
    ),
    continuation=CONTINUATION,
    tool_states={},
    capture=Capture(paths=("/chat/completions",)),
    inline=INLINE,
    probe=Probe(provider="openai", path="/v1/chat/completions", bodies=_probes),
)
