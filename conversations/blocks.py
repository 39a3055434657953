"""The three kinds of block (DESIGN section 1) and the typed-block structure every format produces.

A provider response is an ordered list of typed blocks. Each provider-native block type falls in
exactly one class:

- VISIBLE: the answer the customer already saw; shown after redaction.
- AUDIT: a record of something that happened outside the model (tool calls and results); shown as
  identifiers and status, field by field, by storage class.
- NEVER: generated deliberation (thinking, signatures, reasoning summaries, encrypted reasoning).
  Never shown; a content-free marker at most.
- UNKNOWN: a type this code has not seen. Treated as NEVER until an admin classifies it: the
  system fails closed.

To add a block type, put its provider-native name in the right set of ``_TYPES`` below. The sets
are checked for disjointness when this module is imported, so a type can never be both shown and
hidden.

This module is pure Python: formats import it, and it imports no Django model.
"""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


class BlockClass(enum.StrEnum):
    VISIBLE = "visible"
    AUDIT = "audit"
    NEVER = "never"
    UNKNOWN = "unknown"


# Provider-native type names, per format. Patterns use fnmatch syntax ("*_tool_result").
_TYPES: dict[str, dict[BlockClass, frozenset[str]]] = {
    "anthropic.messages": {
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
    },
    "openai.responses": {
        BlockClass.VISIBLE: frozenset({"message", "output_text", "refusal", "input_text"}),
        BlockClass.AUDIT: frozenset(
            {"function_call", "function_call_output", "*_call", "*_call_output"}
        ),
        BlockClass.NEVER: frozenset({"reasoning"}),
    },
    "openai.chat": {
        BlockClass.VISIBLE: frozenset({"content", "refusal"}),
        BlockClass.AUDIT: frozenset({"tool_calls", "tool"}),
        BlockClass.NEVER: frozenset({"reasoning_content", "reasoning"}),
    },
    "ai-sdk.ui": {
        BlockClass.VISIBLE: frozenset({"text"}),
        BlockClass.AUDIT: frozenset({"tool-*", "dynamic-tool"}),
        BlockClass.NEVER: frozenset({"reasoning"}),
    },
}


def _exact_and_patterns(names: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    exact = frozenset(n for n in names if "*" not in n)
    patterns = tuple(sorted(n for n in names if "*" in n))
    return exact, patterns


def _assert_disjoint() -> None:
    """VISIBLE ∩ NEVER = ∅ and AUDIT ∩ NEVER = ∅, exact names and patterns alike."""
    for fmt, classes in _TYPES.items():
        never = classes[BlockClass.NEVER]
        for shown in (BlockClass.VISIBLE, BlockClass.AUDIT):
            names = classes[shown]
            clash = {n for n in names if n in never}
            clash |= {n for n in never for p in names if "*" in p and fnmatch.fnmatchcase(n, p)}
            clash |= {n for n in names for p in never if "*" in p and fnmatch.fnmatchcase(n, p)}
            if clash:
                raise AssertionError(f"{fmt}: {shown} and NEVER share {sorted(clash)}")


_assert_disjoint()


@lru_cache(maxsize=4096)  # a handful of types per format; the bound holds made-up ones
def classify(fmt: str, provider_type: str) -> BlockClass:
    """The class of a provider-native block type; NEVER wins over any pattern, UNKNOWN otherwise."""
    classes = _TYPES.get(fmt)
    if classes is None:
        return BlockClass.UNKNOWN
    for cls in (BlockClass.NEVER, BlockClass.VISIBLE, BlockClass.AUDIT):
        exact, patterns = _exact_and_patterns(classes[cls])
        if provider_type in exact or any(fnmatch.fnmatchcase(provider_type, p) for p in patterns):
            return cls
    return BlockClass.UNKNOWN


def known_types(fmt: str) -> dict[BlockClass, frozenset[str]]:
    return dict(_TYPES[fmt])


@dataclass(frozen=True, slots=True)
class Block:
    """One typed block, as every format produces it.

    NEVER and UNKNOWN blocks carry no content here, by construction: their text stays in the raw
    message bytes only. ``redacted`` says the provider itself withheld the deliberation
    (``redacted_thinking``, an empty thinking block that carries only a signature, an encrypted
    reasoning item with no summary).
    """

    type: str
    cls: BlockClass
    text: str | None = None  # VISIBLE only
    tool_name: str | None = None  # AUDIT only
    call_id: str | None = None  # AUDIT only
    input: Any = None  # AUDIT: the tool input (parsed JSON; a str when the JSON was cut off)
    output: Any = None  # AUDIT: the tool result content
    is_error: bool | None = None  # AUDIT
    status: str | None = None  # AUDIT: provider status ("completed", "output-available"...)
    redacted: bool = False  # NEVER: withheld by the provider

    def __post_init__(self) -> None:
        if self.cls in (BlockClass.NEVER, BlockClass.UNKNOWN) and (
            self.text is not None or self.input is not None or self.output is not None
        ):
            raise ValueError(f"a {self.cls} block must not carry content")


@dataclass(frozen=True, slots=True)
class Message:
    """One message object: ``raw`` is its exact text as first received (or, for a streamed
    response, its one compact serialisation), which replay returns byte for byte."""

    role: str
    raw: str
    blocks: tuple[Block, ...] = ()


@dataclass(slots=True)
class Usage:
    input_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(slots=True)
class Params:
    """What is kept of one provider call besides its messages."""

    requested_model: str | None = None
    response_model: str | None = None
    response_id: str | None = None
    thinking: str | None = None  # "enabled", "adaptive", "disabled"...
    effort: str | None = None
    budget_tokens: int | None = None
    max_tokens: int | None = None
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    server_tool_counts: dict[str, int] = field(default_factory=dict)
    truncated: bool = False
    refusal: bool = False
    stream_error: str | None = None  # the type of an error event received mid-stream
    # Stream chunk types the format does not know and read past (ai-sdk.ui): the stored message
    # may lack what they carried. Sorted, each once.
    unknown_chunks: list[str] = field(default_factory=list)
    # The request's own settings: every top-level member but the history (system prompt, tools,
    # sampling...). Kept encrypted with the exchange, never projected.
    request_settings: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ParsedExchange:
    """The request's history and the response's assistant message(s), in order.

    ``history_is_full`` is False when the request carries only the new items and points at the
    stored previous response (OpenAI ``previous_response_id``): then nothing is compared, every
    history item is new.

    ``output_supersedes_last`` is True when the first output message is a later version of the
    history's last message (the AI SDK continues an assistant message in place after a client
    tool result): both versions are kept as received, and only the later one is current.
    """

    history: list[Message]
    output: list[Message]
    params: Params
    history_is_full: bool = True
    output_supersedes_last: bool = False
