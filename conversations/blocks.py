"""The three kinds of block (DESIGN section 1) and the typed-block structure every format
produces.

A provider response is an ordered list of typed blocks. Each provider-native block type falls in
exactly one class:

- VISIBLE: the answer the customer already saw; shown after redaction.
- AUDIT: a record of something that happened outside the model (tool calls and results); shown as
  identifiers and status, field by field, by storage class.
- NEVER: generated deliberation (thinking, signatures, reasoning summaries, encrypted reasoning).
  Never shown; a content-free marker at most.
- UNKNOWN: a type this code has not seen. Treated as NEVER until an admin classifies it: the
  system fails closed.

Each format declares its types in its profile (``BLOCK_TYPES`` in
``formats/<name>/profile.py``); the format registry hands them to ``register_types`` when the
format is registered, which refuses a format whose VISIBLE or AUDIT names overlap its NEVER
names, so a type can never be both shown and hidden. To add a block type, put its
provider-native name in the right set of its format's ``BLOCK_TYPES``.

This module is pure Python: formats import it, and it imports no Django model.
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


class BlockClass(enum.StrEnum):
    VISIBLE = "visible"
    AUDIT = "audit"
    NEVER = "never"
    UNKNOWN = "unknown"


# The classes a format declares its types in (UNKNOWN is what none of them names).
DECLARED = (BlockClass.VISIBLE, BlockClass.AUDIT, BlockClass.NEVER)

# Provider-native type names, per format, as the formats registered them. Patterns use fnmatch
# syntax ("*_tool_result").
_TYPES: dict[str, dict[BlockClass, frozenset[str]]] = {}


def _exact_and_patterns(names: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    exact = frozenset(n for n in names if "*" not in n)
    patterns = tuple(sorted(n for n in names if "*" in n))
    return exact, patterns


def _assert_disjoint(fmt: str, classes: Mapping[BlockClass, frozenset[str]]) -> None:
    """VISIBLE ∩ NEVER = ∅ and AUDIT ∩ NEVER = ∅, exact names and patterns alike."""
    never = classes[BlockClass.NEVER]
    for shown in (BlockClass.VISIBLE, BlockClass.AUDIT):
        names = classes[shown]
        clash = {n for n in names if n in never}
        clash |= {n for n in never for p in names if "*" in p and fnmatch.fnmatchcase(n, p)}
        clash |= {n for n in names for p in never if "*" in p and fnmatch.fnmatchcase(n, p)}
        if clash:
            raise AssertionError(f"{fmt}: {shown} and NEVER share {sorted(clash)}")


def register_types(fmt: str, declared: Mapping[BlockClass, Iterable[str]]) -> None:
    """Record a format's block types (the format registry calls this for each format it loads).
    Every declared class must be given, even empty; the sets must be disjoint as above."""
    missing = [cls.value for cls in DECLARED if cls not in declared]
    extra = [str(cls) for cls in declared if cls not in DECLARED]
    if missing or extra:
        raise AssertionError(
            f"{fmt}: block_types must name exactly {DECLARED} (got {list(declared)})"
        )
    classes = {cls: frozenset(declared[cls]) for cls in DECLARED}
    _assert_disjoint(fmt, classes)
    if fmt in _TYPES and _TYPES[fmt] != classes:
        raise AssertionError(f"{fmt}: block types registered twice, differently")
    _TYPES[fmt] = classes
    classify.cache_clear()


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
    # Other byte forms the provider sent for this very message (a Responses item's
    # ``output_item.done`` form beside the terminal response's, which is ``raw``): a history
    # that sends one of them back is unmodified.
    alternates: tuple[str, ...] = ()


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
    # The client stopped reading before the stream's end: the message is what had arrived.
    cancelled: bool = False
    # Stream chunk types the format does not know and read past (ai-sdk.ui): the stored message
    # may lack what they carried. Sorted, each once.
    unknown_chunks: list[str] = field(default_factory=list)
    # The provider's verdict on the history it was sent (Anthropic ``input_transformations``):
    # each entry's type, path and reason, never content.
    input_transformations: list[dict[str, str]] = field(default_factory=list)
    # The request's own settings: every top-level member but the history (system prompt, tools,
    # sampling...). Kept encrypted with the exchange, never projected.
    request_settings: dict[str, Any] = field(default_factory=dict)
    # The stored response a request without its history goes on from (OpenAI
    # ``previous_response_id``): the path it continues (``branches.py``).
    previous_response_id: str | None = None


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
