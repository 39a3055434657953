"""Stage 2 of ingest: the history sent matched against the history stored (pure, no database).

A conversation is a tree of messages (``conversations/branches.py``): each exchange's history is
a path, matched by content against the paths the conversation holds (``ConversationState``: read
by ``store.lock_conversations``, updated here as the batch's earlier exchanges add messages).
For each exchange of a batch, in order, this decides which messages are new, which stored ones
its path goes through, whether it continues a path, starts a branch (a regenerate, an edit, a
restarted step) or rewrote the history it continues (``history_rewritten``, at the first
difference), and which stored message stops being current. Nothing is written here; later
stages project, encrypt and store what this decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from ..blocks import BlockClass, Message, ParsedExchange
from ..branches import EDITED, REGENERATED, RESTARTED
from ..monitoring.facts import tool_facts
from ..monitoring.rewrites import RESERIALISED, SETTINGS, UNSEEN, cache_lost, seen
from ..replay import canonical_sha256, prefix_sha256, prompt_sha256, raw_sha256
from .body import ExchangeInput
from .errors import IngestConflict
from .state import (
    ConversationState,
    ExchangeMeta,
    ExchangePlan,
    Hashes,
    PlannedMessage,
    Ref,
    StoredMessage,
)

__all__ = [
    "ConversationState",
    "ExchangeMeta",
    "ExchangePlan",
    "Hashes",
    "Item",
    "Planned",
    "PlannedMessage",
    "exchange_plan",
    "plan_batch",
]

# (line number, checked body, parsed exchange): one item of a batch.
Item = tuple[int, ExchangeInput, ParsedExchange]


class _Matcher:
    """The history sent, matched element by element against stored messages: equal bytes (the
    usual case, checked first because it is cheap), equal canonical form (only the serialisation
    differs: ``reserialised``), one of the provider's other byte forms of that message
    (unmodified), or the same prompt form (only members the model never sees differ,
    ``Profile.unseen``: ``unseen``). The hashes of the elements sent are worked out once, when
    first needed."""

    SAME, RESERIALISED, UNSEEN = 1, 2, 3

    def __init__(self, fmt: str, history: Sequence[Message], stored: dict[int, StoredMessage]):
        self.fmt = fmt
        self.history = history
        self.stored = stored
        self._hashes: dict[tuple[str, int], str] = {}

    def _hash(self, kind: str, i: int) -> str:
        key = (kind, i)
        if key not in self._hashes:
            raw = self.history[i].raw
            self._hashes[key] = (
                raw_sha256(raw)
                if kind == "raw"
                else canonical_sha256(raw, self.fmt)
                if kind == "canonical"
                else prompt_sha256(raw, self.fmt)
            )
        return self._hashes[key]

    def match(self, i: int, sequence: int) -> int:
        """How history element ``i`` matches stored message ``sequence`` (0: it does not)."""
        stored = self.stored[sequence].hashes
        if self._hash("raw", i) == stored.raw:
            return self.SAME
        canonical = self._hash("canonical", i)
        if canonical == stored.canonical:
            return self.RESERIALISED
        if canonical in stored.alternates:
            return self.SAME  # the provider's other byte form of this very message
        prompt = self._hash("prompt", i)
        if (stored.prompt and prompt == stored.prompt) or prompt in stored.alternates:
            return self.UNSEEN  # (the other byte form, less what the model never sees)
        return 0

    def prefix(self, path: Sequence[int], continued: int | None) -> tuple[int, set[int]]:
        """How many leading elements of the history match ``path``, and how they matched. The
        element the answer continues (``continued``) matches whatever it holds."""
        n = 0
        how: set[int] = set()
        for i in range(min(len(self.history), len(path))):
            if i == continued:
                n += 1
                continue
            found = self.match(i, path[i])
            if not found:
                break
            how.add(found)
            n += 1
        return n, how


def _speaks(m: Message) -> bool:
    """A message in which the customer spoke (not only tool results)."""
    return m.role == "user" and any(b.cls is BlockClass.VISIBLE for b in m.blocks)


def _branch_kind(fmt: str, sent: Message, stored: StoredMessage, at: int) -> str:
    """The branch a history starts by sending ``sent`` at position ``at`` where the path it
    follows holds ``stored`` (and nothing of that path after it): ``edited`` when the customer
    speaks in both, ``restarted`` when both are tool results (or other messages of a customer's
    or a tool's, of one role), or at the very start (a new thread: another system prompt and
    question, as an agent framework's sub-agents post under one conversation); "" otherwise: a
    message of the model's, a system prompt under a stored history, or a message of another
    format changed is a rewrite, not a branch."""
    if stored.format != fmt or stored.from_response or stored.role != sent.role:
        return ""
    if stored.role == "user" and _speaks(sent):
        return EDITED
    if stored.role in ("user", "tool") or (at == 0 and sent.role != "assistant"):
        return RESTARTED
    return ""


def _reference(
    conversation: ConversationState, parsed: ParsedExchange, matcher: _Matcher
) -> tuple[int | None, tuple[int, ...], int, set[int]]:
    """The path the request continues or leaves: the tip (one per branch) whose path its history
    follows longest, the latest on a tie (``None`` and an empty path for the first exchange);
    how many elements follow it, and how they matched."""
    continued = len(parsed.history) - 1 if parsed.output_supersedes_last else None
    best: tuple[int | None, tuple[int, ...], int, set[int]] = (None, (), 0, set())
    for tip in conversation.tree.tips():  # latest first
        path = conversation.tree.path(tip)
        n, how = matcher.prefix(path, continued)
        if best[0] is None or n > best[2]:
            best = (tip, path, n, how)
        if n == len(parsed.history):
            break  # no other tip can follow it further; this is the latest that does
    return best


def exchange_plan(
    fmt: str, parsed: ParsedExchange, conversation: ConversationState
) -> ExchangePlan:
    """Which messages are new, which path the exchange takes, and how it relates to the path
    it continues (the previous request's on the same branch).

    The history is matched against the path of each branch's latest exchange (``_reference``),
    element by element (``_Matcher``); the path it follows longest is the reference, ``P``, and
    ``k`` elements match it:

    - ``k == len(P)``: the history goes on from ``P`` (new messages after it, or none);
    - the history ends before ``P`` does (``k == len(history)``): a branch, ``regenerated`` where
      ``P`` goes on with a message the model wrote (the same history without the answer),
      ``restarted`` otherwise;
    - the history differs from ``P`` at ``k``: a branch when the message sent there is one the
      model did not write, in place of another such of the same role and format (``edited`` when
      the customer speaks in it, ``restarted`` otherwise: a tool result run again, or at ``k ==
      0`` a new thread, another system prompt and question), and nothing of ``P`` after ``k`` is
      sent again (``_branch_kind``); otherwise the history was **rewritten** at ``k`` (a
      message of the model's edited or dropped, messages reordered, ``P``'s later messages sent
      after a change): flagged, and
      classified by ``rewrites.classify`` against ``P``'s messages from ``k`` on.

    The path is the history's messages (stored ones where they match, by content, wherever they
    are stored: the reference's first ``k``, and in a rewritten history any later one of ``P``
    sent again) then the answer. When the request carries only new items and points at a stored
    response (``history_is_full`` False: OpenAI ``previous_response_id``), the path goes on from
    that response's exchange (else the latest) and every item is new. When the answer is a later
    version of the history's last message (``output_supersedes_last``), that message stays
    stored but leaves the path and stops being current.
    """

    def planned(m: Message, from_response: bool) -> PlannedMessage:
        return PlannedMessage(
            m,
            raw_sha256(m.raw),
            canonical_sha256(m.raw, fmt),
            from_response,
            # The other byte forms' canonical hashes, then their prompt hashes.
            alternate_sha256=(
                *(canonical_sha256(a, fmt) for a in m.alternates),
                *(prompt_sha256(a, fmt) for a in m.alternates),
            ),
            prompt_sha256=prompt_sha256(m.raw, fmt),
            format=fmt,
        )

    history = parsed.history
    refs: list[Ref] = []
    new: list[PlannedMessage] = []
    rewritten_at: int | None = None
    branch, branched_at = "", None
    how: set[int] = set()
    tree = conversation.tree
    if not parsed.history_is_full:
        wanted = parsed.params.previous_response_id
        parent = next(
            (o for o, m in conversation.meta.items() if wanted and m.response_id == wanted),
            tree.latest,
        )
        reference = tree.path(parent) if parent is not None else ()
        refs = list(reference)
        if parent is not None and parent not in tree.tips():
            # An earlier response continued again: the path leaves the one that went on.
            branch, branched_at = RESTARTED, len(reference)
        start = 0  # every item of the request is new
    else:
        matcher = _Matcher(fmt, history, conversation.messages)
        parent, reference, k, how = _reference(conversation, parsed, matcher)
        refs = list(reference[:k])
        start = k
        if k < len(reference):
            later = reference[k:]
            if k == len(history):
                branch = REGENERATED if conversation.model_wrote(reference[k]) else RESTARTED
                branched_at = k
            else:
                # The later messages of P sent again, each matched once, wherever it is sent.
                again: dict[int, int] = {}
                for i in range(k, len(history)):
                    sequence = next(
                        (s for s in later if s not in again.values() and matcher.match(i, s)),
                        None,
                    )
                    if sequence is not None:
                        again[i] = sequence
                kind = _branch_kind(fmt, history[k], conversation.messages[reference[k]], k)
                if again or not kind:
                    rewritten_at = k
                    for i in range(k, len(history)):
                        if i in again:
                            refs.append(again[i])
                        else:
                            pm = planned(history[i], False)
                            new.append(pm)
                            refs.append(pm)
                    start = len(history)
                else:
                    branch, branched_at = kind, k
    for m in history[start:]:
        pm = planned(m, False)
        new.append(pm)
        refs.append(pm)
    superseded_rows: list[int] = []
    if parsed.output_supersedes_last and refs and parsed.output:
        last = refs.pop()
        row = last if isinstance(last, PlannedMessage) else conversation.messages[last].row
        if isinstance(row, PlannedMessage):
            row.superseded = True  # not written yet: it is stored superseded
        else:
            superseded_rows.append(row)
    outputs = [planned(m, True) for m in parsed.output]
    new.extend(outputs)
    refs.extend(outputs)
    tool_calls = sum(
        1
        for m in parsed.output
        for b in m.blocks
        if b.cls is BlockClass.AUDIT and b.tool_name is not None
    )
    n_new_history = 0
    for r in reversed(refs[: len(refs) - len(outputs)]):
        if not isinstance(r, PlannedMessage):
            break
        n_new_history += 1
    facts = tool_facts(history, n_new_history, parsed.output)
    plan = ExchangePlan(
        new,
        rewritten_at,
        tool_calls,
        rewrite_kind=""
        if rewritten_at is not None
        else UNSEEN
        if _Matcher.UNSEEN in how
        else RESERIALISED
        if _Matcher.RESERIALISED in how
        else "",
        repeated_tool_calls=facts.repeated_calls,
        tool_results=facts.results,
        tool_errors=facts.errors,
        parent=parent,
        path=refs,
        branch=branch,
        branched_at=branched_at,
        superseded_rows=superseded_rows,
    )
    if rewritten_at is not None:
        later_rows = [conversation.messages[s] for s in reference[rewritten_at:]]
        # A stored message of another format (Responses then Chat) is never read with this
        # format's parser: the classification then gets none and says only that it differs.
        if all(m.format == fmt for m in later_rows):
            plan.rewritten_rows = [m.row for m in later_rows]
    return plan


def _conformance(
    conversation: ConversationState, fmt: str, parsed: ParsedExchange, plan: ExchangePlan
) -> ExchangeMeta:
    """What the model sees before the history (system, tools) compared with the exchange whose
    path this one continues, and the cache reads a change the model sees cost, priced from the
    usage. Returns what the next exchange on this path compares with."""
    plan.prefix_sha256 = prefix_sha256(fmt, parsed.params.request_settings)
    before = conversation.meta.get(plan.parent) if plan.parent is not None else None
    if (
        plan.rewritten_at is None
        and parsed.history_is_full
        and plan.branched_at != 0  # a new thread keeps nothing of the path it leaves
        and before is not None
        and before.format == fmt
        and before.prefix
        and plan.prefix_sha256
        and plan.prefix_sha256 != before.prefix
    ):
        plan.rewrite_kind = SETTINGS
    usage = parsed.params.usage
    if plan.rewritten_at is not None or seen(plan.rewrite_kind):
        plan.cache_lost_tokens = cache_lost(
            before.cached if before is not None else None, usage.cache_read_tokens
        )
    reported = (usage.cache_read_tokens, usage.cache_write_tokens)
    return ExchangeMeta(
        fmt,
        plan.prefix_sha256,
        None if reported == (None, None) else sum(n or 0 for n in reported),
        parsed.params.response_id or "",
    )


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
        plan = exchange_plan(data.format, parsed, conversation)
        meta = _conformance(conversation, data.format, parsed, plan)
        superseded.extend(plan.superseded_rows)
        ordinal = conversation.exchanges_before + conversation.exchanges + 1
        first = conversation.add(plan, data.format, ordinal, meta)
        conversation.tool_calls += plan.tool_call_count
        conversation.truncated |= parsed.params.truncated
        conversation.refusal |= parsed.params.refusal
        conversation.rewritten |= plan.rewritten_at is not None
        # Activity is the latest message: an answer arrives latency_ms after the call started
        # (the page shows it at that time: workspace/timeline.py, _sent_at).
        at = data.started_at
        if at is not None and data.latency_ms is not None:
            at += timedelta(milliseconds=data.latency_ms)
        if at is not None and (conversation.activity is None or at > conversation.activity):
            conversation.activity = at
        planned.append(Planned(line, data, parsed, conversation, ordinal, first, plan))
    return planned, superseded, rejected
