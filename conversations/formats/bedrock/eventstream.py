"""The ConverseStream body, ``application/vnd.amazon.eventstream``: binary frames decoded with
botocore's maintained decoder (``botocore.eventstream.EventStreamBuffer``: the prelude's and the
message's CRC32 checked, the headers parsed), one frame at a time so a long stream is read in
linear time.

A frame is a 12-byte prelude (total length, headers length, the prelude's CRC), its headers,
its payload (here JSON) and the message's CRC. Its headers say what it is: ``:message-type``
``event`` (``:event-type``: ``messageStart``, ``contentBlockDelta``...), ``exception``
(``:exception-type``: ``throttlingException``, ``modelStreamErrorException``...) or ``error``
(``:error-code``, ``:error-message``). Each frame is read as ``{<type>: <payload>}``, the form
botocore's parser yields for a ConverseStream event and the one the AI SDK's recordings keep.

A frame that does not decode (a CRC that does not match, a header botocore refuses, a prelude or
a frame cut off) is a ``FormatError`` naming its byte offset (``base.byte_at``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.eventstream import EventStreamBuffer, ParserError

from ..base import FormatError, byte_at, loads

PRELUDE = 12  # total length, headers length, prelude CRC: 4 bytes each
MINIMUM = PRELUDE + 4  # no headers, no payload, the message CRC


@dataclass(frozen=True, slots=True)
class Frame:
    offset: int  # where the frame starts in the stream's bytes
    kind: str  # the :message-type header: "event", "exception" or "error"
    name: str  # the event type, the exception type or the error code
    payload: bytes
    message: str | None = None  # an error frame's :error-message

    def data(self, *, field: str) -> dict[str, Any]:
        """The frame as ``{<type>: <payload>}``; an error frame's payload is its message. A
        payload that is not a JSON object is a FormatError at the frame's offset."""
        if self.kind == "error":
            return {self.name: {"message": self.message or ""}}
        text = self.payload.decode("utf-8", "replace") if self.payload else "{}"
        at = byte_at(self.offset)
        value = loads(text, field=field, at=at)
        if not isinstance(value, dict):
            raise FormatError(
                f"the payload of the frame at byte {self.offset} is not a JSON object",
                field=field,
                at=at,
                code="wrong_type",
            )
        return {self.name: value}


def _header(headers: dict[str, Any], name: str) -> str | None:
    value = headers.get(name)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def read_frames(
    data: bytes, *, field: str = "stream_base64", partial: bool = False
) -> tuple[list[Frame], int]:
    """The frames of ``data`` and how many bytes they take. A frame cut off at the end raises
    ``truncated_stream`` at its offset, unless ``partial`` (a live chunk, or a cancelled
    stream): then the frames before it are returned and the count says where it starts."""
    view = memoryview(data)
    frames: list[Frame] = []
    offset = 0
    size = len(data)
    while offset < size:
        rest = size - offset
        total = int.from_bytes(view[offset : offset + 4], "big") if rest >= 4 else 0
        buffer = EventStreamBuffer()
        buffer.add_data(bytes(view[offset : offset + max(total, PRELUDE)]))
        try:
            message = next(buffer, None) if rest >= PRELUDE else None
        except ParserError as exc:
            raise FormatError(
                f"the frame at byte {offset} does not decode: {exc}",
                field=field,
                at=byte_at(offset),
                code="invalid",
            ) from None
        if message is None:
            if partial:
                break
            what = "its prelude" if rest < PRELUDE else "the frame"
            raise FormatError(
                f"the stream is cut off at byte {size}, inside {what} (it starts at byte {offset})",
                field=field,
                at=byte_at(offset),
                code="truncated_stream",
            )
        if total < MINIMUM:
            raise FormatError(
                f"the frame at byte {offset} is shorter than a prelude and its CRC",
                field=field,
                at=byte_at(offset),
                code="invalid",
            )
        headers = message.headers
        kind = _header(headers, ":message-type") or "event"
        if kind == "exception":
            name = _header(headers, ":exception-type") or "exception"
        elif kind == "error":
            name = _header(headers, ":error-code") or "error"
        else:
            name = _header(headers, ":event-type") or ""
        frames.append(
            Frame(offset, kind, name, bytes(message.payload), _header(headers, ":error-message"))
        )
        offset += total
    return frames, offset


def encode_frame(
    name: str, payload: bytes, *, kind: str = "event", message: str | None = None
) -> bytes:
    """One frame, as the provider writes it (tests and demo streams: botocore decodes but does
    not encode). ``kind``: ``event`` (``name`` its event type), ``exception`` (its exception
    type) or ``error`` (its error code, ``message`` its error message)."""
    import binascii
    import struct

    def header(key: str, value: str) -> bytes:
        k, v = key.encode(), value.encode()
        return bytes([len(k)]) + k + b"\x07" + struct.pack(">H", len(v)) + v

    headers = header(":message-type", kind)
    if kind == "event":
        headers += header(":event-type", name) + header(":content-type", "application/json")
    elif kind == "exception":
        headers += header(":exception-type", name) + header(":content-type", "application/json")
    else:
        headers += header(":error-code", name) + header(":error-message", message or "")
    total = PRELUDE + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", binascii.crc32(body))
