"""The profile of ``openai.chat``: what the console knows of the protocol, as data
(``formats/profile.py`` says what each part is). Chat Completions is spoken by many servers
besides OpenAI's: the reasoning fields of DeepSeek (``reasoning_content``) and OpenRouter
(``reasoning``), and the ``<think>`` convention of servers without a reasoning parser, are
theirs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...blocks import BlockClass
from ..live import split_inline
from ..profile import (
    ANY,
    ANY_VALUE,
    Capture,
    Citation,
    Continuation,
    Cuts,
    Endpoint,
    EndpointRule,
    Finish,
    FinishRule,
    Inline,
    Probe,
    Profile,
    ReasoningUsage,
    Rule,
    Shorthand,
    Transport,
    Unseen,
    UsageProfile,
)

FORMAT = "openai.chat"

# Members of a message that carry the model's reasoning, by provider.
REASONING_KEYS = ("reasoning_content", "reasoning")

# DeepSeek-R1, QwQ and many vLLM / Ollama deployments without a reasoning parser write the
# deliberation into ``content``: ``<think>...</think>`` then the answer.
INLINE = Inline(block_types=frozenset({"content"}))

# The content part a reasoning model's thoughts come in on Mistral (``{"type": "thinking",
# "thinking": [{"type": "text", "text": ...}]}``: its ThinkChunk).
THINKING_PART = "thinking"

BLOCK_TYPES = {
    BlockClass.VISIBLE: frozenset({"content", "refusal"}),
    BlockClass.AUDIT: frozenset({"tool_calls", "tool"}),
    BlockClass.NEVER: frozenset({*REASONING_KEYS, INLINE.never_type, THINKING_PART}),
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


def _turns(values: Sequence[Any]) -> list[list[int]]:
    """The indices of each turn: a user message and what follows it up to the next one."""
    turns: list[list[int]] = [[]]
    for i, v in enumerate(values):
        if isinstance(v, dict) and v.get("role") == "user" and turns[-1]:
            turns.append([])
        turns[-1].append(i)
    return turns


def _assistant(v: Any) -> bool:
    return isinstance(v, dict) and v.get("role") == "assistant"


def _open_loop(values: Sequence[Any]) -> bool:
    last = _turns(values)[-1]
    assistants = [i for i in last if _assistant(values[i])]
    return bool(assistants) and bool(values[assistants[-1]].get("tool_calls"))


def _thinking_mode(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    """DeepSeek thinking mode: ``reasoning_content`` of every assistant message of a turn that
    called a tool is kept in every later turn; that of a turn that called none is left out."""
    cuts: Cuts = {}
    protected: set[int] = set()
    for turn in _turns(values):
        if any(_assistant(values[i]) and values[i].get("tool_calls") for i in turn):
            protected.update(turn)
            continue
        for i in turn:
            if _assistant(values[i]) and "reasoning_content" in values[i]:
                cuts[i] = {"reasoning_content"}
    return _open_loop(values), protected, cuts


def _no_earlier_reasoning(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    """DeepSeek-R1: no ``reasoning_content`` goes back (the API refuses a message with one)."""
    cuts: Cuts = {
        i: {"reasoning_content"}
        for i, v in enumerate(values)
        if _assistant(v) and "reasoning_content" in v
    }
    return _open_loop(values), set(), cuts


CONTINUATION = Continuation(
    rules=(
        Rule(
            name="deepseek.r1",
            models=("*deepseek-r1*",),
            regime=ANY,
            decide=_no_earlier_reasoning,
            says="every reasoning_content is left out (R1 refuses a history that carries one)",
            citation=Citation(
                url="https://api-docs.deepseek.com/zh-cn/guides/reasoning_model",
                quote="请注意\uff0c如果您在输入的 messages 序列中\uff0c"
                "传入了reasoning_content\uff0c"
                "API 会返回 400 错误。",  # the page's own words (full-width commas)
                checked="2026-12-02",
            ),
        ),
        Rule(
            name="deepseek.thinking-tool-turns",
            models=(
                "*deepseek-v4*",
                "*deepseek-flash*",
                "*deepseek-pro*",
                "*deepseek-v3.2*",
                "deepseek-chat",
                "deepseek-reasoner",
            ),
            regime=ANY,
            decide=_thinking_mode,
            says="reasoning_content of a turn that called a tool goes back in every later "
            "turn; that of a turn without a tool call is left out",
            citation=Citation(
                url="https://api-docs.deepseek.com/guides/thinking_mode",
                quote="Between two user messages, if the model performed a tool call, the "
                "intermediate assistant's reasoning_content must participate in the context "
                "concatenation",
                checked="2026-12-02",
            ),
        ),
    ),
    member="",
)


def thinking_texts(part: dict[str, Any]) -> list[str]:
    """The texts of a Mistral thinking part (its ``thinking`` chunks)."""
    chunks = part.get("thinking")
    return [
        c["text"]
        for c in (chunks if isinstance(chunks, list) else ())
        if isinstance(c, dict) and isinstance(c.get("text"), str)
    ]


def _split(message: Any) -> tuple[int, int]:
    """Reasoning and other characters of a Chat assistant message: ``reasoning_content`` /
    ``reasoning`` and a leading ``<think>`` span, against the answer and the tool arguments (for
    servers that do not report ``reasoning_tokens``)."""
    if not isinstance(message, dict):
        return 0, 0
    reasoning = sum(len(v) for k in REASONING_KEYS if isinstance(v := message.get(k), str))
    content = message.get("content")
    other = 0
    if isinstance(content, str):
        span, visible = split_inline(content, INLINE)
        reasoning += span or 0
        other += len(visible.lstrip()) if span is None else len(visible)
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and part.get("type") == "text":
            other += len(part["text"]) if isinstance(part.get("text"), str) else 0
        elif isinstance(part, dict) and part.get("type") == THINKING_PART:
            reasoning += sum(len(t) for t in thinking_texts(part))
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        other += len(arguments) if isinstance(arguments, str) else 0
    return reasoning, other


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


# What the model never sees of a Chat message (DESIGN section 20): the members the official SDK
# hands the backend with an empty value (``ChatCompletionMessage.model_dump()``: ``refusal:
# null``, ``annotations: []``, ``audio: null``...) and the stream's own addressing, which a
# client may send back or leave out. The request's assistant message has no ``annotations``
# and no tool-call ``index``; its other members are optional.
_REQUEST_ASSISTANT = Citation(
    url="https://docs.rs/crate/openai-client-base/latest/source/docs/"
    "ChatCompletionRequestAssistantMessage.md",
    quote="ChatCompletionRequestAssistantMessage (generated from the OpenAI API's OpenAPI "
    "document 2.3.0): content, refusal, role, name, audio, tool_calls, function_call; every "
    "one but role [optional]; no annotations member",
    checked="2026-12-04",
)
_CONTENT = Citation(
    url="https://v03.api.js.langchain.com/interfaces/_langchain_openai.OpenAIClient.Chat."
    "Completions.ChatCompletionAssistantMessageParam-1.html",
    quote="content?: null | string | ... The contents of the assistant message. Required "
    "unless tool_calls or function_call is specified. (the openai SDK's "
    "ChatCompletionAssistantMessageParam)",
    checked="2026-12-04",
)
_TOOL_CALL = Citation(
    url="https://docs.rs/crate/openai-client-base/latest/source/docs/"
    "ChatCompletionMessageToolCall.md",
    quote="ChatCompletionMessageToolCall: id, type, function (a tool call sent back); index "
    "is a member of ChatCompletionMessageToolCallChunk, the stream's delta, only",
    checked="2026-12-04",
)
UNSEEN = (
    Unseen(("refusal",), None, "an answer's refusal: null (no refusal)", _REQUEST_ASSISTANT),
    Unseen(("annotations",), [], "an answer's empty annotations list", _REQUEST_ASSISTANT),
    Unseen(("audio",), None, "an answer's audio: null (no audio)", _REQUEST_ASSISTANT),
    Unseen(("function_call",), None, "a deprecated function_call: null", _REQUEST_ASSISTANT),
    Unseen(("tool_calls",), None, "tool_calls: null (no call)", _REQUEST_ASSISTANT),
    Unseen(("tool_calls",), [], "tool_calls: [] (no call)", _REQUEST_ASSISTANT),
    Unseen(("annotations",), None, "an answer's annotations: null", _REQUEST_ASSISTANT),
    *(
        Unseen(
            (key,),
            None,
            f"{key}: null (no reasoning: OpenRouter, DeepSeek)",
            Citation(
                url="https://reference.langchain.com/javascript/langchain-openrouter/OpenRouter/"
                "ChatStreamingMessageChunk",
                quote="property reasoning : string | null ... property refusal : string | null",
                checked="2026-12-04",
            ),
        )
        for key in REASONING_KEYS
    ),
    Unseen(
        ("prefix",),
        False,
        "prefix: false (Mistral's default: the message is no prefix to complete)",
        Citation(
            url="https://docs.rs/crate/mistral-openapi-client/latest/source/docs/"
            "AssistantMessage.md",
            quote="prefix | Option<bool> | Set this to `true` when adding an assistant message "
            "as prefix to condition the model response. ... | [optional][default to false] "
            "(generated from Mistral's OpenAPI document)",
            checked="2026-12-04",
        ),
    ),
    Unseen(
        ("tool_calls", "*", "type"),
        "function",
        'a tool call\'s type "function" (the only type of a function call; servers that leave '
        "it out mean it)",
        Citation(
            url="https://docs.rs/crate/openai-client-base/latest/source/docs/"
            "ChatCompletionMessageToolCall.md",
            quote="r#type | String | The type of the tool. Currently, only `function` is "
            "supported.",
            checked="2026-12-04",
        ),
    ),
    Unseen(
        ("content",),
        [],
        "content: [] on a message that only calls tools",
        _CONTENT,
        beside="tool_calls",
    ),
    Unseen(
        ("content",),
        None,
        "content: null on a message that only calls tools",
        _CONTENT,
        beside="tool_calls",
    ),
    Unseen(
        ("content",),
        "",
        'content: "" on a message that only calls tools',
        _CONTENT,
        beside="tool_calls",
    ),
    Unseen(
        ("content", "*", "cache_control"),
        ANY_VALUE,
        "a content part's cache breakpoint (gateways that pass Anthropic's on)",
        Citation(
            url="https://openrouter.ai/docs/client-sdks/python/components/"
            "anthropiccachecontroldirective",
            quote="When set on an individual content block, it marks an explicit cache breakpoint",
            checked="2026-12-04",
        ),
    ),
    Unseen(
        ("tool_calls", "*", "index"),
        ANY_VALUE,
        "a tool call's index: the stream's addressing of the call",
        _TOOL_CALL,
    ),
)


def _deployment(endpoint: Endpoint) -> str | None:
    """The model of an Azure OpenAI call, which names its deployment in the URL
    (``/openai/deployments/{deployment}/chat/completions?api-version=...``) and may send no
    ``model`` in the body; None for any other endpoint."""
    parts = [p for p in endpoint.path.split("/") if p]
    for i, part in enumerate(parts[:-1]):
        if part == "deployments":
            return parts[i + 1]
    return None


# Not required: most Chat servers take the model in the body; an Azure deployment's request
# may leave it out (the parser refuses a request that names a model nowhere).
ENDPOINT = EndpointRule(model=_deployment, required=False)


PROFILE = Profile(
    format=FORMAT,
    result_types=frozenset({"tool"}),
    # OpenAI's API; a deployment probing another Chat Completions server points
    # OPENAI_BASE_URL at it.
    transport=Transport(
        base_url_setting="OPENAI_BASE_URL",
        base_url="https://api.openai.com",
        key_setting="OPENAI_API_KEY",
        headers=lambda key: {"Authorization": f"Bearer {key}"},
    ),
    label="Chat Completions",
    block_types=BLOCK_TYPES,
    finishes=FINISHES,
    usage=UsageProfile(
        reports=frozenset(
            {"input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens"}
        ),
        reasoning=ReasoningUsage.SPLIT,
        input_includes_cache=True,
        split=_split,
    ),
    continuation=CONTINUATION,
    tool_states={},
    capture=Capture(paths=("/chat/completions",)),
    inline=INLINE,
    probe=Probe(path="/v1/chat/completions", bodies=_probes),
    unseen=UNSEEN,
    shorthand=(
        Shorthand(
            "content",
            frozenset({"text"}),
            "a message's text as a string or as one text part",
            _CONTENT,
        ),
    ),
    prefix_settings=("tools",),
    endpoint=ENDPOINT,
)
