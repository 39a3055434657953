"""The ingest body: one definition that both checks a ``POST /api/v1/exchanges`` body and
documents it (DESIGN section 5).

``FIELDS`` is the definition: each field's JSON type, bounds, description and example. From it,
``exchange_input(body)`` checks a body field by field (the API and ``manage.py ingest`` call it:
one set of rules, and no per-request serializer machinery on the hot path,
``bench/ingest_bulk.py``), and ``json_schema()`` is what the OpenAPI page shows (with one example
body per format, ``examples.py``). The one rule JSON Schema cannot say (labels fit in 4 KB) is
checked here too and named in its description. Every error the checks raise has its code in
``ERRORS`` (the 400 response documents them); ``tests/conversations/test_ingest_body.py`` fails
when the schema, its examples, its error codes and the checks disagree.

To add a body field: a ``Field`` in ``FIELDS`` (``kind`` says how it is checked and shown), a
member of ``ExchangeInput``, and a case in the test; a field of a new kind gets a function that
checks it (like ``check_labels`` in ``fields.py``) and a branch in ``_schema``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .. import formats
from ..formats.base import FormatError, check_output
from ..formats.registry import ENDPOINT_PATTERN
from .fields import (
    BASE64_PATTERN,
    MAX_ID_CHARS,
    MAX_QUEUE_CHARS,
    Field,
    check_boolean,
    check_integer,
    check_labels,
    check_text,
    check_timestamp,
    fail,
)

MAX_FORMAT_CHARS = 40
MAX_LATENCY_MS = 2**31 - 1
MAX_ENDPOINT_CHARS = 2048


@dataclass(frozen=True, slots=True)
class ExchangeInput:
    """One ``POST /api/v1/exchanges`` body, checked for shape (not yet parsed)."""

    conversation: str
    customer: str
    format: str
    request: str
    response: str | None = None
    stream: str | None = None
    stream_base64: str | None = None
    endpoint: str | None = None
    started_at: datetime | None = None
    latency_ms: int | None = None
    labels: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False
    live_exchange: str | None = None


FIELDS: tuple[Field, ...] = (
    Field(
        "conversation",
        "text",
        "The chat backend's id of the conversation. Exchanges with the same id are one "
        "conversation; its history is stored once.",
        required=True,
        max_length=MAX_ID_CHARS,
        example="c-1",
    ),
    Field(
        "customer",
        "text",
        "The data subject's id in the chat backend. A conversation belongs to one customer "
        "(another customer for a stored conversation: 409).",
        required=True,
        max_length=MAX_ID_CHARS,
        example="u-9",
    ),
    Field(
        "format",
        "format",
        "The provider format of ``request`` and ``response``/``stream``/``stream_base64``.",
        required=True,
        max_length=MAX_FORMAT_CHARS,
        example=formats.names()[0],
    ),
    Field(
        "request",
        "text",
        "The provider request body exactly as sent, as a JSON string (for ``ai-sdk.ui``: the "
        'chat request the browser sent, ``{"messages": [UIMessage...]}``). Kept byte for byte.',
        required=True,
    ),
    Field(
        "response",
        "text",
        "The provider response body exactly as received, as a JSON string (for ``ai-sdk.ui``: "
        "the assistant UIMessage). Give exactly one of ``response``, ``stream`` and "
        "``stream_base64``.",
    ),
    Field(
        "stream",
        "text",
        "Or: the raw text of a streamed response (SSE, or the JSON-array stream of a provider "
        "that sends one), exactly as received. Give exactly one of ``response``, ``stream`` and "
        "``stream_base64``.",
    ),
    Field(
        "stream_base64",
        "base64",
        "Or: a binary stream exactly as received (AWS ``application/vnd.amazon.eventstream``), "
        "base64-encoded (standard alphabet, padded). Only for a format whose streams are binary "
        "(any other refuses it, ``stream_kind``); a malformed frame is a 400 naming the byte "
        "offset where it starts (``at``: ``$[offset]`` of the decoded bytes).",
    ),
    Field(
        "endpoint",
        "path",
        "The path and query the provider call was sent to, without scheme or host "
        "(``/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse``). A format whose "
        "provider puts the model in the URL requires it and reads the model from it (missing, "
        "or naming no model: a 400 at ``$.endpoint``, code ``endpoint``); the others ignore it.",
        max_length=MAX_ENDPOINT_CHARS,
        example="/v1/messages",
    ),
    Field(
        "cancelled",
        "boolean",
        "True when the chat stopped reading the stream before its end (the customer closed the "
        "chat, the call was cancelled): ``stream`` is what had arrived, and its missing end is "
        "not refused. The exchange is stored as received and marked cancelled. Only with "
        "``stream``.",
        example=False,
    ),
    Field(
        "started_at",
        "timestamp",
        "When the provider call started (RFC 3339; without an offset: UTC; an offset within "
        "±14:00; from 2000 to a day ahead). The conversation's activity is when its exchanges "
        "happened.",
        example="2026-11-29T10:00:00Z",
    ),
    Field(
        "latency_ms",
        "integer",
        "How long the provider call took, in milliseconds.",
        maximum=MAX_LATENCY_MS,
        example=1234,
    ),
    Field(
        "labels",
        "labels",
        "Free labels of the exchange (at most 4 KB as JSON). ``queue`` names the team queue the "
        "conversation belongs to (1 to 100 characters).",
        example={"queue": "billing"},
    ),
    Field(
        "live_exchange",
        "text",
        "The ``exchange`` key this call's chunks were sent live with (``POST /api/v1/live/"
        "chunks``): the live stream closes. Nothing of the stored exchange depends on it.",
        max_length=MAX_ID_CHARS,
        example="call-7f3a",
    ),
)
_BY_NAME = {f.name: f for f in FIELDS}
assert set(_BY_NAME) == set(ExchangeInput.__dataclass_fields__), "FIELDS and ExchangeInput"

# Every code a check below raises, and what it means: the documentation of the 400 response.
ERRORS: dict[str, str] = {
    "invalid": "the body is not a JSON object, or a field has the wrong JSON type or form",
    "unknown_field": "a field this body does not define",
    "required": "a required field is missing",
    "null": "a field that must be a string is null",
    "blank": "a string field is empty",
    "max_length": "a string is longer than the field allows",
    "min_value": "a number is below the field's minimum",
    "max_value": "a number is above the field's maximum",
    "not_a_dict": "labels is not an object",
    "too_large": "labels take more than 4 KB as JSON",
    "unknown_format": "format names no registered format",
    "response_or_stream": "not exactly one of response, stream and stream_base64",
    "not_base64": "stream_base64 is not base64 (the standard alphabet, padded)",
    "cancelled_response": "cancelled is true with a response (only a stream can be cancelled)",
    "out_of_range": "a timestamp outside the accepted window (from TIMESTAMP_EARLIEST, 2000, to "
    "TIMESTAMP_FUTURE_SECONDS, a day, ahead)",
}


_STRINGS = ("text", "format", "path", "base64")


def exchange_input(body: Any) -> ExchangeInput:
    """An ingest body (parsed JSON) checked field by field, or a FormatError naming the field
    and its JSON path (``$.<field>``), with a code of ``ERRORS``. The strings are checked first,
    in the order of ``FIELDS``, then that exactly one of response, stream and stream_base64 is
    given, then the rest."""
    if not isinstance(body, dict):
        raise FormatError("expected a JSON object", field="body", code="invalid")
    for key in body:
        if key not in _BY_NAME:
            raise fail("unknown_field", "unknown field", key)
    texts = {f.name: check_text(f, body) for f in FIELDS if f.kind in _STRINGS}
    try:
        check_output(texts["response"], texts["stream"], texts["stream_base64"])
    except FormatError as exc:
        raise fail(exc.code, exc.detail, "response") from None
    fmt = texts["format"]
    if fmt not in formats.names():
        raise fail(
            "unknown_format",
            f"unknown format {fmt!r}; known: {', '.join(formats.names())}",
            "format",
        )
    values: dict[str, Any] = dict(texts)
    values["started_at"] = check_timestamp(_BY_NAME["started_at"], body.get("started_at"))
    values["latency_ms"] = check_integer(_BY_NAME["latency_ms"], body.get("latency_ms"))
    values["labels"] = check_labels(_BY_NAME["labels"], body.get("labels"))
    values["cancelled"] = check_boolean(_BY_NAME["cancelled"], body.get("cancelled"))
    if values["cancelled"] and texts["response"] is not None:
        raise fail(
            "cancelled_response",
            "only a stream can be cancelled: a response body arrives whole or not at all",
            "cancelled",
        )
    return ExchangeInput(**values)


def queue_of(labels: dict[str, Any]) -> str:
    """The queue a body's labels name ("" for none)."""
    queue = labels.get("queue")
    return queue[:MAX_QUEUE_CHARS] if isinstance(queue, str) else ""


# --- the documentation ------------------------------------------------------------------------


def _schema(f: Field) -> dict[str, Any]:
    out: dict[str, Any] = {"description": f.description}
    if f.kind in _STRINGS:
        out.update(type="string", minLength=1)
        if f.max_length is not None:
            out["maxLength"] = f.max_length
        if f.kind == "format":
            out["enum"] = formats.names()
        elif f.kind == "path":
            out["pattern"] = ENDPOINT_PATTERN
        elif f.kind == "base64":
            out.update(pattern=BASE64_PATTERN, contentEncoding="base64")
    elif f.kind == "timestamp":
        out.update(type="string", format="date-time", nullable=True)
    elif f.kind == "integer":
        out.update(type="integer", minimum=0, nullable=True)
        if f.maximum is not None:
            out["maximum"] = f.maximum
    elif f.kind == "boolean":
        out.update(type="boolean", nullable=True)
    elif f.kind == "labels":
        out.update(
            type="object",
            nullable=True,
            properties={
                "queue": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUEUE_CHARS,
                    "description": "the team queue of the conversation",
                }
            },
        )
    else:  # pragma: no cover (a new kind must say how it is shown)
        raise AssertionError(f"no schema for kind {f.kind!r}")
    if f.example is not None:
        out["example"] = f.example
    return out


_OUTPUTS = ("response", "stream", "stream_base64")


def json_schema() -> dict[str, Any]:
    """The body's schema as the OpenAPI page shows it (OpenAPI 3.0: JSON Schema with
    ``nullable``), built from ``FIELDS``."""
    return {
        "type": "object",
        "description": "One provider call: the request exactly as sent and the response (or the "
        "raw stream) exactly as received, and where the provider puts the model in the URL, "
        "the endpoint it was sent to. Bad input of any kind is a 400 naming the field and its "
        "JSON path, and nothing is stored.",
        "properties": {f.name: _schema(f) for f in FIELDS},
        "required": [f.name for f in FIELDS if f.required],
        "additionalProperties": False,
        "oneOf": [
            {"required": [one], "not": {"anyOf": [{"required": [o]} for o in _OUTPUTS if o != one]}}
            for one in _OUTPUTS
        ],
        # Only a stream can be cancelled.
        "not": {
            "required": ["response", "cancelled"],
            "properties": {"cancelled": {"enum": [True]}},
        },
    }
