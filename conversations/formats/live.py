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

``split_inline`` and ``InlineSplit`` are the one reader of an inline convention
(``profile.Inline``: a ``<think>`` element at a block's start, in any case, with attributes),
used by the parsers on whole text and by the live filters piece by piece.

Pure: no Django, no Redis.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Iterator
from functools import cache
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
    # The stream is binary frames (a ``binary_stream`` format): its live chunks come as
    # ``chunk_base64``, and ``frames`` reads them instead of the engine's SSE framing.
    binary: ClassVar[bool] = False

    @abc.abstractmethod
    def event(self, out: LiveOps, data: dict[str, Any]) -> None:
        """One event's JSON (an object), in stream order."""

    def frames(self, data: bytes) -> tuple[list[dict[str, Any]], int]:
        """A binary stream's bytes so far (``binary`` filters only): the events of the complete
        frames at its start, each as ``event`` reads it, and how many bytes they take (the rest
        waits for the next chunk). A frame that does not decode raises ``FormatError``."""
        raise NotImplementedError(f"{self.format} streams are text")


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- inline deliberation -----------------------------------------------------------------------

_WS = " \t\n\r"
# After an opening tag's name: its end, or what may come before its attributes.
_ATTRS = _WS + "/"


@cache
def _patterns(inline: Inline) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The rule's tags as expressions (``profile.Inline``: any case, attributes): the whole
    opening tag, an opening tag cut before its ``>``, the closing tag."""
    name = re.escape(inline.tag)
    flags = re.IGNORECASE
    return (
        re.compile(rf"<{name}(?:[{re.escape(_ATTRS)}][^>]*)?>", flags),
        re.compile(rf"<{name}[{re.escape(_ATTRS)}][^>]*\Z", flags),
        re.compile(rf"</{name}[{re.escape(_WS)}]*>", flags),
    )


def split_inline(text: str, inline: Inline) -> tuple[int | None, str]:
    """A whole block's text read by ``inline``: ``(None, text)`` when it does not open with the
    tag; else ``(span characters, visible text)``, the span being everything from the opening
    tag to the closing one (or to the end, when it never closes) and the visible text what
    follows, its leading whitespace dropped. A text that is only the opening tag's beginning
    (``<th``, ``<think reason="``: a stream cut inside the tag) is a span too: nothing of it is
    shown."""
    opening, cut, closing = _patterns(inline)
    start = len(text) - len(text.lstrip(_WS))
    found = opening.match(text, start)
    if found is None:
        rest = text[start:]
        if rest and (inline.open_name.startswith(rest.lower()) or cut.match(rest)):
            return len(text) - start, ""  # the tag itself cut off: a span that never began
        return None, text
    close = closing.search(text, found.end())
    if close is None:
        return len(text) - start, ""
    return close.end() - start, text[close.end() :].lstrip(_WS)


def inline_traces(content: Any, inline: Inline, kind: TraceKind) -> Iterator[Trace]:
    """The inline spans of a stored message's content (a string, or parts with ``text``), as
    the review reads them: the text between the tags."""
    opening, _, closing = _patterns(inline)
    texts = [content] if isinstance(content, str) else []
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict)]
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    for text in texts:
        span, _ = split_inline(text, inline)
        if span:
            start = len(text) - len(text.lstrip(_WS))
            inner = text[start : start + span]
            found = opening.match(inner)
            inner = inner[found.end() :] if found else ""
            close = closing.search(inner)
            inner = inner[: close.start()] if close else inner
            if inner.strip():
                yield Trace(kind, inner)


class InlineSplit:
    """``split_inline`` piece by piece, a tag cut anywhere across pieces. Its state is numbers
    and whitespace only (``state()``), never a character of the deliberation: where the
    opening tag's name is matched so far (and which of its letters came in upper case, to give
    them back as they were when it is no tag after all), then where the closing one is, then
    whether the visible text has begun.

    ``feed(piece)`` returns ``(visible, hidden)``: the visible text to show now and the number
    of deliberation characters read. ``close()`` returns what was held back at the block's end
    (whitespace alone is visible text after all; a tag cut off is not)."""

    START, ATTRS, INSIDE, AFTER, VISIBLE = "start", "attrs", "inside", "after", "visible"

    def __init__(self, inline: Inline, state: dict[str, Any] | None = None) -> None:
        self.inline = inline
        self.s: dict[str, Any] = (
            {"at": self.START, "ws": "", "m": 0, "up": 0} if state is None else state
        )

    def state(self) -> dict[str, Any]:
        return self.s

    def _held(self) -> str:
        """The opening tag's characters matched so far, in the case they came in."""
        up = self.s.get("up", 0)
        name = self.inline.open_name[: self.s["m"]]
        return "".join(c.upper() if up >> i & 1 else c for i, c in enumerate(name))

    def feed(self, piece: str) -> tuple[str, int]:
        s, visible, hidden = self.s, [], 0
        name, close = self.inline.open_name, self.inline.close_name
        i, n = 0, len(piece)
        while i < n:
            if s["at"] == self.VISIBLE:
                visible.append(piece[i:])
                break
            c = piece[i]
            if s["at"] == self.START:
                if s["m"] == 0 and c in _WS:
                    s["ws"] += c
                elif s["m"] < len(name) and c.lower() == name[s["m"]]:
                    if c != c.lower():
                        s["up"] = s.get("up", 0) | 1 << s["m"]
                    s["m"] += 1
                elif s["m"] == len(name) and (c == ">" or c in _ATTRS):
                    hidden += len(name) + 1
                    s.update(at=self.INSIDE if c == ">" else self.ATTRS, ws="", m=0, up=0)
                else:  # not the tag: what was held is text after all
                    visible.append(s["ws"] + self._held())
                    s.update(at=self.VISIBLE, ws="", m=0, up=0)
                    continue  # this character again, as visible text
            elif s["at"] == self.ATTRS:
                hidden += 1
                if c == ">":
                    s["at"] = self.INSIDE
            elif s["at"] == self.INSIDE:
                hidden += 1
                if s["m"] == len(close):  # the closing name read: whitespace, then ">"
                    if c == ">":
                        s.update(at=self.AFTER, m=0)
                    elif c not in _WS:
                        s["m"] = _advance(close, 0, c.lower())
                else:
                    s["m"] = _advance(close, s["m"], c.lower())
            elif s["at"] == self.AFTER and c not in _WS:
                s["at"] = self.VISIBLE
                continue
            i += 1
        return "".join(visible), hidden

    def close(self) -> str:
        s = self.s
        # Whitespace alone was text; a tag cut off before its end was a span that never began.
        held = s["ws"] if s["at"] == self.START and s["m"] == 0 else ""
        s.update(ws="", m=0, up=0)
        return held

    @property
    def hiding(self) -> bool:
        """Inside the span (its opening tag's attributes included): the pieces read now are
        deliberation."""
        return bool(self.s["at"] in (self.ATTRS, self.INSIDE))


def _advance(tag: str, matched: int, c: str) -> int:
    """How much of ``tag`` is matched after ``c``, ``matched`` characters having been (the
    longest prefix of the tag that ends here: a plain prefix automaton)."""
    text = tag[:matched] + c
    for k in range(min(len(tag), len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0
