"""The profile of ``anthropic.messages``: what the console knows of the protocol, as data
(``formats/profile.py`` says what each part is)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...blocks import BlockClass
from ..profile import (
    ANY,
    ANY_VALUE,
    LEGACY,
    PRESERVED,
    Capture,
    Citation,
    Continuation,
    Cuts,
    Finish,
    FinishRule,
    Probe,
    Profile,
    ReasoningUsage,
    Rule,
    Shorthand,
    Transport,
    Unseen,
    UsageProfile,
    earlier_thinking_cuts,
    items_of,
    keep_all,
    mcp_words,
    server_tool_words,
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
    return earlier_thinking_cuts(
        values,
        kind_of=type_of,
        result="tool_result",
        call="tool_use",
        never=frozenset(BLOCK_TYPES[BlockClass.NEVER]),
    )


# Claude models with preserved thinking (a prefix check on every thinking block sent back):
# Fable/Mythos 5.1 and later, Opus/Sonnet/Haiku 5.5 and later (the docs' supported models),
# under any provider prefix (Bedrock ``anthropic.claude-...``, Vertex ``claude-...@date``).
PRESERVED_MODELS = (
    "*claude-fable-5-[1-9]*",
    "*claude-mythos-5-[1-9]*",
    "*claude-fable-[6-9]*",
    "*claude-mythos-[6-9]*",
    "*claude-opus-5-[5-9]*",
    "*claude-sonnet-5-[5-9]*",
    "*claude-haiku-5-[5-9]*",
    "*claude-opus-[6-9]*",
    "*claude-sonnet-[6-9]*",
    "*claude-haiku-[6-9]*",
)
PREFIX_CHECK = Citation(
    url="https://platform.claude.com/docs/en/build-with-claude/preserved-thinking/prefix-checks",
    quote="A prefix check fails if `system`, `tools`, or an earlier message changed after Claude "
    "produced a block. It also fails if a thinking block between others was left out or moved.",
    checked="2026-12-02",
)
ACCOUNT_REGIME = Citation(
    url="https://platform.claude.com/docs/en/build-with-claude/preserved-thinking",
    quote="The model check applies to every account. The API enforces the prefix check by "
    "default for accounts created on or after August 31, 2026, 00:00 UTC.",
    checked="2026-12-02",
)
EARLIER_THINKING = Citation(
    url="https://platform.claude.com/docs/en/build-with-claude/context-windows",
    quote="The API automatically excludes thinking blocks from previous turns when you pass them "
    "back as part of the conversation history.",
    checked="2026-12-02",
)

CONTINUATION = Continuation(
    rules=(
        Rule(
            name="anthropic.preserved-thinking",
            models=PRESERVED_MODELS,
            regime=PRESERVED,
            decide=keep_all(_continuation),
            says="nothing is left out: every thinking block goes back unmodified, in place",
            citation=PREFIX_CHECK,
        ),
        Rule(
            name="anthropic.preserved-thinking-legacy-account",
            models=PRESERVED_MODELS,
            regime=LEGACY,
            decide=_continuation,
            says="an account created before 2026-08-31 (no prefix check unless a request asks "
            "for one): earlier turns' thinking is left out outside the open tool loop",
            citation=ACCOUNT_REGIME,
        ),
        Rule(
            name="anthropic.earlier-thinking",
            models=("*claude-*",),
            regime=ANY,
            decide=_continuation,
            says="earlier turns' thinking is left out; the open tool loop's turn is kept whole",
            citation=EARLIER_THINKING,
        ),
    ),
    member="content",
)


_CACHE_CONTROL = Citation(
    url="https://www.rubydoc.info/gems/anthropic/Anthropic/Models/TextBlockParam",
    quote="#cache_control ⇒ Anthropic::Models::CacheControlEphemeral? Create a cache control "
    "breakpoint at this content block. (every request block type has it: a mark where the "
    "cached prefix ends, not content)",
    checked="2026-12-04",
)
_CITATIONS = Citation(
    url="https://www.rubydoc.info/gems/anthropic/Anthropic/Models/TextBlockParam",
    quote="#initialize(text:, cache_control: nil, citations: nil, type: :text) (the "
    "official SDK's request text block: citations default to nil, which is not sent)",
    checked="2026-12-04",
)
UNSEEN = (
    # A cache breakpoint moves from turn to turn (frameworks mark the latest message): where it
    # sits changes what is cached, never what the model reads.
    Unseen(
        ("content", "*", "cache_control"), ANY_VALUE, "a block's cache breakpoint", _CACHE_CONTROL
    ),
    Unseen(
        ("content", "*", "content", "*", "cache_control"),
        ANY_VALUE,
        "a tool result's block's cache breakpoint",
        _CACHE_CONTROL,
    ),
    Unseen(
        ("content", "*", "content", "*", "citations"),
        None,
        "citations: null in a tool result's text block",
        _CITATIONS,
    ),
    Unseen(
        ("content", "*", "content", "content", "citations"),
        None,
        "citations: null in a fetched document (web_fetch_tool_result)",
        _CITATIONS,
    ),
    Unseen(
        path=("content", "*", "citations"),
        value=None,
        why="a text block's citations: null (nothing cited)",
        citation=_CITATIONS,
    ),
    Unseen(
        path=("content", "*", "content", "*", "page_age"),
        value=None,
        why="a web search result's page_age: null (the age is not known)",
        citation=Citation(
            url="https://www.rubydoc.info/gems/anthropic/Anthropic/Models/"
            "WebSearchResultBlockParam",
            quote="#initialize(encrypted_content:, title:, url:, page_age: nil, type: "
            ":web_search_result) ... optional :page_age, String, nil?: true",
            checked="2026-12-04",
        ),
    ),
    Unseen(
        path=("content", "*", "caller"),
        value={"type": "direct"},
        why="a tool_use block's default caller: a block without one is called directly",
        citation=Citation(
            url="https://www.rubydoc.info/gems/anthropic/Anthropic/Models/Beta/BetaToolUseBlockParam",
            quote="#caller_ ⇒ Anthropic::Models::Beta::BetaDirectCaller, ... Tool invocation "
            "directly from the model. (the request block's constructor: caller_: nil)",
            checked="2026-12-02",
        ),
    ),
)


def _split(message: Any) -> tuple[int, int]:
    """Reasoning and other characters of an assistant message: thinking text (a thinking block
    shown empty: its signature's bytes; ``redacted_thinking``: its data's bytes) against text and
    tool input. Thinking is billed in full and shown summarised: an underestimate, labelled."""
    reasoning = other = 0
    for block in items_of(message, "content"):
        kind = type_of(block)
        if kind == "thinking":
            text = block.get("thinking")
            signature = block.get("signature")
            if isinstance(text, str) and text:
                reasoning += len(text)
            elif isinstance(signature, str):
                reasoning += len(signature) * 3 // 4
        elif kind == "redacted_thinking":
            data = block.get("data")
            reasoning += len(data) * 3 // 4 if isinstance(data, str) else 0
        elif kind == "text":
            text = block.get("text")
            other += len(text) if isinstance(text, str) else 0
        elif "input" in block:
            other += len(json.dumps(block["input"], ensure_ascii=False, default=str))
    return reasoning, other


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


# Results the chat backend sends for the tools it ran; every other ``*_tool_result`` is a
# server tool's, run by Anthropic.
CLIENT_RESULTS = frozenset({"tool_result", "mcp_tool_result"})


def _server_tool(block_type: str, tool_name: str) -> str | None:
    """What a server tool did (``server_tool_use`` and its ``<tool>_tool_result``; an MCP
    connector call), or None for a tool the chat backend ran."""
    if block_type.startswith("mcp_"):
        return mcp_words(tool_name)
    if block_type == "server_tool_use" or (
        block_type.endswith("_tool_result") and block_type not in CLIENT_RESULTS
    ):
        return server_tool_words(tool_name or block_type.removesuffix("_tool_result"))
    return None


TRANSPORT = Transport(
    base_url_setting="ANTHROPIC_BASE_URL",
    base_url="https://api.anthropic.com",
    key_setting="ANTHROPIC_API_KEY",
    headers=lambda key: {"x-api-key": key, "anthropic-version": "2023-06-01"},
)

PROFILE = Profile(
    format=FORMAT,
    result_types=frozenset({"tool_result", "*_tool_result", "mcp_tool_result"}),
    server_tool=_server_tool,
    transport=TRANSPORT,
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
        split=_split,
    ),
    continuation=CONTINUATION,
    tool_states={},
    capture=Capture(paths=("/v1/messages",)),
    probe=Probe(path="/v1/messages", bodies=_probes),
    unseen=UNSEEN,
    shorthand=(
        Shorthand(
            "content",
            frozenset({"text"}),
            "a message's text as a string or as one text block",
            Citation(
                url="https://www.rubydoc.info/gems/anthropic/Anthropic/Models/MessageParam",
                quote="#content ⇒ String, Array<Anthropic::Models::TextBlockParam, ...> (a "
                "string stands for one text block)",
                checked="2026-12-04",
            ),
        ),
    ),
    prefix_settings=("system", "tools"),
)
