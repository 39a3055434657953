"""The profile of ``google.generate_content`` (Gemini API and Vertex AI ``generateContent`` /
``streamGenerateContent``): what the console knows of the protocol, as data
(``formats/profile.py`` says what each part is).

A part has no ``type`` member: its kind is the one data member it holds (``text``,
``functionCall``...). The block types below are those member names, in the API's camelCase
(``parts.py`` reads the snake_case spelling the REST API and the SDKs also accept). Two kinds are
the console's own names for what a part carries beside its data: ``thought`` (a ``text`` part
with ``thought: true``, a summary of the model's thinking) and ``thoughtSignature`` (the
encrypted reasoning a part carries, on a text, ``functionCall`` or empty text part).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...blocks import BlockClass
from ..profile import (
    ANY,
    Capture,
    Citation,
    Continuation,
    Cuts,
    Endpoint,
    EndpointRule,
    Finish,
    FinishRule,
    Pairing,
    Probe,
    Profile,
    ReasoningUsage,
    Rule,
    Transport,
    UsageProfile,
    items_of,
    keep_all,
    server_tool_words,
)

FORMAT = "google.generate_content"

TEXT = "text"
THOUGHT = "thought"
SIGNATURE = "thoughtSignature"
CALL = "functionCall"
RESPONSE = "functionResponse"
CODE = "executableCode"
CODE_RESULT = "codeExecutionResult"
SERVER_CALL = "toolCall"
SERVER_RESULT = "toolResponse"

BLOCK_TYPES = {
    BlockClass.VISIBLE: frozenset({TEXT}),
    BlockClass.AUDIT: frozenset({CALL, RESPONSE, CODE, CODE_RESULT, SERVER_CALL, SERVER_RESULT}),
    BlockClass.NEVER: frozenset({THOUGHT, SIGNATURE}),
}
# Media (``inlineData``, ``fileData``) and every part kind not named above are UNKNOWN: kept
# verbatim, shown as nothing.

_REFUSED = "was stopped by Google's safety filter"
# Every finishReason of the API's Candidate.FinishReason (and promptFeedback.blockReason, which
# shares most names: a blocked prompt is always a refusal, ``parser.py``).
FINISHES = {
    "STOP": FinishRule(Finish.FINISHED, "finished its answer"),
    "MAX_TOKENS": FinishRule(Finish.TRUNCATED, "was cut off by the output token limit"),
    "SAFETY": FinishRule(Finish.REFUSED, _REFUSED),
    "RECITATION": FinishRule(Finish.REFUSED, "was stopped for reciting training data"),
    "LANGUAGE": FinishRule(Finish.REFUSED, "was stopped: the language is not supported"),
    "BLOCKLIST": FinishRule(Finish.REFUSED, "was stopped by a blocked term"),
    "PROHIBITED_CONTENT": FinishRule(Finish.REFUSED, "was stopped for prohibited content"),
    "SPII": FinishRule(Finish.REFUSED, "was stopped for sensitive personal information"),
    "IMAGE_SAFETY": FinishRule(Finish.REFUSED, "was stopped by the image safety filter"),
    "IMAGE_PROHIBITED_CONTENT": FinishRule(Finish.REFUSED, "was stopped for a prohibited image"),
    "IMAGE_RECITATION": FinishRule(Finish.REFUSED, "was stopped for reciting an image"),
    "MALFORMED_FUNCTION_CALL": FinishRule(Finish.OTHER, "wrote a malformed function call"),
    "UNEXPECTED_TOOL_CALL": FinishRule(Finish.OTHER, "called a tool it was not given"),
    "TOO_MANY_TOOL_CALLS": FinishRule(Finish.OTHER, "made too many tool calls in a row"),
    "MISSING_THOUGHT_SIGNATURE": FinishRule(
        Finish.OTHER, "was refused: a thought signature was missing from the history"
    ),
    "MALFORMED_RESPONSE": FinishRule(Finish.OTHER, "wrote a malformed response"),
    "IMAGE_OTHER": FinishRule(Finish.OTHER, "stopped generating an image"),
    "NO_IMAGE": FinishRule(Finish.OTHER, "generated no image"),
    "OTHER": FinishRule(Finish.OTHER, "stopped for another reason"),
    "FINISH_REASON_UNSPECIFIED": FinishRule(Finish.OTHER, "stopped for no stated reason"),
}

THOUGHT_SIGNATURES = Citation(
    url="https://ai.google.dev/gemini-api/docs/thought-signatures",
    quote="As a general rule, if you receive a thought signature in a model response, you "
    "should pass it back exactly as received when sending the conversation history in the next "
    "turn. When using Gemini 3 models, you must pass back thought signatures during function "
    "calling, otherwise you will get a validation error (4xx status code).",
    checked="2026-12-04",
)


def is_function_response_only(value: Any) -> bool:
    """A user content made only of function responses (not the customer speaking)."""
    parts = items_of(value, "parts")
    return bool(parts) and all(
        isinstance(p, dict) and ("functionResponse" in p or "function_response" in p) for p in parts
    )


def current_turn(values: Sequence[Any]) -> int:
    """Where the current turn starts: after the latest user content that is not only function
    responses (the API's own walk back, THOUGHT_SIGNATURES); 0 when there is none."""
    for i in range(len(values) - 1, -1, -1):
        v = values[i]
        user = isinstance(v, dict) and v.get("role", "user") == "user"
        if user and not is_function_response_only(v):
            return i + 1
    return 0


def _continuation(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    """The current turn is open while its latest model content called a function."""
    start = current_turn(values)
    models = [
        i for i in range(start, len(values)) if isinstance(values[i], dict) and _model(values[i])
    ]
    open_loop = bool(models) and any(
        isinstance(p, dict) and ("functionCall" in p or "function_call" in p)
        for p in items_of(values[models[-1]], "parts")
    )
    return open_loop, set(range(start, len(values))), {}


def _model(value: dict[str, Any]) -> bool:
    return value.get("role") == "model"


CONTINUATION = Continuation(
    rules=(
        Rule(
            name="google.thought-signatures",
            models=("*",),
            regime=ANY,
            decide=keep_all(_continuation),
            says="nothing is left out: every part goes back with its thought signature, where "
            "it was received",
            citation=THOUGHT_SIGNATURES,
        ),
    ),
    member="parts",
)


# toolType of a Gemini 3 server tool part -> the name ``server_tool_words`` knows.
_SERVER_TOOLS = {
    "google_search_web": "google_search",
    "google_search": "google_search",
    "google_search_retrieval": "google_search",
    "url_context": "url_context",
    "code_execution": "code_execution",
    "google_maps": "google_maps",
    "file_search": "file_search",
}


def server_tool_name(tool_type: str) -> str:
    return _SERVER_TOOLS.get(tool_type.lower(), tool_type.lower())


def _server_tool(block_type: str, tool_name: str) -> str | None:
    """Code execution and the Gemini 3 server tools (``toolCall``/``toolResponse``) run at
    Google; a ``functionCall`` is the chat backend's."""
    if block_type in (CODE, CODE_RESULT):
        return server_tool_words("code_execution")
    if block_type in (SERVER_CALL, SERVER_RESULT):
        return server_tool_words(server_tool_name(tool_name or "tool"))
    return None


METHODS = ("generateContent", "streamGenerateContent")


def endpoint_model(endpoint: Endpoint) -> str | None:
    """The model of ``.../models/<model>:<method>`` (the Gemini API, Vertex AI's
    ``.../publishers/google/models/<model>:<method>``, ``tunedModels/<name>``), read from the
    end of the path so a gateway's prefix in front does not matter."""
    last = endpoint.path.rstrip("/").rsplit("/", 1)[-1]
    model, sep, method = last.rpartition(":")
    if not sep or method not in METHODS or not model:
        return None
    return model


def _probes(
    model: str, budget: int, question: str
) -> list[tuple[str, int, int | None, dict[str, Any]]]:
    def body(max_tokens: int) -> dict[str, Any]:
        return {
            "contents": [{"role": "user", "parts": [{"text": question}]}],
            "generationConfig": {
                "maxOutputTokens": max_tokens,
                "thinkingConfig": {"thinkingBudget": budget},
            },
        }

    return [
        ("at_budget", budget, budget, body(budget)),
        ("no_room", budget + 1, budget, body(budget + 1)),
    ]


def _split(message: Any) -> tuple[int, int]:
    """Reasoning and other characters of a model content (only where no thoughtsTokenCount came:
    the API reports thoughts apart): thought text and signature bytes against text and calls."""
    reasoning = other = 0
    for part in items_of(message, "parts"):
        if not isinstance(part, dict):
            continue
        signature = part.get("thoughtSignature", part.get("thought_signature"))
        if isinstance(signature, str):
            reasoning += len(signature) * 3 // 4
        text = part.get("text")
        if isinstance(text, str):
            if part.get("thought") is True:
                reasoning += len(text)
            else:
                other += len(text)
    return reasoning, other


TRANSPORT = Transport(
    base_url_setting="GEMINI_BASE_URL",
    base_url="https://generativelanguage.googleapis.com",
    key_setting="GEMINI_API_KEY",
    headers=lambda key: {"x-goog-api-key": key},
)

PROFILE = Profile(
    format=FORMAT,
    label="Google Gemini",
    block_types=BLOCK_TYPES,
    finishes=FINISHES,
    usage=UsageProfile(
        reports=frozenset(
            {"input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens"}
        ),
        reasoning=ReasoningUsage.SPLIT,
        # promptTokenCount holds cachedContentTokenCount.
        input_includes_cache=True,
        split=_split,
    ),
    continuation=CONTINUATION,
    tool_states={},
    capture=Capture(
        paths=(":generateContent", ":streamGenerateContent"),
        http_clients=("_api_client._httpx_client", "_api_client._async_httpx_client"),
    ),
    probe=Probe(path="/v1beta/models/{model}:generateContent", bodies=_probes),
    transport=TRANSPORT,
    result_types=frozenset({RESPONSE, CODE_RESULT, SERVER_RESULT}),
    pairing=Pairing.BY_ORDER,
    server_tool=_server_tool,
    roles={"user": "customer", "model": "assistant", "function": "tool", "system": "system"},
    endpoint=EndpointRule(model=endpoint_model, required=True),
    refuses_reasoning_edits=THOUGHT_SIGNATURES,
    prefix_settings=("systemInstruction", "system_instruction", "tools", "toolConfig"),
)
