"""The inbound filter: raw SSE text of a provider stream in, visible events out (DESIGN section 10).

One filter per format, fed chunks of raw SSE text cut anywhere (mid-event, mid-line). Each keeps
the map the stored accumulator keeps: which block an index (an output index, a part id, a
choice's key) opened, and of which type; the type comes from the event that opens the block,
never from a delta's shape, and its class from ``blocks.classify``, the one classification the
stored formats declare. The event names and delta tables are the format modules' own
(``anthropic._STRING_DELTAS``, ``openai_responses._Stream.HANDLERS``,
``openai_chat._STRING_DELTAS``, ``ai_sdk._HANDLERS``), so a delta the stored accumulator would
not put in a block's text is not published either. The SSE framing is ``formats/sse.py``'s: the
complete events of the text so far go through ``iter_events``, the rest waits.

Events (plain dicts, JSON):

- ``{"type": "text", "block": key, "text": ...}``: visible text, redacted, held back
  (``holdback.py``) so a finding cut across deltas is never published in part;
- ``{"type": "thinking", "state": "started" | "progress" | "stopped", "block": key,
  "seconds": s, "tokens": n}``: the model deliberates; only its duration and a token estimate
  (characters / 4) leave, never a character of it;
- ``{"type": "tool", "state": "started", "block": key, "name": ...}`` and
  ``{"type": "tool", "state": "result", "block": key, "status": "ok" | "error" | "denied"}``;
- ``{"type": "reset"}``: the provider spliced a new generation in (a second ``message_start``):
  what was shown of this exchange is void;
- ``{"type": "finished", "reason": ...}``, ``{"type": "error", "code": ...}``.

The state is a JSON value in two parts: ``public`` (types, classes, counts, times: what
``live/state.py`` may keep in Redis as it is) and ``secret`` (the SSE text not yet framed, the
visible text held back: kept only encrypted). Thinking text is in neither once its event is read:
only its length is counted.

To add a format: a subclass of ``Filter`` with ``format`` and ``event(data)`` reading one event's
JSON, registered in ``FILTERS``; its tests run every recorded stream of the format
(``tests/live/test_filters.py``) and ``static/console/stream-filter.js`` gets the same rules.

Pure: no Django, no Redis.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from ...blocks import BlockClass, classify
from ...formats.sse import iter_events
from .. import holdback

Event = dict[str, Any]

# A blank line ends an SSE event; a CR at the very end may be the first half of a CRLF.
_EVENT_END = re.compile(r"(?:\r\n|\r(?!$)|\n)(?:\r\n|\r(?!$)|\n)")
# Thinking progress is published each time the estimate grows by this many tokens.
PROGRESS_TOKENS = 50


def _tokens(chars: int) -> int:
    return (chars + 3) // 4


class Filter:
    format: ClassVar[str]

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.public: dict[str, Any] = state.get("public") or {
            "blocks": {},  # key -> {"type", "cls", "chars", "t0", "done", "name"?}
            "order": 0,  # counter for keys a format does not give
            "finished": False,
            "reason": None,
            "first_text": None,  # seconds from the first chunk to the first visible text
            "thinking_seconds": 0.0,
            "t0": None,
        }
        self.secret: dict[str, Any] = state.get("secret") or {"tail": "", "pending": {}}
        self._now = 0.0
        self._out: list[Event] = []

    def state(self) -> dict[str, Any]:
        return {"public": self.public, "secret": self.secret}

    # -- input --

    def feed(self, chunk: str, *, now: float) -> list[Event]:
        """The visible events of the raw SSE text ``chunk`` (which continues the text before)."""
        self._now = now
        self._out = []
        if self.public["t0"] is None:
            self.public["t0"] = now
        text = self.secret["tail"] + chunk
        end = 0
        for m in _EVENT_END.finditer(text):
            end = m.end()
        self.secret["tail"] = text[end:]
        if end:
            for sse in iter_events(text[:end]):
                if self.public["finished"]:
                    break
                self._data(sse.data)
        return self._out

    def close(self, *, now: float) -> list[Event]:
        """The end of the stream (the exchange arrived, or it went idle): what was held leaves,
        open thinking stops, the tail (an event cut off) is dropped unread."""
        self._now = now
        self._out = []
        if self.secret["tail"].strip() and not self.public["finished"]:
            for sse in iter_events(self.secret["tail"]):
                self._data(sse.data)  # a last event without its blank line
        self.secret["tail"] = ""
        self._end_all()
        return self._out

    def _data(self, data: str) -> None:
        if data.strip() == "[DONE]":
            self._finish(self.public["reason"] or "stop")
            return
        try:
            value = json.loads(data)
        except ValueError:
            return  # not JSON: the stored exchange will say why; nothing to show
        if isinstance(value, dict):
            self.event(value)

    def event(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- what the formats call --

    def _key(self) -> str:
        self.public["order"] += 1
        return f"k{self.public['order']}"

    def open(self, key: str, btype: str, *, name: str | None = None) -> None:
        blocks = self.public["blocks"]
        if key in blocks and not blocks[key]["done"]:
            return
        cls = classify(self.format, btype)
        blocks[key] = {"type": btype, "cls": cls.value, "chars": 0, "t0": self._now, "done": False}
        if cls is BlockClass.NEVER or cls is BlockClass.UNKNOWN:
            if cls is BlockClass.NEVER:
                self._emit(type="thinking", state="started", block=key, seconds=0.0, tokens=0)
        elif cls is BlockClass.AUDIT:
            blocks[key]["name"] = name
            self._emit(type="tool", state="started", block=key, name=name or btype)

    def cls(self, key: str) -> BlockClass | None:
        block = self.public["blocks"].get(key)
        return None if block is None or block["done"] else BlockClass(block["cls"])

    def text(self, key: str, piece: str) -> None:
        """A piece of the text of block ``key``: published only if the block is VISIBLE."""
        if self.cls(key) is not BlockClass.VISIBLE or not piece:
            return
        pending = self.secret["pending"]
        published, pending[key] = holdback.hold(pending.get(key, ""), piece)
        self._publish(key, published)

    def count(self, key: str, piece: str) -> None:
        """A piece of the text of a NEVER block: counted, and forgotten."""
        block = self.public["blocks"].get(key)
        if block is None or block["done"] or block["cls"] != BlockClass.NEVER.value:
            return
        before = _tokens(block["chars"]) // PROGRESS_TOKENS
        block["chars"] += len(piece)
        if _tokens(block["chars"]) // PROGRESS_TOKENS > before:
            self._emit(
                type="thinking",
                state="progress",
                block=key,
                seconds=self._seconds(block),
                tokens=_tokens(block["chars"]),
            )

    def end(self, key: str, *, status: str | None = None) -> None:
        block = self.public["blocks"].get(key)
        if block is None or block["done"]:
            return
        block["done"] = True
        cls = BlockClass(block["cls"])
        if cls is BlockClass.VISIBLE:
            self._publish(key, holdback.flush(self.secret["pending"].pop(key, "")))
        elif cls is BlockClass.NEVER:
            seconds = self._seconds(block)
            self.public["thinking_seconds"] = round(self.public["thinking_seconds"] + seconds, 3)
            self._emit(
                type="thinking",
                state="stopped",
                block=key,
                seconds=seconds,
                tokens=_tokens(block["chars"]),
            )
        elif cls is BlockClass.AUDIT and status is not None:
            self._emit(type="tool", state="result", block=key, status=status)

    def result(self, key: str, status: str) -> None:
        """A tool's result arrived for the call opened as ``key`` (a block of its own or not)."""
        block = self.public["blocks"].get(key)
        if block is not None and block["cls"] == BlockClass.AUDIT.value:
            block["done"] = True
            self._emit(type="tool", state="result", block=key, status=status)

    def reset(self) -> None:
        self.public["blocks"] = {}
        self.secret["pending"] = {}
        self._emit(type="reset")

    def _finish(self, reason: str | None) -> None:
        if self.public["finished"]:
            return
        self._end_all()
        self.public["finished"] = True
        self._emit(type="finished", reason=reason or "stop")

    def _error(self, code: str) -> None:
        if self.public["finished"]:
            return
        self._end_all()
        self.public["finished"] = True
        self._emit(type="error", code=code)

    def _end_all(self) -> None:
        for key in list(self.public["blocks"]):
            self.end(key)

    # -- output --

    def _seconds(self, block: dict[str, Any]) -> float:
        return round(max(0.0, self._now - block["t0"]), 3)

    def _publish(self, key: str, text: str) -> None:
        if not text:
            return
        if self.public["first_text"] is None:
            self.public["first_text"] = round(self._now - self.public["t0"], 3)
        self._emit(type="text", block=key, text=text)

    def _emit(self, **event: Any) -> None:
        self._out.append(event)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
