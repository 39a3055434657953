"""Server-sent events, as the WHATWG spec reads them, from the raw text a client received.

Each format's stream accumulator consumes ``iter_events``; the framing rules live here once:
lines end in LF, CRLF or CR; ``data:`` lines of one event are joined with LF; one leading space
after the colon is dropped; lines starting with ``:`` are comments; a blank line dispatches the
event. An event still open when the text ends is dispatched too, but marked ``final_unterminated``
so a format can tell a stream cut off mid-event from one that ended cleanly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .base import FormatError, strict_loads

_LINES = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Event:
    event: str  # the `event:` field, "message" when absent
    data: str
    index: int  # position in the stream, 0-based, for error paths
    unterminated: bool = False

    def json(self, *, field: str = "stream") -> Any:
        """The data as JSON. Refused: what is not JSON, and numbers JSON cannot carry back
        (NaN, Infinity, 1e400): the accumulated message is serialised again, and must stay JSON."""
        try:
            return strict_loads(self.data)
        except json.JSONDecodeError as exc:
            raise FormatError(
                f"event {self.index} ({self.event}): data is not valid JSON: {exc.msg}",
                field=field,
                at=f"$[{self.index}].data",
                code="not_json",
            ) from None
        except ValueError as exc:  # NotFinite, or an integer longer than int() reads
            raise FormatError(
                f"event {self.index} ({self.event}): data is not valid JSON: {exc}",
                field=field,
                at=f"$[{self.index}].data",
                code="not_json",
            ) from None
        except RecursionError:
            raise FormatError(
                f"event {self.index}: data nested too deep",
                field=field,
                at=f"$[{self.index}].data",
                code="too_deep",
            ) from None


def iter_events(text: str) -> Iterator[Event]:
    event_type = ""
    data: list[str] = []
    has_data = False
    index = 0
    lines = _LINES.split(text)
    ended_with_newline = text.endswith(("\n", "\r"))
    if ended_with_newline:
        lines.pop()  # the empty string after the final line break
    for line in lines:
        if line == "":
            if has_data:
                yield Event(event_type or "message", "\n".join(data), index)
                index += 1
            event_type, data, has_data = "", [], False
            continue
        if line.startswith(":"):
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
            has_data = True
        elif name == "event":
            event_type = value
        elif name == "error":
            # Not a field of the spec: some OpenAI-compatible servers end a stream that failed
            # with an ``error:`` line (JSON or plain text). Read as an ``error`` event.
            event_type = "error"
            data.append(value)
            has_data = True
        # `id`, `retry` and unknown fields carry nothing a transcript needs.
    if has_data:
        yield Event(event_type or "message", "\n".join(data), index, unterminated=True)


def from_json_lines(text: str) -> str:
    """SSE text from one JSON payload per line (how some recordings keep streams)."""
    return "".join(f"data: {line}\n\n" for line in text.splitlines() if line.strip())
