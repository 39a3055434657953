"""A conversation as text: what an export or a share page carries, built from the one timeline.

``transcript_of`` takes the rows ``selectors.conversation_page`` fetched for the viewer (AUDIT
fields already cut to what that viewer may see, ``projection.view_fields``) and the timeline
``workspace.timeline.build_timeline`` makes of them, the very objects the conversation page
renders. From them it keeps:

- each turn's visible text (redacted at ingest, as the page shows it);
- each tool call at identifier/status level: its name (or what a server tool did), its status in
  words, the ``identifier`` and ``status`` fields it keeps, and its work note;
- the events in sentences; the backend's conversation id, the times, the zone they are given in.

"Started" is the first message's time (as the page shows it), not when the console stored the
conversation: a conversation imported later still started when its customer wrote. Each field of
the trail says whether it was the call's input or its result ("order id ORD-1 (input)").

Nothing else: no reasoning marker, no display/restricted field values, no error text, no model
settings. A format renders a ``Transcript``, never rows.

A conversation that branched (``conversations/branches.py``) is exported whole: the latest path
(what the customer saw last), then each other branch from where it leaves it ("regenerated at
message 4"), when the page was read with ``every_branch`` (exports and subject access are; a
share link carries the path it was made on).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from ..projection.classes import IDENTIFIER, STATUS
from ..selectors import ConversationPage
from ..workspace.timeline import Timeline, build_timeline
from .notes import annotate

FORMATS = ("md", "txt", "json")
CONTENT_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "json": "application/json; charset=utf-8",
}
TRAIL_CLASSES = frozenset({IDENTIFIER, STATUS})


@dataclass(frozen=True)
class CallText:
    tool: str
    action: str | None
    status: str
    fields: list[tuple[str, str, str]]  # (label, value, "input" | "result"): identifier, status
    note: str


@dataclass(frozen=True)
class TurnText:
    role: str
    at: str | None
    text: list[str] = field(default_factory=list)
    calls: list[CallText] = field(default_factory=list)
    kind: str = ""  # customer | assistant | ...: the share page styles turns as the page does


@dataclass(frozen=True)
class BranchText:
    """Another branch: where it leaves the latest path, in words, and its turns from there."""

    where: str
    turns: list[TurnText]


@dataclass(frozen=True)
class Transcript:
    conversation: str  # the chat backend's conversation id
    status: str
    zone: str
    started_at: str
    last_activity_at: str
    up_to: str | None  # a share link's moment; None: everything stored
    turns: list[TurnText]
    events: list[tuple[str, str]]
    branches: list[BranchText] = field(default_factory=list)


def page_up_to(page: ConversationPage, *, sequence: int, at: datetime) -> ConversationPage:
    """The page as it stood when message ``sequence`` was the last: later messages, their
    exchanges and later events left out (a share link's boundary)."""
    messages = [m for m in page.messages if m.sequence <= sequence]
    ordinals = {m.exchange.ordinal for m in messages}
    last = max(ordinals, default=0)
    exchanges = [e for e in page.exchanges if e.ordinal <= last]
    events = [ev for ev in page.events if ev.at <= at]
    return ConversationPage(page.conversation, exchanges, messages, events)


def _time(value: datetime | None, zone: tzinfo) -> str | None:
    return value.astimezone(zone).isoformat(timespec="seconds") if value else None


def transcript_of(
    page: ConversationPage,
    *,
    zone: tzinfo,
    zone_name: str,
    templates: Mapping[str, str],
    up_to: datetime | None = None,
) -> Transcript:
    timeline = build_timeline(page)
    annotate(timeline.calls.values(), templates)
    turns = _turn_texts(timeline, zone)
    branches = []
    for other in page.others:
        own = build_timeline(other.page)
        annotate(own.calls.values(), templates)
        after = {m.sequence for m in other.page.messages[other.at :]}
        where = other.words or f"another branch from message {other.at + 1}"
        branches.append(BranchText(where, _turn_texts(own, zone, after)))
    c = page.conversation
    first = min((t.at for t in timeline.turns if t.at is not None), default=None)
    return Transcript(
        conversation=c.external_id,
        status=c.get_status_display(),
        zone=zone_name,
        started_at=_time(first or c.created_at, zone) or "",
        last_activity_at=_time(c.last_activity_at, zone) or "",
        up_to=_time(up_to, zone),
        turns=turns,
        events=[(_time(ev.at, zone) or "", ev.sentence) for ev in timeline.events],
        branches=branches,
    )


def _turn_texts(timeline: Timeline, zone: tzinfo, only: set[int] | None = None) -> list[TurnText]:
    """The turns as text (``only``: the turns whose first message is one of these sequence
    numbers: a branch's own turns)."""
    turns: list[TurnText] = []
    for turn in timeline.turns:
        if turn.role == "exchange":
            continue  # a model call without a turn: nothing said, nothing done
        if only is not None and int(turn.key.removeprefix("m")) not in only:
            continue
        texts: list[str] = []
        calls: list[CallText] = []
        for part in turn.parts:
            if part.kind == "text" and part.text:
                texts.append(part.text)
            elif part.kind == "tool" and part.tool is not None:
                call = part.tool
                kept = [
                    (f.label, str(f.value), "input" if f.side == "input" else "result")
                    for f in (*call.inputs, *call.outputs)
                    if f.storage_class in TRAIL_CLASSES
                ]
                calls.append(CallText(call.name, call.action, call.words, kept, call.note))
            # markers (reasoned, unclassified) are left out: an export is text only
        if texts or calls:
            turns.append(TurnText(turn.label, _time(turn.at, zone), texts, calls, turn.role))
    return turns


def _call_line(call: CallText) -> str:
    what = call.action or call.tool
    fields = ", ".join(f"{label} {value} ({side})" for label, value, side in call.fields)
    line = f"{what}{f' ({fields})' if fields else ''} → {call.status}"
    return f"{line} · {call.note}" if call.note else line


def _head(t: Transcript) -> list[str]:
    lines = [
        f"Conversation: {t.conversation}",
        f"Status: {t.status}",
        f"Started: {t.started_at}",
        f"Last activity: {t.last_activity_at}",
        f"Times in: {t.zone}",
    ]
    if t.up_to:
        lines.append(f"Shared as it stood at: {t.up_to}")
    return lines


def _txt_turns(turns: list[TurnText]) -> list[str]:
    out = []
    for turn in turns:
        out.append(f"[{turn.at or 'time unknown'}] {turn.role}")
        out.extend(f"  {line}" for text in turn.text for line in text.splitlines() or [""])
        out.extend(f"  * {_call_line(call)}" for call in turn.calls)
        out.append("")
    return out


def render_txt(t: Transcript) -> str:
    out = [*_head(t), "", *_txt_turns(t.turns)]
    for branch in t.branches:
        out.extend([f"Another branch: {branch.where}", "", *_txt_turns(branch.turns)])
    if t.events:
        out.append("What the customer did next")
        out.extend(f"  [{at}] {sentence}" for at, sentence in t.events)
    return "\n".join(out).rstrip() + "\n"


def _md(text: str) -> str:
    """Text as Markdown shows it, never as HTML: a Markdown reader renders raw HTML, so ``<``,
    ``>`` and ``&`` go as entities (an answer's ``<script>`` is shown, not run), as the page
    and the share page escape them."""
    return html.escape(text, quote=False)


def _md_turns(turns: list[TurnText], level: str) -> list[str]:
    out = []
    for turn in turns:
        out.append(f"{level} {_md(turn.role)} · {_md(turn.at or 'time unknown')}")
        out.append("")
        for text in turn.text:
            out.extend([_md(text), ""])
        for call in turn.calls:
            out.append(f"- Tool: {_md(_call_line(call))}")
        if turn.calls:
            out.append("")
    return out


def render_md(t: Transcript) -> str:
    out = [f"# Conversation {_md(t.conversation)}", ""]
    out.extend(f"- {_md(line)}" for line in _head(t)[1:])
    out.append("")
    out.extend(_md_turns(t.turns, "##"))
    for branch in t.branches:
        out.extend([f"## Another branch: {_md(branch.where)}", "", *_md_turns(branch.turns, "###")])
    if t.events:
        out.extend(["## What the customer did next", ""])
        out.extend(f"- {_md(at)}: {_md(sentence)}" for at, sentence in t.events)
    return "\n".join(out).rstrip() + "\n"


def _json_turns(turns: list[TurnText]) -> list[dict[str, Any]]:
    return [
        {
            "role": turn.role,
            "kind": turn.kind,
            "at": turn.at,
            "text": turn.text,
            "tool_calls": [
                {
                    "tool": call.tool,
                    "action": call.action,
                    "status": call.status,
                    "fields": [
                        {"label": k, "value": v, "side": side} for k, v, side in call.fields
                    ],
                    "note": call.note,
                }
                for call in turn.calls
            ],
        }
        for turn in turns
    ]


def render_json(t: Transcript) -> str:
    body: dict[str, Any] = asdict(t)
    body["turns"] = _json_turns(t.turns)
    body["branches"] = [{"where": b.where, "turns": _json_turns(b.turns)} for b in t.branches]
    body["events"] = [{"at": at, "sentence": s} for at, s in t.events]
    return json.dumps(body, ensure_ascii=False, indent=2) + "\n"


RENDERERS = {"md": render_md, "txt": render_txt, "json": render_json}
assert set(RENDERERS) == set(FORMATS)


def render(t: Transcript, fmt: str) -> str:
    return RENDERERS[fmt](t)
