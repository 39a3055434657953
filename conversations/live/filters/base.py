"""The inbound filter: raw SSE text of a provider stream in, visible events out (DESIGN section 10).

``Filter`` is the engine every format shares, fed chunks of raw SSE text cut anywhere
(mid-event, mid-line): the SSE framing (``formats/sse.py``'s: the complete events of the text so
far go through ``iter_events``, the rest waits), one JSON decode per event (``_data``: the one
place a live event's text is decoded), the block map, the hold-back and redaction of visible
text, and the events published. What one event of a format means is the format's own live
filter (``formats/<name>/live.py``, a ``formats.live.LiveFilter`` in the registry): the map the
stored accumulator keeps, which block an index (an output index, a part id, a choice's key)
opened and of which type; the type comes from the event that opens the block, never from a
delta's shape, and its class from ``blocks.classify``, the one classification the stored
formats declare. A visible block of a type the format's profile names in ``inline`` is read
through ``formats.live.InlineSplit``: a ``<think>`` span at its start is counted as thinking,
never published.

Events (plain dicts, JSON):

- ``{"type": "text", "block": key, "text": ...}``: visible text, redacted, held back
  (``holdback.py``) so a finding cut across deltas is never published in part;
- ``{"type": "thinking", "state": "started" | "progress" | "stopped", "block": key,
  "seconds": s, "tokens": n}``: the model deliberates; only its duration and a token estimate
  (characters / 4) leave, never a character of it;
- ``{"type": "tool", "state": "started", "block": key, "name": ...}`` (with ``"result": true``
  when the block answers a call: the profile's ``result_types``) and
  ``{"type": "tool", "state": "result", "block": key, "status": "ok" | "error" | "denied"}``;
- ``{"type": "reset"}``: the provider spliced a new generation in (a second ``message_start``):
  what was shown of this exchange is void;
- ``{"type": "finished", "reason": ...}``, ``{"type": "error", "code": ...}``.

The state is a JSON value in two parts: ``public`` (types, classes, counts, times: what
``live/state.py`` may keep in Redis as it is) and ``secret`` (the SSE text not yet framed, the
visible text held back: kept only encrypted). Thinking text is in neither once its event is read:
only its length is counted.

To add a format: its package's ``live.py`` (the registry refuses a format without one); its
tests run every recorded stream of the format (``tests/live/test_filters.py``) and
``static/console/stream-filter.js`` gets the same rules (its class table is checked against the
registry).

Pure: no Django, no Redis.
"""

from __future__ import annotations

import re
from typing import Any

from ...blocks import BlockClass, classify
from ...formats.base import FormatError, loads
from ...formats.live import InlineSplit, LiveFilter
from ...formats.profile import Inline
from ...formats.registry import profile
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
    """One exchange's filter: ``reader`` (the format's live filter) says what each event means,
    this engine keeps the state and publishes (it is the ``formats.live.LiveOps`` the reader
    calls)."""

    def __init__(
        self,
        reader: LiveFilter,
        state: dict[str, Any] | None = None,
        *,
        inline: Inline | None = None,
    ) -> None:
        self.reader = reader
        self.format = reader.format
        self.inline = inline
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

    def ends_event(self, text: str) -> bool:
        """Whether ``text`` holds the end of an SSE event (a blank line): the caller need not
        read the text before it (``services._Exchange``) when the last characters before the new
        text are part of ``text``. A binary stream's frames say their length in their first
        bytes: every chunk may end one."""
        return self.reader.binary or _EVENT_END.search(text) is not None

    def feed(self, chunk: str, *, now: float) -> list[Event]:
        """The visible events of the raw SSE text ``chunk`` (which continues the text before).
        An event nested deeper than the JSON decoder reads raises ``FormatError`` (``too_deep``):
        the caller keeps none of this feed's state. For a binary stream ``chunk`` is its bytes
        as Latin-1 text (one character a byte: ``live/body.py``), framed by the format."""
        self._now = now
        self._out = []
        if self.public["t0"] is None:
            self.public["t0"] = now
        if self.reader.binary:
            self._feed_binary(chunk)
            return self._out
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

    def _feed_binary(self, chunk: str) -> None:
        data = (self.secret["tail"] + chunk).encode("latin-1")
        try:
            events, used = self.reader.frames(data)
        except FormatError as exc:
            if exc.code == "too_deep":
                raise
            self.secret["tail"] = ""
            self.error("bad_frame")  # the stored exchange will say where
            return
        self.secret["tail"] = data[used:].decode("latin-1")
        for value in events:
            if self.public["finished"]:
                break
            try:
                self.reader.event(self, value)
            except RecursionError:
                raise FormatError("JSON nested too deep", field="chunk", code="too_deep") from None

    def close(self, *, now: float) -> list[Event]:
        """The end of the stream (the exchange arrived, or it went idle): what was held leaves,
        open thinking stops, the tail (an event cut off) is dropped unread."""
        self._now = now
        self._out = []
        if self.secret["tail"].strip() and not self.public["finished"] and not self.reader.binary:
            for sse in iter_events(self.secret["tail"]):
                self._data(sse.data)  # a last event without its blank line
        self.secret["tail"] = ""
        self._end_all()
        return self._out

    def _data(self, data: str) -> None:
        if data.strip() == "[DONE]":
            self.finish(self.public["reason"] or "stop")
            return
        try:
            # The ingest body's decoder: a value nested deeper than it reads is ``too_deep``.
            value = loads(data, field="chunk")
        except FormatError as exc:
            if exc.code == "too_deep":
                raise
            return  # not JSON: the stored exchange will say why; nothing to show
        if isinstance(value, dict):
            try:
                self.reader.event(self, value)
            except RecursionError:
                raise FormatError("JSON nested too deep", field="chunk", code="too_deep") from None

    # -- what the formats call (formats.live.LiveOps) --

    def key(self) -> str:
        self.public["order"] += 1
        return f"k{self.public['order']}"

    def open(self, key: str, btype: str, *, name: str | None = None) -> None:
        blocks = self.public["blocks"]
        if key in blocks and not blocks[key]["done"]:
            return
        cls = classify(self.format, btype)
        blocks[key] = {"type": btype, "cls": cls.value, "chars": 0, "t0": self._now, "done": False}
        inline = self.inline
        if cls is BlockClass.VISIBLE and inline is not None and btype in inline.block_types:
            blocks[key]["inline"] = InlineSplit(inline).state()
        if cls is BlockClass.NEVER or cls is BlockClass.UNKNOWN:
            if cls is BlockClass.NEVER:
                self._emit(type="thinking", state="started", block=key, seconds=0.0, tokens=0)
        elif cls is BlockClass.AUDIT:
            blocks[key]["name"] = name
            prof = profile(self.format)
            if prof is not None and prof.is_result(btype):
                # A result's own block: the call it answers is already listed.
                self._emit(type="tool", state="started", block=key, name=name or btype, result=True)
            else:
                self._emit(type="tool", state="started", block=key, name=name or btype)

    def cls(self, key: str) -> BlockClass | None:
        block = self.public["blocks"].get(key)
        return None if block is None or block["done"] else BlockClass(block["cls"])

    def text(self, key: str, piece: str) -> None:
        """A piece of the text of block ``key``: published only if the block is VISIBLE."""
        if self.cls(key) is not BlockClass.VISIBLE or not piece:
            return
        split = self._inline(key)
        if split is not None:
            piece = self._split(key, split, piece)
            if not piece:
                return
        pending = self.secret["pending"]
        published, pending[key] = holdback.hold(pending.get(key, ""), piece)
        self._publish(key, published)

    def _inline(self, key: str) -> InlineSplit | None:
        state = self.public["blocks"][key].get("inline")
        return None if state is None or self.inline is None else InlineSplit(self.inline, state)

    def _split(self, key: str, split: InlineSplit, piece: str) -> str:
        """A piece of a block that may open with an inline span: the span counted as thinking
        (a block of its own, ``<key>.think``), the visible rest returned."""
        assert self.inline is not None
        visible, hidden = split.feed(piece)
        span = f"{key}.{self.inline.never_type}"
        if hidden:
            self.open(span, self.inline.never_type)
            self._count(span, hidden)
        if not split.hiding:
            self.end(span)
        return visible

    def count(self, key: str, piece: str) -> None:
        """A piece of the text of a NEVER block: counted, and forgotten."""
        self._count(key, len(piece))

    def _count(self, key: str, chars: int) -> None:
        block = self.public["blocks"].get(key)
        if block is None or block["done"] or block["cls"] != BlockClass.NEVER.value:
            return
        before = _tokens(block["chars"]) // PROGRESS_TOKENS
        block["chars"] += chars
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
            split = self._inline(key)
            held = ""
            if split is not None:
                held = split.close()  # whitespace or a tag that never was one: text after all
                self.end(f"{key}.{split.inline.never_type}")
            pending = self.secret["pending"].pop(key, "")
            if held:
                published, pending = holdback.hold(pending, held)
                self._publish(key, published)
            self._publish(key, holdback.flush(pending))
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

    def finish(self, reason: str | None) -> None:
        if self.public["finished"]:
            return
        self._end_all()
        self.public["finished"] = True
        self._emit(type="finished", reason=reason or "stop")

    def error(self, code: str) -> None:
        if self.public["finished"]:
            return
        self._end_all()
        self.public["finished"] = True
        self._emit(type="error", code=code)

    def _end_all(self) -> None:
        for key in list(self.public["blocks"]):
            self.end(key)

    # -- output --

    def take(self) -> list[Event]:
        """The events emitted since the last feed (after a call such as ``error``)."""
        out, self._out = self._out, []
        return out

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
