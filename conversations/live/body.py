"""The body of ``POST /api/v1/live/chunks`` (DESIGN section 10), checked field by field with the
ingest body's own checks (``ingest/fields.py``: the same codes, ``field`` and ``$.<field>`` path).

To add a field: a ``Field`` in ``FIELDS`` and a member of ``ChunkInput``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings

from ..formats.base import FormatError
from ..ingest.fields import MAX_ID_CHARS, Field, check_labels, check_text, check_timestamp, fail
from .filters import FILTERS

MAX_SEQ = 10**7


@dataclass(frozen=True, slots=True)
class ChunkInput:
    conversation: str
    customer: str
    format: str
    exchange: str
    seq: int
    chunk: str
    at: datetime | None = None
    labels: dict[str, Any] = field(default_factory=dict)


FIELDS: tuple[Field, ...] = (
    Field("conversation", "text", "The chat backend's id of the conversation.", True, MAX_ID_CHARS),
    Field("customer", "text", "The data subject's id in the chat backend.", True, MAX_ID_CHARS),
    Field("format", "format", "The provider format of the stream.", True, 40),
    Field(
        "exchange",
        "text",
        "The backend's key for this provider call; the exchange's own POST names it again in "
        "``live_exchange``, which closes the live stream.",
        True,
        MAX_ID_CHARS,
    ),
    Field("seq", "integer", "The chunk's position, from 0: chunks are read in this order."),
    Field("chunk", "text", "Raw SSE text as received, cut anywhere (even mid-event)."),
    Field("at", "timestamp", "When the chunk arrived at the backend (RFC 3339)."),
    Field("labels", "labels", "Free labels (as the exchange's)."),
)
_BY_NAME = {f.name: f for f in FIELDS}


def chunk_input(body: Any) -> ChunkInput:
    """A chunk body (parsed JSON), or a FormatError naming the field and path."""
    if not isinstance(body, dict):
        raise FormatError("expected a JSON object", field="body", code="invalid")
    for key in body:
        if key not in _BY_NAME:
            raise fail("unknown_field", "unknown field", key)
    texts = {
        n: check_text(_BY_NAME[n], body) for n in ("conversation", "customer", "format", "exchange")
    }
    if texts["format"] not in FILTERS:
        raise fail(
            "unknown_format",
            f"unknown format {texts['format']!r}; known: {', '.join(sorted(FILTERS))}",
            "format",
        )
    seq = body.get("seq")
    if "seq" not in body:
        raise fail("required", "This field is required.", "seq")
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise fail("invalid", "A valid integer is required.", "seq")
    if not 0 <= seq <= MAX_SEQ:
        raise fail("min_value" if seq < 0 else "max_value", f"expected 0 to {MAX_SEQ}", "seq")
    chunk = body.get("chunk")
    if "chunk" not in body:
        raise fail("required", "This field is required.", "chunk")
    if not isinstance(chunk, str):
        raise fail("invalid", "Not a valid string.", "chunk")
    if len(chunk) > settings.LIVE_MAX_CHUNK_CHARS:
        raise fail(
            "max_length",
            f"Ensure this field has no more than {settings.LIVE_MAX_CHUNK_CHARS} characters.",
            "chunk",
        )
    return ChunkInput(
        conversation=texts["conversation"] or "",
        customer=texts["customer"] or "",
        format=texts["format"] or "",
        exchange=texts["exchange"] or "",
        seq=seq,
        chunk=chunk,
        at=check_timestamp(_BY_NAME["at"], body.get("at")),
        labels=check_labels(_BY_NAME["labels"], body.get("labels")),
    )
