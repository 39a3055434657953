"""The ConverseStream body, ``application/vnd.amazon.eventstream``: binary frames decoded with
botocore's maintained decoder, the steps of its ``EventStreamBuffer`` one frame at a time
(``DecodeUtils.unpack_prelude``, its length limits, ``_validate_checksum`` of the prelude's and
the message's CRC32, ``EventStreamHeaderParser``), so a long stream is read in linear time (the
buffer copies what is left after every frame) and a header block the stream repeats (every
``contentBlockDelta`` has the same) is parsed once. The differential test reads every stream
with botocore's own ``EventStream`` too.

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

from botocore.eventstream import (
    _MAX_HEADERS_LENGTH,
    _MAX_PAYLOAD_LENGTH,
    DecodeUtils,
    EventStreamHeaderParser,
    InvalidHeadersLength,
    InvalidPayloadLength,
    ParserError,
    _validate_checksum,
)

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
    frames: list[Frame] = []
    offset = 0
    size = len(data)
    headers_seen: dict[bytes, dict[str, Any]] = {}  # a stream repeats a few header blocks
    while offset < size:
        try:
            total = _frame_length(data, offset, size)
        except ParserError as exc:
            raise FormatError(
                f"the frame at byte {offset} does not decode: {exc}",
                field=field,
                at=byte_at(offset),
                code="invalid",
            ) from None
        if total is None:
            if partial:
                break
            what = "its prelude" if size - offset < PRELUDE else "the frame"
            raise FormatError(
                f"the stream is cut off at byte {size}, inside {what} (it starts at byte {offset})",
                field=field,
                at=byte_at(offset),
                code="truncated_stream",
            )
        headers_length = int.from_bytes(data[offset + 4 : offset + 8], "big")
        header_bytes = data[offset + PRELUDE : offset + PRELUDE + headers_length]
        headers = headers_seen.get(header_bytes)
        if headers is None:
            try:
                headers = headers_seen[header_bytes] = EventStreamHeaderParser().parse(header_bytes)
            except (ParserError, IndexError, UnicodeDecodeError) as exc:
                raise FormatError(
                    f"the headers of the frame at byte {offset} do not decode: {exc!r}",
                    field=field,
                    at=byte_at(offset),
                    code="invalid",
                ) from None
        kind = _header(headers, ":message-type") or "event"
        if kind == "exception":
            name = _header(headers, ":exception-type") or "exception"
        elif kind == "error":
            name = _header(headers, ":error-code") or "error"
        else:
            name = _header(headers, ":event-type") or ""
        payload = data[offset + PRELUDE + headers_length : offset + total - 4]
        frames.append(Frame(offset, kind, name, payload, _header(headers, ":error-message")))
        offset += total
    return frames, offset


def _frame_length(data: bytes, offset: int, size: int) -> int | None:
    """The length of the frame at ``offset`` once its prelude and message CRCs are checked
    (botocore's checks: ``DecodeUtils.unpack_prelude``, its length limits, ``_validate_checksum``
    of the prelude, then of the message from the prelude's CRC on); None when the stream ends
    before the frame does. Raises botocore's ``ParserError`` (``ChecksumMismatch``...)."""
    if size - offset < PRELUDE:
        return None
    prelude = data[offset : offset + PRELUDE]
    (total, headers_length, prelude_crc), _ = DecodeUtils.unpack_prelude(prelude)
    _validate_checksum(prelude[: PRELUDE - 4], prelude_crc)
    if headers_length > _MAX_HEADERS_LENGTH:
        raise InvalidHeadersLength(headers_length)
    if total - headers_length - MINIMUM > _MAX_PAYLOAD_LENGTH:
        raise InvalidPayloadLength(total - headers_length - MINIMUM)
    if total < MINIMUM or headers_length > total - MINIMUM:
        raise InvalidPayloadLength(total - headers_length - MINIMUM)
    if size - offset < total:
        return None
    message_crc = int.from_bytes(data[offset + total - 4 : offset + total], "big")
    _validate_checksum(data[offset + PRELUDE - 4 : offset + total - 4], message_crc, prelude_crc)
    return int(total)


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
