"""``history()``: a conversation's replay, ``GET /api/v1/conversations/{id}/messages``.

The console returns ``{"messages":[`` + each message object byte for byte as first received,
joined by ``,`` + ``]}``. ``History.raw`` is that body; ``History.raw_messages`` cuts it into the
elements' exact bytes (a JSON scanner finds where each ends, nothing is re-serialised), and
``History.messages`` parses them for an SDK call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ._wire import Wire

_OPEN = re.compile(r'\s*\{\s*"messages"\s*:\s*\[')
_SPACE = re.compile(r"\s*")


class ConsoleError(Exception):
    """The console answered something other than the replay (its error is kept)."""

    def __init__(self, status: int, body: str) -> None:
        self.status = status
        self.body = body
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        info = parsed if isinstance(parsed, dict) else {}
        self.error = info.get("error")
        self.detail = info.get("detail")
        super().__init__(f"console answered {status}: {body[:300]}")


class ConversationNotFound(ConsoleError):
    """No such conversation in the console (none of its exchanges has arrived yet, or it was
    deleted)."""


@dataclass(frozen=True)
class History:
    conversation: str
    raw: bytes  # the response body, exactly
    raw_messages: tuple[bytes, ...]  # each element's bytes, exactly
    # ``for_continuation``: what the console left out (earlier turns' reasoning), counted.
    left_out_elements: int = 0
    left_out_bytes: int = 0

    @property
    def messages(self) -> list[Any]:
        """The messages parsed, for the next provider call."""
        return [json.loads(m) for m in self.raw_messages]


_LEFT_OUT = re.compile(r'\s*,\s*"left_out"\s*:\s*(\{[^{}]*\})\s*\}\s*')


def split_envelope(raw: bytes) -> tuple[bytes, ...]:
    """The exact bytes of each element of ``{"messages":[...]}`` (a continuation's trailing
    ``"left_out":{...}`` member allowed)."""
    return _split(raw)[0]


def _split(raw: bytes) -> tuple[tuple[bytes, ...], dict[str, int]]:
    text = raw.decode("utf-8")
    match = _OPEN.match(text)
    if match is None:
        raise ValueError('the replay does not start with {"messages":[')
    decoder = json.JSONDecoder()
    out: list[bytes] = []
    pos = _SPACE.match(text, match.end()).end()  # type: ignore[union-attr]
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            _, end = decoder.raw_decode(text, pos)
            out.append(text[pos:end].encode("utf-8"))
            pos = _SPACE.match(text, end).end()  # type: ignore[union-attr]
            if text.startswith(",", pos):
                pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
                continue
            if text.startswith("]", pos):
                pos += 1
                break
            raise ValueError(f"unexpected character at {pos} of the replay")
    left_out: dict[str, int] = {}
    tail = _LEFT_OUT.fullmatch(text[pos:])
    if tail is not None:
        counts = json.loads(tail.group(1))
        left_out = {k: int(v) for k, v in counts.items() if isinstance(v, int)}
    elif not re.fullmatch(r"\s*\}\s*", text[pos:]):
        raise ValueError("the replay does not end with ]}")
    return tuple(out), left_out


def history(
    conversation: str,
    *,
    url: str,
    token: str,
    timeout: float = 10.0,
    for_continuation: bool = False,
) -> History:
    """The replay of ``conversation``. Raises ``ConversationNotFound`` (404), ``ConsoleError``
    (any other answer but 200), ``OSError`` (unreachable, timed out after ``timeout``).
    ``for_continuation``: what the provider needs to continue (``?for=continuation``): the
    reasoning of earlier turns left out where the provider does not need it, an open tool loop
    kept unmodified; ``left_out_elements``/``left_out_bytes`` say what was left out."""
    wire = Wire(url, timeout=timeout, connect_timeout=timeout)
    path = f"/api/v1/conversations/{quote(conversation, safe='')}/messages"
    if for_continuation:
        path += "?for=continuation"
    try:
        response = wire.request(
            "GET", path, body=None, headers={"Authorization": f"Bearer {token}"}
        )
    finally:
        wire.close()
    if response.status == 404:
        raise ConversationNotFound(404, response.text)
    if response.status != 200:
        raise ConsoleError(response.status, response.text)
    raw = response.body
    try:
        messages, left_out = _split(raw)
    except ValueError as exc:
        raise ConsoleError(200, f"not a replay: {exc}") from None
    return History(
        conversation=conversation,
        raw=raw,
        raw_messages=messages,
        left_out_elements=left_out.get("elements", 0),
        left_out_bytes=left_out.get("bytes", 0),
    )
