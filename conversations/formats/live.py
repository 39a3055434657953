"""What a format's live filter is (DESIGN section 10): one provider stream event in, what it
means for a viewer out, through the operations of ``LiveOps``.

Each format package has a ``live.py`` with a subclass of ``LiveFilter``: ``event(out, data)``
reads one event's JSON and calls ``out.open`` (a block starts: its key and its provider type,
whose class comes from the format's own classification), ``out.text`` / ``out.count`` (a piece
of a block's text: shown if VISIBLE, counted and forgotten if NEVER), ``out.end``,
``out.result``, ``out.reset``, ``out.finish`` and ``out.error``. The type of a block comes from
the event that opens it, never from a delta's shape; the event names and delta tables are the
parser's own, so a delta the stored accumulator would not put in a block's text is not shown
either.

The engine behind ``LiveOps`` (SSE framing, one JSON decode per event, the hold-back and
redaction of visible text, the state kept in Redis) is ``conversations/live/``: it is shared
by every format, and none of it is here. A filter keeps what it needs between events in
``out.public`` (types, ids, counts: never text), because the engine's state is all that
survives between two chunks.

``InlineSplit`` is the one reader of an inline convention (``profile.Inline``: ``<think>`` at a
block's start), used by the live filters piece by piece and by the parsers on whole text.

Pure: no Django, no Redis.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import Any, ClassVar, Protocol

from .profile import Inline
from .traces import Trace, TraceKind


class LiveOps(Protocol):
    """What a format's live filter may do (implemented by ``conversations.live``'s engine)."""

    @property
    def public(self) -> dict[str, Any]: ...

    def key(self) -> str: ...

    def open(self, key: str, btype: str, *, name: str | None = None) -> None: ...

    def text(self, key: str, piece: str) -> None: ...

    def count(self, key: str, piece: str) -> None: ...

    def end(self, key: str, *, status: str | None = None) -> None: ...

    def result(self, key: str, status: str) -> None: ...

    def reset(self) -> None: ...

    def finish(self, reason: str | None) -> None: ...

    def error(self, code: str) -> None: ...


class LiveFilter(abc.ABC):
    """A format's live filter: stateless itself (its state is ``out.public``). ``browser``
    names the class of ``static/console/stream-filter.js`` that is the same filter in the
    browser (hand-written beside the others; the generated table maps the format to it)."""

    format: ClassVar[str]
    browser: ClassVar[str] = ""

    @abc.abstractmethod
    def event(self, out: LiveOps, data: dict[str, Any]) -> None:
        """One event's JSON (an object), in stream order."""


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- inline deliberation -----------------------------------------------------------------------

_WS = " \t\n\r"


def split_inline(text: str, inline: Inline) -> tuple[int | None, str]:
    """A whole block's text read by ``inline``: ``(None, text)`` when it does not open with the
    tag; else ``(span characters, visible text)``, the span being everything from the opening
    tag to the closing one (or to the end, when it never closes) and the visible text what
    follows, its leading whitespace dropped. A text that is only the opening tag's beginning
    (``<th``: a stream cut inside the tag) is a span too: nothing of it is shown."""
    start = len(text) - len(text.lstrip(_WS))
    if not text.startswith(inline.open, start):
        if start < len(text) and inline.open.startswith(text[start:]):
            return len(text) - start, ""  # the tag itself cut off: a span that never began
        return None, text
    body = start + len(inline.open)
    close = text.find(inline.close, body)
    if close < 0:
        return len(text) - start, ""
    after = close + len(inline.close)
    return after - start, text[after:].lstrip(_WS)


def inline_traces(content: Any, inline: Inline, kind: TraceKind) -> Iterator[Trace]:
    """The inline spans of a stored message's content (a string, or parts with ``text``), as
    the review reads them: the text between the tags."""
    texts = [content] if isinstance(content, str) else []
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict)]
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    for text in texts:
        span, _ = split_inline(text, inline)
        if span:
            start = len(text) - len(text.lstrip(_WS))
            inner = text[start : start + span].removeprefix(inline.open).removesuffix(inline.close)
            if inner.strip():
                yield Trace(kind, inner)


class InlineSplit:
    """``split_inline`` piece by piece, a tag cut anywhere across pieces. Its state is numbers
    and whitespace only (``state()``), never a character of the deliberation: where the
    opening tag is matched so far, then where the closing one is, then whether the visible text
    has begun.

    ``feed(piece)`` returns ``(visible, hidden)``: the visible text to show now and the number
    of deliberation characters read. ``close()`` returns what was held back at the block's end
    (whitespace alone is visible text after all; a tag cut off is not)."""

    START, INSIDE, AFTER, VISIBLE = "start", "inside", "after", "visible"

    def __init__(self, inline: Inline, state: dict[str, Any] | None = None) -> None:
        self.inline = inline
        self.s: dict[str, Any] = {"at": self.START, "ws": "", "m": 0} if state is None else state

    def state(self) -> dict[str, Any]:
        return self.s

    def feed(self, piece: str) -> tuple[str, int]:
        s, visible, hidden = self.s, [], 0
        i, n = 0, len(piece)
        while i < n:
            if s["at"] == self.VISIBLE:
                visible.append(piece[i:])
                break
            c = piece[i]
            if s["at"] == self.START:
                tag = self.inline.open
                if s["m"] == 0 and c in _WS:
                    s["ws"] += c
                elif c == tag[s["m"]]:
                    s["m"] += 1
                    if s["m"] == len(tag):
                        s.update(at=self.INSIDE, ws="", m=0)
                        hidden += len(tag)
                else:  # not the tag: what was held is text after all
                    visible.append(s["ws"] + tag[: s["m"]])
                    s.update(at=self.VISIBLE, ws="", m=0)
                    continue  # this character again, as visible text
            elif s["at"] == self.INSIDE:
                hidden += 1
                s["m"] = _advance(self.inline.close, s["m"], c)
                if s["m"] == len(self.inline.close):
                    s.update(at=self.AFTER, m=0)
            elif s["at"] == self.AFTER and c not in _WS:
                s["at"] = self.VISIBLE
                continue
            i += 1
        return "".join(visible), hidden

    def close(self) -> str:
        s = self.s
        # Whitespace alone was text; a tag cut off before its end was a span that never began.
        held = s["ws"] if s["at"] == self.START and s["m"] == 0 else ""
        s.update(ws="", m=0)
        return held

    @property
    def hiding(self) -> bool:
        """Inside the span: the pieces read now are deliberation."""
        return bool(self.s["at"] == self.INSIDE)


def _advance(tag: str, matched: int, c: str) -> int:
    """How much of ``tag`` is matched after ``c``, ``matched`` characters having been (the
    longest prefix of the tag that ends here: a plain prefix automaton)."""
    text = tag[:matched] + c
    for k in range(min(len(tag), len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0
