"""The two framings of ``streamGenerateContent``: SSE (``?alt=sse``: one ``data:`` line per
``GenerateContentResponse``) and, without ``alt=sse``, one JSON array whose elements come as
they are generated (Google writes them ``[{...}\\n,\\r\\n{...}\\n]``). Either way a stream is a
sequence of chunks, each a whole ``GenerateContentResponse`` object: ``chunks`` yields each
one's exact text and its position, for ``parser.py`` to read.

A stream cut off inside a chunk, or an array never closed, is refused as ``truncated_stream``
unless the client cancelled it (then it is what arrived); ``parser.py`` decides whether the
chunks that did arrive make an ended answer (a ``finishReason`` came).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..base import FormatError
from ..sse import iter_events

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    raw: str  # the chunk's JSON text, exactly as it came (an SSE event's data)
    at: str  # where it is, for errors: ``$[i].data`` (SSE) or ``$[i]`` (array)


_ARRAY = re.compile(r"[ \t\n\r]*\[[ \t\n\r]*[{\]]")


def is_array(text: str) -> bool:
    """Whether the stream is the JSON-array framing: an array of objects (``[`` then ``{``, or
    an empty one)."""
    return _ARRAY.match(text) is not None


def chunks(text: str, *, cancelled: bool) -> Iterator[Chunk]:
    """The chunks of a stream in either framing. ``cancelled``: a chunk cut off at the end is
    left out instead of refused."""
    if is_array(text):
        yield from _array(text, cancelled=cancelled)
        return
    for event in iter_events(text):
        if event.data.strip() in ("", "[DONE]"):
            continue  # a gateway's end marker carries nothing
        if event.unterminated and not _whole(event.data):
            if cancelled:
                return
            raise FormatError(
                f"the stream was cut off inside event {event.index}",
                field="stream",
                at=f"$[{event.index}]",
                code="truncated_stream",
            )
        yield Chunk(event.index, event.data, f"$[{event.index}].data")


def _whole(data: str) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


def _skip(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _array(text: str, *, cancelled: bool) -> Iterator[Chunk]:
    """The elements of the JSON-array stream, each as its exact text. The array must close
    (``]``) unless the stream was cancelled."""
    i = _skip(text, text.index("[") + 1)
    index = 0
    n = len(text)
    expect_value = True
    while True:
        if i >= n:
            if cancelled:
                return
            raise FormatError(
                f"the stream ended after {index} chunks without closing its array",
                field="stream",
                at=f"$[{index}]",
                code="truncated_stream",
            )
        char = text[i]
        if char == "]" and (not expect_value or index == 0):
            if _skip(text, i + 1) != n:
                raise FormatError(
                    "text after the end of the stream's array",
                    field="stream",
                    at=f"$[{index}]",
                    code="not_json",
                )
            return
        if char == "," and not expect_value:
            expect_value = True
            i = _skip(text, i + 1)
            continue
        if not expect_value:
            raise FormatError(
                f"chunk {index}: expected ',' or ']' between the stream's chunks",
                field="stream",
                at=f"$[{index}]",
                code="not_json",
            )
        try:
            _, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            if not text.rstrip(_WS).endswith("]"):  # the array never closed: cut off
                if cancelled:
                    return
                raise FormatError(
                    f"the stream was cut off inside chunk {index}",
                    field="stream",
                    at=f"$[{index}]",
                    code="truncated_stream",
                ) from None
            raise FormatError(
                f"chunk {index} is not valid JSON: {exc.msg}",
                field="stream",
                at=f"$[{index}]",
                code="not_json",
            ) from None
        except RecursionError:
            raise FormatError(
                f"chunk {index} nested too deep", field="stream", at=f"$[{index}]", code="too_deep"
            ) from None
        yield Chunk(index, text[i:end], f"$[{index}]")
        index += 1
        expect_value = False
        i = _skip(text, end)
