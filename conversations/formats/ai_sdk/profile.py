"""The profile of ``ai-sdk.ui``: what the console knows of the AI SDK UI protocol, as data
(``formats/profile.py`` says what each part is). The provider behind the AI SDK is the
backend's business: the UI stream says nothing of it, so rules that depend on the provider
(continuation) are the ones its reasoning parts are converted for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...blocks import BlockClass
from ..anthropic import profile as anthropic
from ..profile import (
    ANY,
    ANY_VALUE,
    PRESERVED,
    Capture,
    Citation,
    Continuation,
    Cuts,
    Finish,
    FinishRule,
    Inline,
    Profile,
    ReasoningUsage,
    Rule,
    Unseen,
    UsageProfile,
    items_of,
    keep_all,
    reasoning_cuts,
    type_of,
)

FORMAT = "ai-sdk.ui"

# A text part of a provider without a reasoning parser (and a backend without the AI SDK's
# extractReasoningMiddleware) opens with the model's <think>...</think>.
INLINE = Inline(block_types=frozenset({"text"}))

BLOCK_TYPES = {
    BlockClass.VISIBLE: frozenset({"text"}),
    BlockClass.AUDIT: frozenset({"tool-*", "dynamic-tool"}),
    BlockClass.NEVER: frozenset({"reasoning", INLINE.never_type}),
}

# The AI SDK's FinishReason (a ``finish`` chunk's finishReason).
FINISHES = {
    "stop": FinishRule(Finish.FINISHED, "finished its answer"),
    "length": FinishRule(Finish.TRUNCATED, "was cut off by the output token limit"),
    "content-filter": FinishRule(Finish.REFUSED, "was stopped by the content filter"),
    "tool-calls": FinishRule(Finish.TOOL_CALL, "stopped to call a tool"),
    "error": FinishRule(Finish.OTHER, "ended with an error"),
    "other": FinishRule(Finish.OTHER, "stopped for another reason"),
    "unknown": FinishRule(Finish.OTHER, "stopped for a reason the provider did not give"),
}

# Tool part states.
TOOL_STATES = {
    "input-streaming": ("input still arriving", "pending"),
    "input-available": ("called, no result yet", "pending"),
    "approval-requested": ("waiting for the customer's approval", "pending"),
    "approval-responded": ("approval answered, no result yet", "pending"),
    "output-available": ("succeeded", "ok"),
    "output-error": ("failed", "error"),
    "output-denied": ("denied by the customer", "error"),
}


def is_tool_part(part: Any) -> bool:
    kind = type_of(part)
    return kind.startswith("tool-") or kind == "dynamic-tool"


def _continuation(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    """``reasoning`` parts of assistant messages before the last one are left out, and of the
    last one too when it does not end in a tool part (its step is complete)."""
    last = len(values) - 1
    open_loop = False
    if last >= 0 and isinstance(values[last], dict) and values[last].get("role") == "assistant":
        parts = [p for p in items_of(values[last], "parts") if type_of(p) != "step-start"]
        open_loop = bool(parts) and is_tool_part(parts[-1])
    protected = {last} if open_loop else set()
    cuts = reasoning_cuts(values, protected, member="parts", kinds=frozenset({"reasoning"}))
    return open_loop, protected, cuts


CONTINUATION = Continuation(
    rules=(
        # The provider underneath decides: its rule, applied to the UI message's parts.
        Rule(
            name="ai-sdk.anthropic-preserved-thinking",
            models=anthropic.PRESERVED_MODELS,
            regime=PRESERVED,
            decide=keep_all(_continuation),
            says="nothing is left out (the Claude model underneath checks every thinking "
            "block's prefix)",
            citation=anthropic.PREFIX_CHECK,
        ),
        Rule(
            name="ai-sdk.anthropic-earlier-thinking",
            models=("*claude-*",),
            regime=ANY,
            decide=_continuation,
            says="reasoning parts of earlier steps are left out; the open tool step is kept",
            citation=anthropic.EARLIER_THINKING,
        ),
    ),
    member="parts",
)


# What the model never sees of a UIMessage (DESIGN section 20): the browser's own state. The
# route turns UIMessages into the model's messages (``convertToModelMessages``: role and parts),
# so the message's id (the chat makes one up when the stream sent none), its metadata and a text
# or reasoning part's streaming state never reach the provider.
_UI_STATE = Citation(
    url="https://ai-sdk.dev/docs/reference/ai-sdk-core/ui-message",
    quote="In contrast to `ModelMessage`, which represents the state or context passed to the "
    "model, `UIMessage` contains the full application state needed for UI rendering and "
    "client-side functionality.",
    checked="2026-12-04",
)
UNSEEN = (
    Unseen(("id",), ANY_VALUE, "a UIMessage's id (the chat's own)", _UI_STATE),
    Unseen(("metadata",), ANY_VALUE, "a UIMessage's metadata (the application's)", _UI_STATE),
    Unseen(
        ("parts", "*", "state"),
        ANY_VALUE,
        "a text part's streaming state",
        _UI_STATE,
        of_type="text",
    ),
    Unseen(
        ("parts", "*", "state"),
        ANY_VALUE,
        "a reasoning part's streaming state",
        _UI_STATE,
        of_type="reasoning",
    ),
)


PROFILE = Profile(
    format=FORMAT,
    label="AI SDK UI",
    # A tool part is the call and its result at once; its state says whether the result came.
    whole_tool_types=frozenset({"tool-*", "dynamic-tool"}),
    block_types=BLOCK_TYPES,
    finishes=FINISHES,
    usage=UsageProfile(
        # Only what the backend put under metadata.usage / metadata.totalUsage.
        reports=frozenset(),
        reasoning=ReasoningUsage.NOT_REPORTED,
        input_includes_cache=True,
    ),
    continuation=CONTINUATION,
    tool_states=TOOL_STATES,
    # Captured where the backend answers the browser (clients/js), not at a provider endpoint.
    capture=Capture(paths=(), ui_stream=True),
    inline=INLINE,
    unseen=UNSEEN,
)
