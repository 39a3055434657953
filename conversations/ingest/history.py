"""Stage 2 of ingest: the history sent matched against the history stored (pure, no database).

The transcript is append-only. For each exchange of a batch, in order, against what the
conversation holds (``ConversationState``: read by ``store.lock_conversations``, updated here as
the batch's earlier exchanges add messages): which messages are new, where the history sent
first differs from the stored one (``history_rewritten``), and which stored message stops being
current. Nothing is written here; later stages project, encrypt and store what this decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from ..blocks import BlockClass, Message, ParsedExchange
from ..monitoring.facts import tool_facts
from ..monitoring.rewrites import RESERIALISED, SETTINGS, UNSEEN, cache_lost, seen
from ..replay import canonical_sha256, prefix_sha256, prompt_sha256, raw_sha256
from .body import ExchangeInput
from .errors import IngestConflict

# (line number, checked body, parsed exchange): one item of a batch.
Item = tuple[int, ExchangeInput, ParsedExchange]


class Hashes(NamedTuple):
    """What a stored message is matched by: its raw and canonical hashes, the canonical hashes
    of the other byte forms the provider sent for it (``Message.alternates``: a history sending
    one back is unmodified), and the hash of what the model sees of it (``prompt_sha256``: ""
    for a message stored before it was kept)."""

    raw: str
    canonical: str
    alternates: tuple[str, ...] = ()
    prompt: str = ""


@dataclass(slots=True)
class PlannedMessage:
    message: Message
    sha256: str
    canonical_sha256: str
    from_response: bool
    superseded: bool = False
    alternate_sha256: tuple[str, ...] = ()
    prompt_sha256: str = ""
    format: str = ""  # the format of the exchange that brought it

    @property
    def hashes(self) -> Hashes:
        return Hashes(self.sha256, self.canonical_sha256, self.alternate_sha256, self.prompt_sha256)


@dataclass(slots=True)
class ExchangePlan:
    new_messages: list[PlannedMessage]
    rewritten_at: int | None
    tool_call_count: int
    supersede_current: int | None = None  # index into the current messages to mark superseded
    # For the signals (conversations/monitoring/): how the history was rewritten (``rewrites.py``;
    # "reserialised" when only bytes differ, decided here; the other kinds by
    # ``signals.rewrites.classify_batch`` once the stored messages can be read), and the
    # current messages from the rewritten position on (row ids, or plans of this batch).
    rewrite_kind: str = ""
    rewritten_rows: list[int | PlannedMessage] = field(default_factory=list)
    repeated_tool_calls: int = 0
    tool_results: int = 0
    tool_errors: int = 0
    # What the model sees before the history (system, tools: ``Profile.prefix_settings``), and
    # the cache reads a change the model sees cost (``rewrites.cache_lost``).
    prefix_sha256: str = ""
    cache_lost_tokens: int | None = None


def exchange_plan(fmt: str, parsed: ParsedExchange, current: Sequence[Hashes]) -> ExchangePlan:
    """Which messages are new, and where (if anywhere) the history sent differs from the stored.

    ``current`` holds the hashes of the conversation's current messages, in order. The history
    element at position i matches the current message i when their bytes are equal (the usual
    case, checked first because it is cheap), their canonical forms are, or its canonical form
    is one of the other byte forms the provider sent for that message (a Responses item's
    ``output_item.done`` form: unmodified). Where only members the model never sees differ
    (``Profile.unseen``), the element matches too and the exchange records an ``unseen`` change:
    no rewrite, no banner, no alert. Elements past the current length are new. The first
    position that differs (or a history shorter than the current one) is reported as rewritten;
    replay keeps returning what was first received. When the request carries only new items
    (``history_is_full`` False: OpenAI ``previous_response_id``), every item is new. When the
    answer is a later version of the history's last message (``output_supersedes_last``), that
    message stays stored but stops being current.
    """

    def planned(m: Message, from_response: bool) -> PlannedMessage:
        return PlannedMessage(
            m,
            raw_sha256(m.raw),
            canonical_sha256(m.raw, fmt),
            from_response,
            alternate_sha256=tuple(canonical_sha256(a, fmt) for a in m.alternates),
            prompt_sha256=prompt_sha256(m.raw, fmt),
            format=fmt,
        )

    new: list[PlannedMessage] = []
    rewritten_at: int | None = None
    reserialised = unseen = False
    # A message the answer continues was updated by the client on purpose (a tool result added
    # in place): its differing from the stored version is the protocol, not a rewrite.
    continued = len(parsed.history) - 1 if parsed.output_supersedes_last else None
    if parsed.history_is_full:
        for i, message in enumerate(parsed.history):
            if i < len(current):
                stored = current[i]
                if (
                    rewritten_at is None
                    and i != continued
                    and raw_sha256(message.raw) != stored.raw
                ):
                    canonical = canonical_sha256(message.raw, fmt)
                    if canonical == stored.canonical:
                        reserialised = True
                    elif canonical in stored.alternates:
                        pass  # the provider's other byte form of this very message
                    elif stored.prompt and prompt_sha256(message.raw, fmt) == stored.prompt:
                        unseen = True
                    else:
                        rewritten_at = i
                continue
            new.append(planned(message, False))
        if rewritten_at is None and len(parsed.history) < len(current):
            rewritten_at = len(parsed.history)
    else:
        new.extend(planned(m, False) for m in parsed.history)
    supersede_current: int | None = None
    if parsed.output_supersedes_last and parsed.history and parsed.output:
        if new:  # the superseded message arrives in this very exchange
            new[-1].superseded = True
        elif parsed.history_is_full and len(parsed.history) <= len(current):
            supersede_current = len(parsed.history) - 1
    new.extend(planned(m, True) for m in parsed.output)
    tool_calls = sum(
        1
        for m in parsed.output
        for b in m.blocks
        if b.cls is BlockClass.AUDIT and b.tool_name is not None
    )
    n_new_history = sum(1 for pm in new if not pm.from_response)
    facts = tool_facts(parsed.history, n_new_history, parsed.output)
    return ExchangePlan(
        new,
        rewritten_at,
        tool_calls,
        supersede_current,
        rewrite_kind=""
        if rewritten_at is not None
        else UNSEEN
        if unseen
        else RESERIALISED
        if reserialised
        else "",
        repeated_tool_calls=facts.repeated_calls,
        tool_results=facts.results,
        tool_errors=facts.errors,
    )


@dataclass(slots=True)
class ConversationState:
    """What matching needs of one conversation, kept up to date as the batch is planned."""

    pk: int
    customer: str
    exchanges_before: int = 0  # exchanges stored before this batch
    queue: str = ""
    count: int = 0  # messages stored, superseded ones included: the next sequence number
    # The current (not superseded) messages in order: (raw, canonical) hashes, and for each its
    # row id when stored before this batch, or its plan when it arrives in this batch.
    current: list[Hashes] = field(default_factory=list)
    current_rows: list[int | PlannedMessage] = field(default_factory=list)
    current_formats: list[str] = field(default_factory=list)  # each one's exchange's format
    messages: int = 0  # added by this batch
    exchanges: int = 0  # added by this batch
    tool_calls: int = 0  # added by this batch
    activity: datetime | None = None  # the latest started_at of this batch's exchanges
    truncated: bool = False  # any exchange of this batch was so flagged
    refusal: bool = False
    rewritten: bool = False
    # The latest exchange's format, prefix hash and cached tokens (read or written): a change of
    # system/tools, and the cache a rewrite loses, are measured against it.
    last_format: str = ""
    last_prefix: str = ""
    last_cached: int | None = None

    def stored(self, row_id: int, hashes: Hashes, fmt: str, *, superseded: bool) -> None:
        """One message stored before this batch, in sequence order, and its exchange's format."""
        self.count += 1
        if not superseded:
            self.current.append(hashes)
            self.current_rows.append(row_id)
            self.current_formats.append(fmt)

    def supersede(self, index: int) -> int | None:
        """Stop current message ``index`` being current; its row id when stored before."""
        del self.current[index]
        del self.current_formats[index]
        row = self.current_rows.pop(index)
        if isinstance(row, int):
            return row
        row.superseded = True  # not written yet: it is stored superseded
        return None

    def add(self, messages: Sequence[PlannedMessage], fmt: str) -> int:
        """Append an exchange's new messages (in format ``fmt``); returns the sequence number of
        the first."""
        first = self.count
        self.count += len(messages)
        self.messages += len(messages)
        self.exchanges += 1
        for pm in messages:
            if not pm.superseded:
                self.current.append(pm.hashes)
                self.current_rows.append(pm)
                self.current_formats.append(fmt)
        return first

    def formats_from(self, index: int) -> set[str]:
        """The formats the current messages from ``index`` on came in."""
        return set(self.current_formats[index:])


def _conformance(
    conversation: ConversationState, fmt: str, parsed: ParsedExchange, plan: ExchangePlan
) -> None:
    """What the model sees before the history (system, tools) compared with the latest
    exchange's, and the cache reads a change the model sees cost, priced from the usage."""
    plan.prefix_sha256 = prefix_sha256(fmt, parsed.params.request_settings)
    if (
        plan.rewritten_at is None
        and parsed.history_is_full
        and conversation.last_format == fmt
        and conversation.last_prefix
        and plan.prefix_sha256
        and plan.prefix_sha256 != conversation.last_prefix
    ):
        plan.rewrite_kind = SETTINGS
    usage = parsed.params.usage
    if plan.rewritten_at is not None or seen(plan.rewrite_kind):
        plan.cache_lost_tokens = cache_lost(conversation.last_cached, usage.cache_read_tokens)
    conversation.last_format = fmt
    conversation.last_prefix = plan.prefix_sha256
    reported = (usage.cache_read_tokens, usage.cache_write_tokens)
    conversation.last_cached = None if reported == (None, None) else sum(n or 0 for n in reported)


@dataclass(slots=True)
class Planned:
    """One exchange of the batch, matched: what the next stages project, encrypt and store."""

    line: int
    data: ExchangeInput
    parsed: ParsedExchange
    conversation: ConversationState
    ordinal: int  # 1 for the conversation's first exchange
    first: int  # sequence number of its first new message
    plan: ExchangePlan


def plan_batch(
    items: Sequence[Item], conversations: dict[str, ConversationState]
) -> tuple[list[Planned], list[int], list[tuple[int, IngestConflict]]]:
    """Match every exchange in order, each against what the ones before it left: the planned
    exchanges, the ids of stored messages they supersede, and the refused lines."""
    planned: list[Planned] = []
    superseded: list[int] = []
    rejected: list[tuple[int, IngestConflict]] = []
    for line, data, parsed in items:
        conversation = conversations[data.conversation]
        if conversation.customer != data.customer:
            conflict = IngestConflict(
                "this conversation belongs to another customer",
                field="customer",
                code="customer_mismatch",
            )
            rejected.append((line, conflict))
            continue
        plan = exchange_plan(data.format, parsed, conversation.current)
        if plan.rewritten_at is not None and conversation.formats_from(plan.rewritten_at) <= {
            data.format
        }:
            plan.rewritten_rows = list(conversation.current_rows[plan.rewritten_at :])
        # Otherwise the format changed mid-conversation (Responses then Chat, OpenAI then
        # Anthropic): the stored messages are never read with the new format's parser, so the
        # classification gets none of them and says only that the history differs.
        _conformance(conversation, data.format, parsed, plan)
        if plan.supersede_current is not None:
            stored_id = conversation.supersede(plan.supersede_current)
            if stored_id is not None:
                superseded.append(stored_id)
        first = conversation.add(plan.new_messages, data.format)
        conversation.tool_calls += plan.tool_call_count
        conversation.truncated |= parsed.params.truncated
        conversation.refusal |= parsed.params.refusal
        conversation.rewritten |= plan.rewritten_at is not None
        if data.started_at is not None and (
            conversation.activity is None or data.started_at > conversation.activity
        ):
            conversation.activity = data.started_at
        ordinal = conversation.exchanges_before + conversation.exchanges
        planned.append(Planned(line, data, parsed, conversation, ordinal, first, plan))
    return planned, superseded, rejected
