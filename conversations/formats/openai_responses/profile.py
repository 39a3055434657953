"""The profile of ``openai.responses``: what the console knows of the protocol, as data
(``formats/profile.py`` says what each part is)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...blocks import BlockClass
from ..profile import (
    ANY,
    ANY_VALUE,
    WHOLE,
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
    SummaryFetch,
    Transport,
    Unseen,
    UsageProfile,
    keep_all,
    mcp_words,
    server_tool_words,
    type_of,
)
from ..traces import Trace, Withheld

FORMAT = "openai.responses"

BLOCK_TYPES = {
    BlockClass.VISIBLE: frozenset({"message", "output_text", "refusal", "input_text"}),
    BlockClass.AUDIT: frozenset(
        {"function_call", "function_call_output", "*_call", "*_call_output"}
    ),
    BlockClass.NEVER: frozenset({"reasoning"}),
}

# The stored stop reason is the response's ``status``, or for an incomplete response the
# reason in ``incomplete_details`` (``max_output_tokens``, ``content_filter``).
FINISHES = {
    "completed": FinishRule(Finish.FINISHED, "finished"),
    "max_output_tokens": FinishRule(Finish.TRUNCATED, "was cut off by the output token limit"),
    "content_filter": FinishRule(Finish.REFUSED, "was stopped by the content filter"),
    "incomplete": FinishRule(Finish.OTHER, "did not complete"),
    "failed": FinishRule(Finish.OTHER, "failed"),
    "cancelled": FinishRule(Finish.OTHER, "was cancelled"),
    "in_progress": FinishRule(Finish.OTHER, "was still running"),
    "queued": FinishRule(Finish.OTHER, "was still queued"),
}

# Item statuses of tool calls, in words.
TOOL_STATES = {
    "completed": ("completed", "ok"),
    "in_progress": ("still running", "pending"),
    "searching": ("searching", "pending"),
    "interpreting": ("running", "pending"),
    "generating": ("generating", "pending"),
    "incomplete": ("did not complete", "error"),
    "failed": ("failed", "error"),
}

# Items the client answers with a matching *_output.
CLIENT_CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "mcp_approval_request",
    }
)


def _continuation(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    """Reasoning items before the last user message are left out (or all of them when no tool
    loop is open after it); the open loop's items are kept."""

    def genuine_user(v: Any) -> bool:
        if isinstance(v, str):
            return True  # a string input is the user's message
        return isinstance(v, dict) and v.get("role") == "user" and type_of(v) in ("", "message")

    last_user = max((i for i, v in enumerate(values) if genuine_user(v)), default=-1)
    turn = list(range(last_user + 1, len(values)))
    calls = [i for i in turn if type_of(values[i]) in CLIENT_CALLS]
    answered = calls and any(
        type_of(values[i]) == "message" and values[i].get("role") == "assistant"
        for i in turn
        if i > calls[-1]
    )
    open_loop = bool(calls) and not answered
    protected = set(turn) if open_loop else set()
    cuts: Cuts = {
        i: {WHOLE} for i, v in enumerate(values) if i not in protected and type_of(v) == "reasoning"
    }
    return open_loop, protected, cuts


CONTINUATION = Continuation(
    rules=(
        Rule(
            name="openai.responses.reasoning-with-its-item",
            models=("*",),
            regime=ANY,
            # A reasoning item is never cut while the item it preceded (function_call, message)
            # is kept; no other item is ever cut, so nothing is left out.
            decide=keep_all(_continuation),
            says="nothing is left out: a reasoning item goes back with the item it preceded "
            "(function_call, message), which is always kept",
            citation=Citation(
                url="https://github.com/cline/cline/issues/12242",
                quote="Item 'fc_…' of type 'function_call' was provided without its required "
                "'reasoning' item: 'rs_…'. (the Responses API's 400 answer to gpt-5.5, "
                "quoted in the report)",
                checked="2026-12-02",
            ),
        ),
    ),
    member="",
)


# What the model never sees of a Responses item (DESIGN section 20): what only identifies the
# item or says how its generation went (the SDKs and frameworks such as pydantic-ai drop or keep
# them when they send items back), and empty lists.
_ITEM = Citation(
    url="https://docs.rs/crate/openai-client-base/latest/source/docs/ReasoningItem.md",
    quote="id: The unique identifier of the reasoning content. ... status: The status of the "
    "item. One of `in_progress`, `completed`, or `incomplete`. Populated when items are "
    "returned via API. [optional] (the same words on every output item: OutputMessage, "
    "function calls)",
    checked="2026-12-04",
)
UNSEEN = (
    Unseen(("id",), ANY_VALUE, "an item's id: it names the item", _ITEM),
    Unseen(("status",), ANY_VALUE, "an item's status: how its generation went", _ITEM),
    Unseen(
        ("content",),
        [],
        "a reasoning item's empty content list (no reasoning text)",
        Citation(
            url="https://docs.rs/crate/openai-client-base/latest/source/docs/ReasoningItem.md",
            quote="content | Option<Vec<models::ReasoningTextContent>> | Reasoning text "
            "content. | [optional]",
            checked="2026-12-04",
        ),
        of_type="reasoning",
    ),
    Unseen(
        ("type",),
        "message",
        'a message item\'s type "message" (the type of an item with a role)',
        Citation(
            url="https://v03.api.js.langchain.com/interfaces/_langchain_openai.OpenAIClient."
            "Responses.ResponseInputMessageItem.html",
            quote='type?: "message" The type of the message input. Always set to message.',
            checked="2026-12-04",
        ),
    ),
    Unseen(
        ("encrypted_content",),
        None,
        "a reasoning item's encrypted_content: null (none was asked for)",
        Citation(
            url="https://docs.rs/crate/openai-client-base/latest/source/docs/ReasoningItem.md",
            quote="encrypted_content | Option<String> | The encrypted content of the reasoning "
            "item - populated when a response is generated with `reasoning.encrypted_content` "
            "in the `include` parameter. | [optional]",
            checked="2026-12-04",
        ),
        of_type="reasoning",
    ),
    Unseen(
        ("action", "sources"),
        None,
        "a web search's sources: null (none were asked for)",
        Citation(
            url="https://www.rubydoc.info/gems/openai/OpenAI/Models/Responses/"
            "ResponseFunctionWebSearch/Action/Search/Source",
            quote="#initialize(query:, sources: nil, type: :search) (the official SDK's web "
            "search action: sources default to nil, which is not sent)",
            checked="2026-12-04",
        ),
        of_type="search",  # the action's own type
    ),
    Unseen(
        ("content", "*", "logprobs"),
        [],
        "an output_text part's empty logprobs list",
        Citation(
            url="https://openrouter.ai/docs/client-sdks/python/components/responseoutputtext",
            quote="logprobs | List[components.Logprob] | :heavy_minus_sign: (optional in an "
            "output_text part sent back: the log probabilities of what was generated)",
            checked="2026-12-04",
        ),
    ),
    Unseen(
        ("content", "*", "annotations"),
        [],
        "an output_text part's empty annotations list: no citation to carry",
        Citation(
            url="https://openrouter.ai/docs/client-sdks/python/components/responseoutputtext",
            quote="annotations | List[components.OpenAIResponsesAnnotation] | :heavy_minus_sign: "
            "(optional in an output_text part sent back)",
            checked="2026-12-02",
        ),
    ),
)


def _probes(
    model: str, budget: int, question: str
) -> list[tuple[str, int, int | None, dict[str, Any]]]:
    def body(n: int) -> dict[str, Any]:
        return {
            "model": model,
            "max_output_tokens": n,
            "reasoning": {"effort": "high"},
            "input": question,
            "store": False,
        }

    # No budget to size against: a limit below what high effort reasons for, and one that
    # leaves the answer little room.
    return [("at_budget", 16, None, body(16)), ("no_room", 256, None, body(256))]


def _server_tool(block_type: str, tool_name: str) -> str | None:
    """What a server item did: every ``*_call`` item but function and custom tool calls runs
    at OpenAI (``web_search_call``); ``mcp_*`` items call an MCP server."""
    if block_type.startswith("mcp_"):
        return mcp_words(tool_name)
    if block_type.endswith("_call") and block_type not in ("function_call", "custom_tool_call"):
        return server_tool_words(tool_name or block_type.removesuffix("_call"))
    return None


def _summary_wanted(traces: Sequence[Trace], reasoning_tokens: int | None) -> bool:
    """A stored exchange whose reasoning has no summary at all: an item that came without one,
    or reasoning tokens billed and no reasoning item kept."""
    if any(t.text for t in traces):
        return False
    return any(t.withheld is Withheld.MISSING for t in traces) or bool(reasoning_tokens)


def _output_items(body: Any) -> list[Any]:
    output = body.get("output") if isinstance(body, dict) else None
    return list(output) if isinstance(output, list) else []


TRANSPORT = Transport(
    base_url_setting="OPENAI_BASE_URL",
    base_url="https://api.openai.com",
    key_setting="OPENAI_API_KEY",
    headers=lambda key: {"Authorization": f"Bearer {key}"},
)

PROFILE = Profile(
    format=FORMAT,
    result_types=frozenset({"function_call_output", "*_call_output"}),
    server_tool=_server_tool,
    transport=TRANSPORT,
    # GET /v1/responses/{id}: a response stored by OpenAI (store: true) with its summaries.
    summary=SummaryFetch(
        path="/v1/responses/{id}",
        id_pattern=r"[A-Za-z0-9_-]{1,200}",
        wanted=_summary_wanted,
        items=_output_items,
    ),
    label="OpenAI Responses",
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
    tool_states=TOOL_STATES,
    capture=Capture(paths=("/responses",)),
    probe=Probe(path="/v1/responses", bodies=_probes),
    unseen=UNSEEN,
    shorthand=(
        Shorthand(
            "content",
            frozenset({"output_text", "input_text"}),
            "a message's text as a string or as one text part",
            Citation(
                url="https://v03.api.js.langchain.com/interfaces/_langchain_openai.OpenAIClient."
                "Responses.EasyInputMessage.html",
                quote="content: string | ResponseInputMessageContentList; ... Text, image, or "
                "audio input to the model, used to generate a response. Can also contain "
                "previous assistant responses.",
                checked="2026-12-04",
            ),
        ),
    ),
    prefix_settings=("instructions", "prompt", "tools"),
)
