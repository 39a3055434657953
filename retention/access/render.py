"""The report as JSON and as Markdown (the command, the page's downloads, the package).

A renderer reads a ``Report``, never rows. Neither writes the package's transcripts or reasoning
(``package.py`` does): the report is an inventory, counts and names, never a value of the data.
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from datetime import datetime
from typing import Any

from .report import Report

_OUT_OF_REPORT = ("transcripts", "reasoning_text")


def _when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else "—"


def _plain(value: Any) -> Any:
    """JSON values of a report's parts (``dataclasses.asdict`` deep-copies every value: a third
    of the report's time for 1,000 conversations)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def report_dict(report: Report) -> dict[str, Any]:
    return {
        f.name: _plain(getattr(report, f.name))
        for f in fields(report)
        if f.name not in _OUT_OF_REPORT
    }


def render_json(report: Report) -> str:
    # One line: with ``indent`` the json module encodes in pure Python, three times slower here.
    return json.dumps(report_dict(report), ensure_ascii=False) + "\n"


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        text = _when(value) if isinstance(value, datetime) or value is None else str(value)
        return text.replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out.extend("| " + " | ".join(cell(v) for v in row) + " |" for row in rows)
    return [*out, ""] if rows else ["None.", ""]


def render_md(report: Report) -> str:
    r = report
    scope = f"conversation {r.conversation} of " if r.conversation else ""
    out = [
        f"# Subject access: {scope}customer {r.customer}",
        "",
        f"- Generated: {_when(r.generated_at)} (audit row {r.audit_id})",
        f"- Purpose: {r.purpose}",
        f"- Conversations held: {len(r.conversations)}",
        f"- Backups may restore it until: {_when(r.erasure.backup_horizon)}",
        "",
        "## Where it is held",
        "",
    ]
    out += _table(
        ["store", "where", "rows", "per storage class", "detail", "note"],
        [
            [
                s.name,
                s.where,
                s.rows,
                ", ".join(f"{k} {v}" for k, v in s.classes.items()) or "—",
                ", ".join(f"{k} {v}" for k, v in s.detail.items()) or "—",
                s.note or "—",
            ]
            for s in r.stores
        ],
    )
    g = r.reasoning_held
    out += [
        "## Reasoning held (never its text)",
        "",
        f"Held {g.where}: {g.never_blocks} reasoning blocks ({g.redacted_blocks} withheld by the "
        f"provider), {g.unknown_blocks} blocks of unclassified types.",
        "",
    ]
    out += _table(
        ["kind", "pieces", "bytes"],
        [[k, g.by_kind[k], g.bytes_by_kind[k]] for k in g.by_kind],
    )
    out += ["## Conversations", ""]
    planned = {p.conversation_id: p for p in r.erasure.planned}
    out += _table(
        ["id", "conversation", "queue", "status", "last activity", "retention", "erased on"],
        [
            [
                c.id,
                c.external_id,
                c.queue or "—",
                c.status,
                c.last_activity_at,
                f"{planned[c.id].days} days ({planned[c.id].source})",
                "held by " + ", ".join(f"hold {h}" for h in planned[c.id].held_by)
                if planned[c.id].held_by
                else _when(planned[c.id].erase_on),
            ]
            for c in r.conversations
        ],
    )
    out += ["## Who read it", ""]
    out += _table(
        ["who", "what", "times", "first", "last"],
        [[x.who, x.words, x.times, x.first, x.last] for x in r.reads],
    )
    out += ["### Reasoning reviews, with their purpose", ""]
    out += _table(
        ["who", "when", "conversation", "purpose", "statement", "reference"],
        [[x.who, x.at, x.conversation_id, x.purpose, x.statement, x.reference] for x in r.reviews],
    )
    out += ["## Who could read it now", ""]
    out += _table(
        ["who", "how", "until", "members"],
        [[x.who, x.how, x.until, "—" if x.members is None else x.members] for x in r.could_read],
    )
    out += ["## What left the console", ""]
    out += _table(
        ["what", "conversation", "by", "when", "format or state", "expires", "opened"],
        [[x.kind, x.conversation_id, x.who, x.at, x.state, x.expires_at, x.opened] for x in r.left],
    )
    e = r.erasure
    out += ["## Erasure", "", "### Legal holds in force", ""]
    out += _table(
        ["hold", "scope", "reason", "placed", "by"],
        [[h.id, h.scope, h.reason, h.placed_at, h.placed_by] for h in e.holds],
    )
    out += ["### Open deletion requests", ""]
    out += _table(
        ["request", "scope", "status", "reason", "requested", "due", "blocked"],
        [
            [q.id, q.scope, q.status, q.reason, q.requested_at, q.due, q.blocked_reason or "—"]
            for q in e.open_requests
        ],
    )
    out += ["### Erased already (receipts)", ""]
    out += _table(
        ["request", "issued", "conversations", "keys destroyed", "rows", "backups until"],
        [
            [x.request, x.issued_at, x.conversations, x.keys_destroyed, x.rows, x.backup_horizon]
            for x in e.receipts
        ],
    )
    out += [
        "Tombstones (keyed hashes only, so late exchanges are refused): "
        + ", ".join(f"{k} {v}" for k, v in e.tombstones.items()),
        "",
    ]
    return "\n".join(out).rstrip() + "\n"


RENDERERS = {"json": render_json, "md": render_md}
