"""The live filter of ``bedrock.converse`` (``formats/live.py`` says what a live filter is).

The stream is binary: ``frames`` decodes the complete frames at the start of the bytes received
so far (``eventstream.read_frames``, CRCs checked) into ``{<event type>: <payload>}``, and an
exception or error frame into ``{":exception": <its type>}``; ``event`` reads one. Text deltas
are shown; reasoning deltas are counted (the thinking indicator) and forgotten, their
signatures and redacted content never read; a tool call is shown by name when its block starts.
"""

from __future__ import annotations

from typing import Any

from ..base import FormatError
from ..live import LiveFilter, LiveOps, as_int, as_str
from .eventstream import read_frames
from .profile import FORMAT
from .stream import DELTA_BLOCK, member

EXCEPTION = ":exception"


class BedrockLive(LiveFilter):
    format = FORMAT
    browser = "BedrockFilter"
    binary = True

    def frames(self, data: bytes) -> tuple[list[dict[str, Any]], int]:
        frames, used = read_frames(data, field="chunk", partial=True)
        out: list[dict[str, Any]] = []
        for frame in frames:
            if frame.kind != "event":
                out.append({EXCEPTION: frame.name})
                continue
            try:
                out.append(frame.data(field="chunk"))
            except FormatError as exc:
                if exc.code == "too_deep":
                    raise
                # not JSON: the stored exchange will say why; nothing to show
        return out, used

    def event(self, out: LiveOps, data: dict[str, Any]) -> None:
        if EXCEPTION in data:
            out.error(as_str(data[EXCEPTION]) or "exception")
            return
        name = member(data)
        body = data.get(name)
        if not isinstance(body, dict):
            return
        index = as_int(body.get("contentBlockIndex"))
        key = str(index)
        if name == "contentBlockStart" and index is not None:
            start = body.get("start")
            kind = member(start) if isinstance(start, dict) else ""
            value = start.get(kind) if isinstance(start, dict) else None
            value = value if isinstance(value, dict) else {}
            if not kind:
                return  # an empty start (before a text block): its first delta says the type
            out.open(key, kind, name=as_str(value.get("name")))
            if kind == "toolResult":  # a result the provider ran: its status at once
                out.end(key, status="error" if value.get("status") == "error" else "ok")
        elif name == "contentBlockDelta" and index is not None:
            delta = body.get("delta")
            kind = member(delta) if isinstance(delta, dict) else ""
            if kind not in DELTA_BLOCK or not isinstance(delta, dict):
                return
            if key not in out.public["blocks"]:
                out.open(key, DELTA_BLOCK[kind])
            if kind == "text":
                out.text(key, as_str(delta["text"]) or "")
            elif kind == "reasoningContent" and isinstance(delta[kind], dict):
                out.count(key, as_str(delta[kind].get("text")) or "")
        elif name == "contentBlockStop" and index is not None:
            out.end(key)
        elif name == "messageStop":
            out.finish(as_str(body.get("stopReason")))
