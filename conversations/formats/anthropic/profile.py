"""The profile of ``anthropic.messages``: what the console knows of the protocol, as data
(``formats/profile.py`` says what each part is)."""

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
    Probe,
    Profile,
    ReasoningUsage,
    UsageProfile,
    items_of,
    type_of,
)

FORMAT = "anthropic.messages"

BLOCK_TYPES = {
    BlockClass.VISIBLE: frozenset({"text"}),
    BlockClass.AUDIT: frozenset(
        {
            "tool_use",
            "tool_result",
            "server_tool_use",
            "*_tool_result",
            "mcp_tool_use",
            "mcp_tool_result",
        }
    ),
    BlockClass.NEVER: frozenset({"thinking", "redacted_thinking"}),
}

# Every stop_reason of the Messages API (docs: "Handling stop reasons").
FINISHES = {
    "end_turn": FinishRule(Finish.FINISHED, "finished its answer"),
    "stop_sequence": FinishRule(Finish.FINISHED, "stopped at a stop sequence"),
    "pause_turn": FinishRule(Finish.FINISHED, "paused a long turn (the chat backend resumes it)"),
    "tool_use": FinishRule(Finish.TOOL_CALL, "stopped to call a tool"),
    "max_tokens": FinishRule(Finish.TRUNCATED, "was cut off by the output token limit"),
    "model_context_window_exceeded": FinishRule(Finish.TRUNCATED, "ran out of context window"),
    "refusal": FinishRule(Finish.REFUSED, "refused to answer"),
}


def _continuation(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    """Thinking of assistant turns before the open tool loop is left out; the open loop's turn
    is kept whole."""

    def genuine_user(v: Any) -> bool:
        if not isinstance(v, dict) or v.get("role") != "user":
            return False
        content = v.get("content")
        return not isinstance(content, list) or any(type_of(b) != "tool_result" for b in content)

    last_user = max((i for i, v in enumerate(values) if genuine_user(v)), default=-1)
    turn = range(last_user + 1, len(values))
    assistants = [
        i for i in turn if isinstance(values[i], dict) and values[i].get("role") == "assistant"
    ]
    open_loop = bool(assistants) and any(
        type_of(b) == "tool_use" for b in items_of(values[assistants[-1]], "content")
    )
    protected = set(turn) if open_loop else set()
    cuts: Cuts = {}
    for i, v in enumerate(values):
        if i in protected or not isinstance(v, dict) or v.get("role") != "assistant":
            continue
        blocks = items_of(v, "content")
        drop: set[int | str] = {
            n for n, b in enumerate(blocks) if type_of(b) in BLOCK_TYPES[BlockClass.NEVER]
        }
        if drop and len(drop) < len(blocks):  # never an empty assistant message
            cuts[i] = drop
    return open_loop, protected, cuts


CONTINUATION = Continuation(
    decide=_continuation,
    member="content",
    citations=(
        Citation(
            url="https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking",
            quote="thinking blocks from previous assistant turns are stripped by the API and do "
            "not count as context; during tool use the thinking blocks of the last assistant "
            "message must be passed back complete and unmodified",
            checked="2025-11-20",
        ),
    ),
)


def _probes(
    model: str, budget: int, question: str
) -> list[tuple[str, int, int | None, dict[str, Any]]]:
    def body(max_tokens: int) -> dict[str, Any]:
        return {
            "model": model,
            "max_tokens": max_tokens,
            "thinking": {"type": "enabled", "budget_tokens": budget},
            "messages": [{"role": "user", "content": question}],
        }

    return [
        ("at_budget", budget, budget, body(budget)),
        ("no_room", budget + 1, budget, body(budget + 1)),
    ]


PROFILE = Profile(
    format=FORMAT,
    label="Anthropic Messages",
    block_types=BLOCK_TYPES,
    finishes=FINISHES,
    usage=UsageProfile(
        reports=frozenset(
            {"input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"}
        ),
        # Thinking is billed inside output_tokens; output_tokens_details.thinking_tokens says
        # how much where the API sends it (newer API versions), else it is estimated.
        reasoning=ReasoningUsage.INSIDE_OUTPUT,
        input_includes_cache=False,
    ),
    continuation=CONTINUATION,
    tool_states={},
    capture=Capture(paths=("/v1/messages",)),
    probe=Probe(provider="anthropic", path="/v1/messages", bodies=_probes),
)
