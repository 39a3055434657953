"""A conversation page as a person reads it, built from the rows ``selectors.conversation_page``
fetched (no query here).

- **Turns**: consecutive messages of one speaker, with the time they were sent (the exchange's
  ``started_at``; an answer's plus the exchange's latency; the time it was stored when the chat
  backend sent no time). Tool results do not make turns of their own: each joins its call.
- **Tool calls**: one row per call, its result joined to it as the format's profile says
  (``result_types``: which blocks are results; ``pairing``: by call id, or where the provider
  sends none, by tool name and order; ``whole_tool_types``: one block that is call and result at
  once, its state saying whether the result came; a server item carrying its output holds both
  too). The result's status in plain words, its error message where a policy keeps one, and how
  long the result took where both exchanges carry their times. A server tool is shown by what it
  did ("Searched the web", the profile's ``server_tool``). Speakers are the profile's ``roles``.
- **Exchanges**: the model, usage with the reasoning share, the finish reason in words and the
  latency, beside the turn the exchange produced.
- **Events**: in sentences.

To show something new: compute it here from the rows (add to the selector if it needs a column
the page does not fetch yet, and re-pin the page's query count), and render it in
``templates/jinja2/console/_turn.html``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..formats import profile
from ..formats.profile import ROLES, Pairing, Profile
from ..projection.project import FieldView
from .exchanges import ExchangeSummary, exchange_summary
from .words import TOOL_STATES, event_sentence, field_label

# Where a failed tool's result usually says what failed: the first of these a policy keeps is
# shown as the error message (the rest of the result, if kept, stays in the row).
ERROR_PATHS = ("$", "$.error", "$.error.message", "$.message", "$.errorText", "$.error_message",
               "$.detail", "$.reason")  # fmt: skip

ROLE_LABELS = {
    "customer": "Customer",
    "assistant": "Assistant",
    "tool": "Tool result",
    "system": "System",
    "developer": "Developer",
    "exchange": "Model call",
}


@dataclass(frozen=True)
class Shown:
    """One kept field as the row shows it."""

    label: str
    value: Any
    url: str | None
    storage_class: str
    path: str
    side: str


def _shown(views: Iterable[FieldView]) -> list[Shown]:
    return [
        Shown(field_label(v.path), v.value, v.url, v.storage_class, v.path, v.side) for v in views
    ]


@dataclass
class ToolCall:
    key: str  # "<message sequence>-<block position>" of the call: stable across re-projection
    name: str
    action: str | None  # a server tool: what it did, in words
    call_type: str
    call_id: str
    inputs: list[Shown] = field(default_factory=list)
    outputs: list[Shown] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)  # "input:$.path": not kept, or
    restricted: list[str] = field(default_factory=list)  # kept, but not for this person's role
    result_type: str = ""
    has_result: bool = False
    is_error: bool | None = None
    raw_status: str = ""  # the result's status (or the call's, for a block carrying both)
    call_status: str = ""  # the call item's own (OpenAI: the item was generated completely)
    words: str = ""
    tone: str = "pending"  # ok | error | pending
    error: str | None = None
    error_hidden: bool = False  # failed, and no policy keeps what failed
    duration_ms: int | None = None
    called_in: int | None = None  # exchange ordinals
    answered_in: int | None = None
    at: datetime | None = None
    note: str = ""  # the admin's work note for this tool (sharing/notes.py: annotate)

    @property
    def identifiers(self) -> list[Shown]:
        return [f for f in self.inputs if f.storage_class == "identifier"]


@dataclass
class Part:
    kind: str  # text | tool | marker
    text: str = ""
    markdown: bool = False
    tool: ToolCall | None = None


@dataclass
class Turn:
    key: str  # the page anchor: "m<first message's sequence>"
    role: str
    at: datetime | None
    parts: list[Part] = field(default_factory=list)
    exchange: ExchangeSummary | None = None
    ordinal: int = 0  # of the exchange that brought its first message
    precise: bool = False  # shown with seconds: a neighbouring turn has the same minute
    fold: Any = None  # folds.Fold: the calls of a long turn rendered on demand (folds.py)
    _group: tuple[Any, ...] = ()

    @property
    def label(self) -> str:
        return ROLE_LABELS.get(self.role, self.role.capitalize())


@dataclass(frozen=True)
class EventLine:
    at: datetime
    kind: str
    sentence: str


@dataclass
class Timeline:
    turns: list[Turn]
    events: list[EventLine]
    calls: dict[str, ToolCall]
    # The turn each message of the path shows in (its key: the page's anchor), by sequence
    # number: where a branch point links to.
    turn_of: dict[int, str] = field(default_factory=dict)
    folded: dict[str, str] = field(default_factory=dict)  # call key -> its fold (folds.py)

    @property
    def failed_calls(self) -> list[ToolCall]:
        return [c for c in self.calls.values() if c.tone == "error"]

    @property
    def first_failed_anchor(self) -> str:
        key = next((c.key for c in self.calls.values() if c.tone == "error"), "")
        return self.folded.get(key, f"call-{key}") if key else ""


def _sent_at(message: Any) -> datetime | None:
    e = message.exchange
    if e.started_at is None:
        return message.created_at
    if message.from_response and e.latency_ms is not None:
        return e.started_at + timedelta(milliseconds=e.latency_ms)
    return e.started_at


def _took(called: Any, answered: Any) -> int | None:
    """Milliseconds from the answer that made the call to the request that brought its result:
    the tool's run plus the chat backend's own time. None where a time is missing."""
    if called is None or answered is None or called.pk == answered.pk:
        return None
    if called.started_at is None or called.latency_ms is None or answered.started_at is None:
        return None
    done = called.started_at + timedelta(milliseconds=called.latency_ms)
    ms = int((answered.started_at - done).total_seconds() * 1000)
    return ms if ms >= 0 else None


def _split(block: Any) -> tuple[list[Shown], list[Shown]]:
    shown = _shown(block.shown)
    return [f for f in shown if f.side == "input"], [f for f in shown if f.side == "output"]


def _attach_result(call: ToolCall, block: Any, message: Any) -> None:
    _, outputs = _split(block)
    call.outputs.extend(outputs)
    call.hidden.extend(h for h in block.hidden if h.startswith("output:"))
    call.restricted.extend(h for h in block.restricted if h.startswith("output:"))
    call.result_type = block.provider_type
    call.has_result = True
    if block.is_error is not None:
        call.is_error = bool(call.is_error) or block.is_error
    if block.status:
        call.raw_status = block.status
    call.answered_in = message.exchange.ordinal


def _new_call(block: Any, message: Any, key: str, prof: Profile | None) -> ToolCall:
    inputs, outputs = _split(block)
    server = prof.server_tool(block.provider_type, block.tool_name) if prof is not None else None
    call = ToolCall(
        key=key,
        name=block.tool_name or block.provider_type,
        action=server,
        call_type=block.provider_type,
        call_id=block.call_id,
        inputs=inputs,
        hidden=[h for h in block.hidden if h.startswith("input:")],
        restricted=[h for h in block.restricted if h.startswith("input:")],
        called_in=message.exchange.ordinal,
        at=_sent_at(message),
        call_status=block.status,
        is_error=block.is_error,
    )
    whole = prof is not None and prof.is_whole_tool(block.provider_type)
    if outputs or block.is_error is not None or whole:
        # One block with both sides (an AI SDK tool part, an OpenAI server item).
        call.outputs = outputs
        call.hidden += [h for h in block.hidden if h.startswith("output:")]
        call.restricted += [h for h in block.restricted if h.startswith("output:")]
        if whole:
            assert prof is not None
            call.has_result = prof.result_in(block.status)
        else:
            call.has_result = bool(outputs) or block.is_error is not None
        call.raw_status = block.status
        if call.has_result:
            call.result_type = block.provider_type
            call.answered_in = call.called_in
    return call


def _settle(call: ToolCall) -> None:
    """The status in words and tone, and the error message, once the result is joined.

    A block that carries call and result (an AI SDK tool part) says how it went in its state;
    a joined result, in its own status or by being there; a server item with no separate result
    (OpenAI ``web_search_call``), in the call's status. A function call's own "completed" only
    says the model finished writing it: without a result, no result was recorded."""
    state = TOOL_STATES.get(call.raw_status)
    own = TOOL_STATES.get(call.call_status)
    if call.is_error or (state and state[1] == "error"):
        call.words, call.tone = state if state and state[1] == "error" else ("failed", "error")
    elif state is not None:
        call.words, call.tone = state
    elif call.has_result:
        call.words, call.tone = "returned a result", "ok"
    elif call.action and own is not None:
        call.words, call.tone = own
    else:
        call.words, call.tone = "no result recorded", "pending"
    if call.tone == "error":
        by_path = {f.path: f for f in call.outputs if isinstance(f.value, str) and f.value}
        for path in ERROR_PATHS:
            if path in by_path:
                call.error = str(by_path[path].value)
                call.outputs = [f for f in call.outputs if f is not by_path[path]]
                break
        else:
            call.error_hidden = any(h.startswith("output:") for h in call.hidden) or not (
                call.outputs
            )


def _marker(block: Any, message: Any, *, counted: bool) -> str:
    """A content-free line in place of a block nobody is shown. The exchange's reasoning tokens
    are its whole count: said on the message's first reasoning line only (``counted``: said
    already), so two thinking blocks of one answer never read as twice the reasoning."""
    if block.redacted:
        return "reasoning redacted by provider"
    if block.block_class == "never":
        tokens = message.exchange.reasoning_tokens
        return f"reasoned · {tokens} tokens" if tokens and not counted else "reasoned"
    return f"unclassified block ({block.provider_type}), not shown"


def _pair_key(block: Any, prof: Profile | None) -> str | None:
    """What joins a result to its call: the provider's call id, or (a format pairing by order,
    and a block without an id) the tool's name."""
    if block.call_id:
        return f"id:{block.call_id}"
    if prof is not None and prof.pairing is Pairing.BY_ORDER and block.tool_name:
        return f"name:{block.tool_name}"
    return None


class _OpenCalls:
    """The calls not yet answered: by id, the latest call of that id; by tool name (a format
    pairing by order), the earliest."""

    def __init__(self) -> None:
        self._waiting: dict[str, list[ToolCall]] = {}

    def add(self, key: str, call: ToolCall) -> None:
        if key.startswith("id:"):
            self._waiting[key] = [call]
        else:
            self._waiting.setdefault(key, []).append(call)

    def take(self, key: str | None) -> ToolCall | None:
        waiting = self._waiting.get(key) if key is not None else None
        if not waiting:
            return None
        return waiting.pop(0)


def build_timeline(page: Any, *, conformance: bool = False) -> Timeline:
    """The page's turns, joined tool calls, exchange summaries and event sentences.
    ``conformance``: the viewer is a console admin, shown the backend's conformance on each
    model call (``exchanges.py``)."""
    calls: dict[str, ToolCall] = {}
    turn_of: dict[int, str] = {}
    open_calls = _OpenCalls()
    called_by: dict[str, Any] = {}  # call key -> the exchange whose answer made the call
    turns: list[Turn] = []
    for message in page.messages:
        prof = profile(message.exchange.format)
        role = (
            prof.role(message.role) if prof is not None else ROLES.get(message.role, message.role)
        )
        parts: list[Part] = []
        counted = False  # the message's reasoning tokens said on a line already
        for block in message.page_blocks:
            result = prof is not None and prof.is_result(block.provider_type)
            answered = (
                open_calls.take(_pair_key(block, prof))
                if result and block.block_class == "audit"
                else None
            )
            if block.block_class == "visible":
                parts.append(Part("text", block.text, markdown=role == "assistant"))
            elif block.block_class != "audit":
                marker = _marker(block, message, counted=counted)
                reasoning = block.block_class == "never" and not block.redacted
                # Blocks of reasoning one after another (a summary in parts, signed pieces):
                # one line, as one deliberation.
                if not (reasoning and parts and parts[-1].text.startswith("reasoned")):
                    parts.append(Part("marker", marker))
                counted = counted or reasoning
            elif answered is not None:
                call = answered
                _attach_result(call, block, message)
                call.duration_ms = _took(called_by.get(call.key), message.exchange)
            else:
                key = f"{message.sequence}-{block.position}"
                call = _new_call(block, message, key, prof)
                pair = _pair_key(block, prof)
                if result:  # its call was never stored
                    _attach_result(call, block, message)
                    call.called_in = None
                elif pair is not None and not call.has_result:
                    open_calls.add(pair, call)
                calls[key] = call
                called_by[key] = message.exchange
                parts.append(Part("tool", tool=call))
        if not parts:
            if turns:
                turn_of[message.sequence] = turns[-1].key
            continue  # only results, each shown with its call
        group = (role, message.exchange_id, message.from_response)
        if turns and turns[-1]._group == group:
            turns[-1].parts.extend(parts)
            turn_of[message.sequence] = turns[-1].key
            continue
        turn_of[message.sequence] = f"m{message.sequence}"
        turns.append(
            Turn(
                key=f"m{message.sequence}",
                role=role,
                at=_sent_at(message),
                parts=parts,
                ordinal=message.exchange.ordinal,
                _group=group,
            )
        )
    for call in calls.values():
        _settle(call)
    _place_exchanges(turns, page.exchanges, conformance=conformance)
    _mark_repeated_minutes(turns)
    events = [EventLine(ev.at, ev.type, event_sentence(ev.type, ev.value)) for ev in page.events]
    return Timeline(turns, events, calls, turn_of)


def _place_exchanges(turns: list[Turn], exchanges: Iterable[Any], *, conformance: bool) -> None:
    """Each exchange's summary beside the turn it produced; an exchange that produced no turn
    (an empty or broken answer) gets a row of its own after the turns of its request."""
    exchanges = list(exchanges)
    by_id = {e.pk: e for e in exchanges}
    placed: set[int] = set()
    for turn in turns:
        _, exchange_id, from_response = turn._group
        if from_response and turn.role != "exchange" and exchange_id not in placed:
            e = by_id.get(exchange_id)
            if e is not None:
                turn.exchange = exchange_summary(e, conformance=conformance)
                placed.add(e.pk)
    for e in exchanges:
        if e.pk in placed:
            continue
        position = len(turns)
        for i, turn in enumerate(turns):
            if turn.ordinal > e.ordinal:
                position = i
                break
        turns.insert(
            position,
            Turn(
                key=f"e{e.ordinal}",
                role="exchange",
                at=e.started_at,
                exchange=exchange_summary(e, conformance=conformance),
                ordinal=e.ordinal,
                _group=("exchange", e.pk, True),
            ),
        )


def _mark_repeated_minutes(turns: list[Turn]) -> None:
    """Seconds where minutes repeat: three turns in one minute read 14:05:02, 14:05:09... rather
    than 14:05 three times. (Zone offsets are whole minutes: the same minute in every zone.)"""
    timed = [t for t in turns if t.at is not None and t.role != "exchange"]
    for a, b in itertools.pairwise(timed):
        assert a.at is not None and b.at is not None
        if a.at.replace(second=0, microsecond=0) == b.at.replace(second=0, microsecond=0):
            a.precise = b.precise = True
