"""What a provider format IS, as data: the profile every format package declares
(``formats/<name>/profile.py``) and the registry checks whole (DESIGN section 14).

A profile holds what other rooms used to keep in tables of their own:

- ``block_types``: the provider-native block types by class (``blocks.register_types`` checks
  that nothing is both shown and hidden), and ``inline``: a convention that hides deliberation
  inside a visible block (``<think>...</think>`` at the start of Chat ``content``);
- ``finishes``: every raw stop value the provider sends, its kind (``Finish``: finished,
  truncated, refused, tool call, other) and its words. The parser's ``truncated`` and
  ``refusal`` flags, the page's words, the signals' finish columns and the alerts all read
  this one table;
- ``usage``: which token counts the provider reports, and whether it splits the reasoning out
  of the output (where it does not, the console estimates the share and says so);
- ``continuation``: what ``?for=continuation`` may leave out, rule by rule, each with the
  provider documentation it follows (``continuation_rules.py``, re-exported here);
- ``tool_states``: the words of the tool states and statuses the format stores;
- ``capture``: the provider endpoints whose calls are this format's exchanges (the chat backend's
  clients capture those paths: their tables are generated from these, ``tables.py``);
- ``probe``: the two mis-sized requests of ``probe_allowance``, for the formats a provider
  answers directly.

And the hooks other rooms ask instead of naming a format (DESIGN section 19): which blocks
answer which call and how a server tool is worded (``result_types``, ``whole_tool_types``,
``pairing``, ``server_tool``), the provider's role names (``roles``), the model read from the
call's endpoint (``endpoint``), how the console itself calls the provider (``transport``: the
allowance probe and the review's read-time summary fetch, ``summary``), and how a usage object is
counted (``UsageProfile.counted``: one meaning of "input" on every page). What each hook is:
``hooks.py``, re-exported here.

Pure data and small pure functions: no Django, like every module of ``formats/``.
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..blocks import BlockClass
from .citation import Citation as Citation
from .continuation_rules import ANY as ANY
from .continuation_rules import LEGACY as LEGACY
from .continuation_rules import PRESERVED as PRESERVED
from .continuation_rules import REGIMES as REGIMES
from .continuation_rules import WHOLE as WHOLE
from .continuation_rules import Continuation as Continuation
from .continuation_rules import Cuts as Cuts
from .continuation_rules import Decide as Decide
from .continuation_rules import Rule as Rule
from .continuation_rules import earlier_thinking_cuts as earlier_thinking_cuts
from .continuation_rules import items_of as items_of
from .continuation_rules import keep_all as keep_all
from .continuation_rules import reasoning_cuts as reasoning_cuts
from .continuation_rules import type_of as type_of
from .hooks import CONSOLE_ROLES as CONSOLE_ROLES
from .hooks import ROLES as ROLES
from .hooks import SERVER_TOOLS as SERVER_TOOLS
from .hooks import Capture as Capture
from .hooks import Endpoint as Endpoint
from .hooks import EndpointRule as EndpointRule
from .hooks import InputTokens as InputTokens
from .hooks import Pairing as Pairing
from .hooks import Probe as Probe
from .hooks import SummaryFetch as SummaryFetch
from .hooks import Transport as Transport
from .hooks import count_input_as
from .hooks import mcp_words as mcp_words
from .hooks import no_server_tool as no_server_tool
from .hooks import quote_segment as quote_segment
from .hooks import server_tool_words as server_tool_words
from .unseen import ANY_VALUE as ANY_VALUE
from .unseen import Shorthand as Shorthand
from .unseen import Unseen as Unseen
from .unseen import prompt_form as prompt_form


class Finish(enum.StrEnum):
    """What a finish (stop) reason means. The order is the rollup's finish columns."""

    FINISHED = "finished"
    TRUNCATED = "truncated"  # cut off by a token limit (or the context window)
    TOOL_CALL = "tool_call"  # stopped to call a tool (the loop goes on)
    REFUSED = "refused"  # the model or the provider's filter refused
    OTHER = "other"  # an error, a cancellation, a reason this code does not know


# The rollup's columns (``signals``), in the order of ``Finish`` (stored arrays keep it).
FINISH_COLUMNS: tuple[str, ...] = ("stop", "length", "tool_use", "refusal", "other")
FINISH_ORDER: tuple[Finish, ...] = (
    Finish.FINISHED,
    Finish.TRUNCATED,
    Finish.TOOL_CALL,
    Finish.REFUSED,
    Finish.OTHER,
)


@dataclass(frozen=True, slots=True)
class FinishRule:
    kind: Finish
    words: str  # how the page says it: "the model" + words ("was cut off by the output limit")


@dataclass(frozen=True, slots=True)
class Inline:
    """Deliberation a server writes into a visible block's text: an element named ``tag`` at the
    start of a block of one of ``block_types`` (after whitespace). The span is the NEVER block
    ``never_type`` (its text never leaves the verbatim store); what follows the closing tag
    (its leading whitespace dropped) is the visible block. An opening tag never closed (the
    stream stopped while the model thought) makes the whole rest of the block the span.

    The servers that write these spans (vLLM's and SGLang's ``deepseek_r1``/``qwen3`` reasoning
    parsers, Ollama's thinking parser) split on the model's exact ``<think>`` and ``</think>``
    tokens; a model, a prompt or a proxy may still spell them otherwise. So the tag is read as
    HTML reads an element, and the span hidden whichever way it is spelled: the name in any case
    (``<THINK>``), the opening tag with attributes (``<think reason="x">``: after the name,
    whitespace or ``/`` and anything up to ``>``), the closing tag with whitespace before its
    ``>`` (``</think >``). Fail closed: an opening tag whose ``>`` never comes hides the rest.
    The parsers (``formats.live.split_inline``), the live filter (``formats.live.InlineSplit``)
    and the browser's filter (``static/console/stream-filter.js``, its ``INLINE`` table held
    equal to this by a test) all read this one rule."""

    block_types: frozenset[str]
    never_type: str = "think"
    tag: str = "think"

    @property
    def open_name(self) -> str:
        """The opening tag up to its name's end, lower case (``<think``)."""
        return f"<{self.tag.lower()}"

    @property
    def close_name(self) -> str:
        """The closing tag up to its name's end, lower case (``</think``)."""
        return f"</{self.tag.lower()}"


class ReasoningUsage(enum.StrEnum):
    SPLIT = "split"  # the provider reports reasoning tokens apart (OpenAI reasoning_tokens)
    INSIDE_OUTPUT = "inside_output"  # counted inside output tokens, not always reported apart
    NOT_REPORTED = "not_reported"  # the protocol carries no usage of its own (AI SDK UI)


@dataclass(frozen=True, slots=True)
class UsageProfile:
    """Which token counts a provider reports (``Usage`` fields), and how its reasoning is
    counted. ``input_includes_cache``: the provider's input count already holds the cached
    tokens (OpenAI's ``input_tokens``, Gemini's ``promptTokenCount``) or not (Anthropic's and
    Bedrock's ``input_tokens`` exclude cache reads and writes). The stored columns keep the
    provider's own counts; every page reads them through ``counted``."""

    reports: frozenset[str]
    reasoning: ReasoningUsage
    input_includes_cache: bool
    # Where the provider does not report reasoning tokens apart: the characters of one output
    # message (parsed) that are reasoning, and the other characters the output tokens paid for
    # (text, tool input). ``estimate_reasoning`` shares the output tokens out by them.
    split: Callable[[Any], tuple[int, int]] | None = None
    # A format whose input count is neither of the two forms above: (input, cache read, cache
    # write), as stored, -> the input as every page counts it. None: ``input_includes_cache``.
    count: Callable[[int | None, int | None, int | None], InputTokens] | None = None

    def counted(
        self, input_tokens: int | None, cached: int | None, written: int | None
    ) -> InputTokens:
        """The stored counts of one call (``Exchange.input_tokens``, ``cache_read_tokens``,
        ``cache_write_tokens``) as one meaning of "input": every input token billed, the cached
        part inside it."""
        if self.count is not None:
            return self.count(input_tokens, cached, written)
        return count_input_as(self.input_includes_cache, input_tokens, cached, written)


def count_input(
    fmt_usage: UsageProfile | None,
    input_tokens: int | None,
    cached: int | None,
    written: int | None,
) -> InputTokens:
    """``UsageProfile.counted`` for a format that may be gone (a stored row of a format since
    removed: its input count is taken as holding the cache, nothing added)."""
    if fmt_usage is None:
        return count_input_as(True, input_tokens, cached, written)
    return fmt_usage.counted(input_tokens, cached, written)


def estimate_reasoning(output_tokens: int | None, reasoning: int, other: int) -> int | None:
    """The reasoning share of ``output_tokens`` estimated from the characters of each (None
    when nothing was reasoned or no output was counted). Labelled "estimated" wherever shown."""
    if not output_tokens or reasoning <= 0:
        return None
    return round(output_tokens * reasoning / (reasoning + max(other, 0)))


@dataclass(frozen=True)
class Profile:
    format: str
    label: str  # the format in words ("Anthropic Messages")
    block_types: Mapping[BlockClass, frozenset[str]]
    finishes: Mapping[str, FinishRule]
    usage: UsageProfile
    continuation: Continuation
    tool_states: Mapping[str, tuple[str, str]]  # raw state -> (words, tone: ok|error|pending)
    capture: Capture
    inline: Inline | None = None
    probe: Probe | None = None
    # Members of a message the provider never puts in the prompt (``Unseen``), and the members
    # it reads the same as a string or as one text part (``Shorthand``).
    unseen: tuple[Unseen, ...] = ()
    shorthand: tuple[Shorthand, ...] = ()
    # The request members that come before the history in the model's prompt (system, tools):
    # a change of one is a change the model sees (``monitoring/rewrites.py``, kind ``settings``).
    prefix_settings: tuple[str, ...] = ()
    # The audit block types that answer a call rather than make one (Anthropic's
    # ``web_search_tool_result``, Responses' ``function_call_output``), in fnmatch patterns like
    # ``block_types``: the live view fills the call they answer instead of listing a new one,
    # and the page joins them to their call (by ``pairing``).
    result_types: frozenset[str] = frozenset()
    # Audit block types (patterns) of which one block is the call and its result at once, its
    # state saying whether the result came (an AI SDK tool part: a state of ``tool_states``
    # whose tone is not "pending"). A block of another type holds both when it carries output.
    whole_tool_types: frozenset[str] = frozenset()
    pairing: Pairing = Pairing.BY_ID
    # (block type, tool name) -> what a server tool (run by the provider, not the chat backend)
    # did, in words (``server_tool_words``), or None for a tool the chat backend ran.
    server_tool: Callable[[str, str], str | None] = no_server_tool
    # The provider's role names -> the console's (``CONSOLE_ROLES``): Gemini's ``model`` is the
    # assistant. A role not listed is shown as received.
    roles: Mapping[str, str] = field(default_factory=lambda: dict(ROLES))
    # The model read from the call's endpoint (the ingest body's ``endpoint``), for a format
    # whose provider puts it in the URL.
    endpoint: EndpointRule | None = None
    # How the console calls the provider itself (``probe``, ``summary``).
    transport: Transport | None = None
    # The review's read-time fetch of reasoning the stored exchange lacks.
    summary: SummaryFetch | None = None
    # The provider refuses a request whose reasoning of the open tool loop was dropped or
    # altered (Gemini 3's thought signatures of the current turn): the documentation saying so.
    # A ``tool_loop_reasoning`` rewrite of this format is then worded "the provider refuses this
    # history" (``monitoring/rewrites.py``), citing it.
    refuses_reasoning_edits: Citation | None = None

    def is_result(self, block_type: str) -> bool:
        """Whether ``block_type`` is a result of a tool call (``result_types``)."""
        return any(fnmatch.fnmatchcase(block_type, p) for p in self.result_types)

    def is_whole_tool(self, block_type: str) -> bool:
        """Whether one block of ``block_type`` is a call and its result (``whole_tool_types``)."""
        return any(fnmatch.fnmatchcase(block_type, p) for p in self.whole_tool_types)

    def result_in(self, state: str) -> bool:
        """Whether a whole tool block in ``state`` holds its result (its tone is not pending)."""
        words = self.tool_states.get(state)
        return words is not None and words[1] != "pending"

    def role(self, provider_role: str) -> str:
        """The console's name of a provider role (``roles``), or the role as received."""
        return self.roles.get(provider_role, provider_role)

    def finish(self, raw: str) -> Finish:
        """The kind of a raw stop value; OTHER for one this profile does not list."""
        rule = self.finishes.get(raw)
        return rule.kind if rule is not None else Finish.OTHER

    def missing(self) -> list[str]:
        """The parts this profile lacks (the registry refuses a format with any)."""
        out = []
        if not self.label:
            out.append("label")
        if set(self.block_types) != {BlockClass.VISIBLE, BlockClass.AUDIT, BlockClass.NEVER}:
            out.append("block_types")
        if not self.finishes:
            out.append("finishes")
        kinds = {rule.kind for rule in self.finishes.values()}
        if not {Finish.FINISHED, Finish.TRUNCATED} <= kinds:
            out.append("finishes (a finished and a truncated value)")
        if any(not rule.words for rule in self.finishes.values()):
            out.append("finishes (words for every value)")
        if not self.usage.reports and self.usage.reasoning is not ReasoningUsage.NOT_REPORTED:
            out.append("usage")
        if not self.continuation.rules:
            out.append("continuation (its rules)")
        if any(
            not (r.citation.url and r.citation.quote and r.citation.checked)
            for r in self.continuation.rules
        ):
            out.append("continuation (a citation for every rule)")
        cited = [(u.why, u.citation) for u in self.unseen]
        cited += [(h.why, h.citation) for h in self.shorthand]
        if any(not (why and c.url and c.quote and c.checked) for why, c in cited):
            out.append("unseen (words and a citation for every member)")
        if (self.probe is not None or self.summary is not None) and self.transport is None:
            out.append("transport (its probe or summary fetch calls the provider)")
        if any(role not in CONSOLE_ROLES for role in self.roles.values()):
            out.append(f"roles (each one of {', '.join(CONSOLE_ROLES)})")
        if self.inline is not None:
            never = self.block_types.get(BlockClass.NEVER, frozenset())
            visible = self.block_types.get(BlockClass.VISIBLE, frozenset())
            if not _declared(self.inline.never_type, never):
                out.append("inline (its span's type declared NEVER)")
            if not all(_declared(t, visible) for t in self.inline.block_types):
                out.append("inline (its block types declared VISIBLE)")
        return out


def _declared(name: str, names: frozenset[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, n) for n in names)
