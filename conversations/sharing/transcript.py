"""A conversation as text: what an export or a share page carries, built from the one timeline.

``transcript_of`` takes the rows ``selectors.conversation_page`` fetched for the viewer (AUDIT
fields already cut to what that viewer may see, ``projection.view_fields``) and the timeline
``workspace.timeline.build_timeline`` makes of them, the very objects the conversation page
renders. From them it keeps:

- each turn's visible text (redacted at ingest, as the page shows it);
- each tool call at identifier/status level: its name (or what a server tool did), its status in
  words, the ``identifier`` and ``status`` fields it keeps, and its work note;
- the events in sentences; the backend's conversation id, the times, the zone they are given in.

Nothing else: no reasoning marker, no display/restricted field values, no error text, no model
settings. A format renders a ``Transcript``, never rows.
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
from ..workspace.timeline import build_timeline
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
    fields: list[tuple[str, str]]  # (label, value), identifier and status fields only
    note: str


@dataclass(frozen=True)
class TurnText:
    role: str
    at: str | None
    text: list[str] = field(default_factory=list)
    calls: list[CallText] = field(default_factory=list)


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
    turns: list[TurnText] = []
    for turn in timeline.turns:
        if turn.role == "exchange":
            continue  # a model call without a turn: nothing said, nothing done
        texts: list[str] = []
        calls: list[CallText] = []
        for part in turn.parts:
            if part.kind == "text" and part.text:
                texts.append(part.text)
            elif part.kind == "tool" and part.tool is not None:
                call = part.tool
                kept = [
                    (f.label, str(f.value))
                    for f in (*call.inputs, *call.outputs)
                    if f.storage_class in TRAIL_CLASSES
                ]
                calls.append(CallText(call.name, call.action, call.words, kept, call.note))
            # markers (reasoned, unclassified) are left out: an export is text only
        if texts or calls:
            turns.append(TurnText(turn.label, _time(turn.at, zone), texts, calls))
    c = page.conversation
    return Transcript(
        conversation=c.external_id,
        status=c.get_status_display(),
        zone=zone_name,
        started_at=_time(c.created_at, zone) or "",
        last_activity_at=_time(c.last_activity_at, zone) or "",
        up_to=_time(up_to, zone),
        turns=turns,
        events=[(_time(ev.at, zone) or "", ev.sentence) for ev in timeline.events],
    )


def _call_line(call: CallText) -> str:
    what = call.action or call.tool
    fields = ", ".join(f"{label} {value}" for label, value in call.fields)
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


def render_txt(t: Transcript) -> str:
    out = [*_head(t), ""]
    for turn in t.turns:
        out.append(f"[{turn.at or 'time unknown'}] {turn.role}")
        out.extend(f"  {line}" for text in turn.text for line in text.splitlines() or [""])
        out.extend(f"  * {_call_line(call)}" for call in turn.calls)
        out.append("")
    if t.events:
        out.append("What the customer did next")
        out.extend(f"  [{at}] {sentence}" for at, sentence in t.events)
    return "\n".join(out).rstrip() + "\n"


def _md(text: str) -> str:
    """Text as Markdown shows it, never as HTML: a Markdown reader renders raw HTML, so ``<``,
    ``>`` and ``&`` go as entities (an answer's ``<script>`` is shown, not run), as the page
    and the share page escape them."""
    return html.escape(text, quote=False)


def render_md(t: Transcript) -> str:
    out = [f"# Conversation {_md(t.conversation)}", ""]
    out.extend(f"- {_md(line)}" for line in _head(t)[1:])
    out.append("")
    for turn in t.turns:
        out.append(f"## {_md(turn.role)} · {_md(turn.at or 'time unknown')}")
        out.append("")
        for text in turn.text:
            out.extend([_md(text), ""])
        for call in turn.calls:
            out.append(f"- Tool: {_md(_call_line(call))}")
        if turn.calls:
            out.append("")
    if t.events:
        out.extend(["## What the customer did next", ""])
        out.extend(f"- {_md(at)}: {_md(sentence)}" for at, sentence in t.events)
    return "\n".join(out).rstrip() + "\n"


def render_json(t: Transcript) -> str:
    body: dict[str, Any] = asdict(t)
    body["turns"] = [
        {
            "role": turn.role,
            "at": turn.at,
            "text": turn.text,
            "tool_calls": [
                {
                    "tool": call.tool,
                    "action": call.action,
                    "status": call.status,
                    "fields": [{"label": k, "value": v} for k, v in call.fields],
                    "note": call.note,
                }
                for call in turn.calls
            ],
        }
        for turn in t.turns
    ]
    body["events"] = [{"at": at, "sentence": s} for at, s in t.events]
    return json.dumps(body, ensure_ascii=False, indent=2) + "\n"


RENDERERS = {"md": render_md, "txt": render_txt, "json": render_json}
assert set(RENDERERS) == set(FORMATS)


def render(t: Transcript, fmt: str) -> str:
    return RENDERERS[fmt](t)
