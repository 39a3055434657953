"""Ingest rules, before anything is written: parse an exchange with its format, decide which of
its messages are new and whether the history was rewritten, and the Exchange row's columns.

Pure but for ``unknown_types_record``; ``writer.py`` stores what these decide.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db.models import F
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from . import crypto, formats
from .blocks import BlockClass, Message, ParsedExchange
from .formats import FormatError
from .keys import exchange_aad
from .models import UnknownBlockType
from .projection import clean_text
from .replay import canonical_sha256, raw_sha256


class IngestConflict(Exception):
    """The request contradicts what is stored (another customer, a reused idempotency key)."""

    def __init__(self, detail: str, *, field: str, code: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.code = code


@dataclass(frozen=True, slots=True)
class ExchangeInput:
    """One ``POST /api/v1/exchanges`` body, validated for shape (not yet parsed)."""

    conversation: str
    customer: str
    format: str
    request: str
    response: str | None = None
    stream: str | None = None
    started_at: datetime | None = None
    latency_ms: int | None = None
    labels: dict[str, Any] = field(default_factory=dict)


_FIELDS = frozenset(ExchangeInput.__dataclass_fields__)
_BODIES = ("request", "response", "stream")
MAX_ID_CHARS = 200
MAX_LABELS_CHARS = 4096


def exchange_input(body: Any) -> ExchangeInput:
    """An ingest body (parsed JSON) checked field by field, or a FormatError naming the field
    and its JSON path. The API and ``ingest`` both call this: one set of rules, and no
    per-request serializer machinery on the hot path (``bench/ingest_bulk.py``)."""
    if not isinstance(body, dict):
        raise FormatError("expected a JSON object", field="body", code="invalid")
    for key in body:
        if key not in _FIELDS:
            raise FormatError("unknown field", field=key, at=f"$.{key}", code="unknown_field")

    def text(name: str, *, required: bool, max_length: int | None = None) -> str | None:
        value = body.get(name)
        if value is None:
            if required or name in body:
                raise FormatError(
                    "This field is required."
                    if name not in body
                    else "This field may not be null.",
                    field=name,
                    at=f"$.{name}",
                    code="required" if name not in body else "null",
                )
            return None
        if not isinstance(value, str):
            raise FormatError("Not a valid string.", field=name, at=f"$.{name}", code="invalid")
        if not value:
            raise FormatError(
                "This field may not be blank.", field=name, at=f"$.{name}", code="blank"
            )
        if max_length is not None and len(value) > max_length:
            raise FormatError(
                f"Ensure this field has no more than {max_length} characters.",
                field=name,
                at=f"$.{name}",
                code="max_length",
            )
        return value

    conversation = text("conversation", required=True, max_length=MAX_ID_CHARS)
    customer = text("customer", required=True, max_length=MAX_ID_CHARS)
    fmt = text("format", required=True, max_length=40)
    request = text("request", required=True)
    response = text("response", required=False)
    stream = text("stream", required=False)
    if (response is None) == (stream is None):
        raise FormatError(
            "give exactly one of response and stream",
            field="response",
            at="$.response",
            code="response_or_stream",
        )
    if fmt not in formats.names():
        raise FormatError(
            f"unknown format {fmt!r}; known: {', '.join(formats.names())}",
            field="format",
            at="$.format",
            code="unknown_format",
        )
    started_at = None
    if body.get("started_at") is not None:
        raw = body["started_at"]
        started_at = parse_datetime(raw) if isinstance(raw, str) else None
        if started_at is None:
            raise FormatError(
                "expected an RFC 3339 timestamp, e.g. 2026-11-29T10:00:00Z",
                field="started_at",
                at="$.started_at",
                code="invalid",
            )
        if timezone.is_naive(started_at):
            started_at = timezone.make_aware(started_at, UTC)
    latency = body.get("latency_ms")
    if latency is not None:
        if isinstance(latency, bool) or not isinstance(latency, int):
            raise FormatError(
                "A valid integer is required.",
                field="latency_ms",
                at="$.latency_ms",
                code="invalid",
            )
        if not 0 <= latency < 2**31:
            raise FormatError(
                "expected 0 to 2147483647 milliseconds",
                field="latency_ms",
                at="$.latency_ms",
                code="min_value" if latency < 0 else "max_value",
            )
    labels = body.get("labels", {})
    if labels is None:
        labels = {}
    if not isinstance(labels, dict):
        raise FormatError(
            "Expected a dictionary of items.", field="labels", at="$.labels", code="not_a_dict"
        )
    queue = labels.get("queue")
    if queue is not None and (not isinstance(queue, str) or not 0 < len(queue) <= 100):
        raise FormatError(
            "must be a string of 1 to 100 characters",
            field="labels",
            at="$.labels.queue",
            code="invalid",
        )
    if len(json.dumps(labels, ensure_ascii=False)) > MAX_LABELS_CHARS:
        raise FormatError(
            "labels are limited to 4 KB", field="labels", at="$.labels", code="too_large"
        )
    assert conversation is not None and customer is not None and fmt is not None
    assert request is not None
    return ExchangeInput(
        conversation=conversation,
        customer=customer,
        format=fmt,
        request=request,
        response=response,
        stream=stream,
        started_at=started_at,
        latency_ms=latency,
        labels=labels,
    )


@dataclass(slots=True)
class PlannedMessage:
    message: Message
    sha256: str
    canonical_sha256: str
    from_response: bool
    superseded: bool = False


@dataclass(slots=True)
class ExchangePlan:
    new_messages: list[PlannedMessage]
    rewritten_at: int | None
    tool_call_count: int
    supersede_current: int | None = None  # index into the current messages to mark superseded


def exchange_parse(data: ExchangeInput) -> ParsedExchange:
    """Parse with the format's module; raises FormatError for anything that does not fit."""
    return formats.get(data.format).parse(
        request=data.request, response=data.response, stream=data.stream
    )


def exchange_plan(
    fmt: str, parsed: ParsedExchange, current: Sequence[tuple[str, str]]
) -> ExchangePlan:
    """Which messages are new, and where (if anywhere) the history sent differs from the stored.

    ``current`` holds the (raw, canonical) hashes of the conversation's current messages, in
    order. The transcript is append-only: the history element at position i matches the current
    message i when their bytes are equal (the usual case, checked first because it is cheap) or
    their canonical forms are; elements past the current length are new. The first
    position that differs (or a history shorter than the current one) is reported as rewritten;
    replay keeps returning what was first received. When the request carries only new items
    (``history_is_full`` False: OpenAI ``previous_response_id``), every item is new. When the
    answer is a later version of the history's last message (``output_supersedes_last``), that
    message stays stored but stops being current.
    """

    def planned(m: Message, from_response: bool) -> PlannedMessage:
        return PlannedMessage(m, raw_sha256(m.raw), canonical_sha256(m.raw, fmt), from_response)

    new: list[PlannedMessage] = []
    rewritten_at: int | None = None
    # A message the answer continues was updated by the client on purpose (a tool result added
    # in place): its differing from the stored version is the protocol, not a rewrite.
    continued = len(parsed.history) - 1 if parsed.output_supersedes_last else None
    if parsed.history_is_full:
        for i, message in enumerate(parsed.history):
            if i < len(current):
                if (
                    rewritten_at is None
                    and i != continued
                    and raw_sha256(message.raw) != current[i][0]
                    and canonical_sha256(message.raw, fmt) != current[i][1]
                ):
                    rewritten_at = i
                continue
            new.append(planned(message, False))
        if rewritten_at is None and len(parsed.history) < len(current):
            rewritten_at = len(parsed.history)
    else:
        new.extend(planned(m, False) for m in parsed.history)
    supersede_current: int | None = None
    if parsed.output_supersedes_last and parsed.history and parsed.output:
        if new:  # the superseded message arrives in this very exchange
            new[-1].superseded = True
        elif parsed.history_is_full and len(parsed.history) <= len(current):
            supersede_current = len(parsed.history) - 1
    new.extend(planned(m, True) for m in parsed.output)
    tool_calls = sum(
        1
        for m in parsed.output
        for b in m.blocks
        if b.cls is BlockClass.AUDIT and b.tool_name is not None
    )
    return ExchangePlan(new, rewritten_at, tool_calls, supersede_current)


def exchange_fields(data: ExchangeInput, parsed: ParsedExchange) -> dict[str, Any]:
    """The Exchange row's columns from the parsed parameters."""
    p = parsed.params

    def s(value: str | None, n: int) -> str:
        return clean_text(value or "")[:n]

    def n(value: int | None) -> int | None:
        return value if value is not None and 0 <= value < 2**31 else None

    return {
        "format": data.format,
        "streamed": data.stream is not None,
        "started_at": data.started_at,
        "latency_ms": data.latency_ms,
        "requested_model": s(p.requested_model, 200),
        "response_model": s(p.response_model, 200),
        "response_id": s(p.response_id, 200),
        "thinking": s(p.thinking, 40),
        "effort": s(p.effort, 40),
        "budget_tokens": n(p.budget_tokens),
        "max_tokens": n(p.max_tokens),
        "input_tokens": n(p.usage.input_tokens),
        "cache_read_tokens": n(p.usage.cache_read_tokens),
        "cache_write_tokens": n(p.usage.cache_write_tokens),
        "output_tokens": n(p.usage.output_tokens),
        "reasoning_tokens": n(p.usage.reasoning_tokens),
        "stop_reason": s(p.stop_reason, 60),
        "server_tool_counts": {
            clean_text(k)[:100]: v for k, v in p.server_tool_counts.items() if isinstance(v, int)
        },
        "truncated": p.truncated,
        "refusal": p.refusal,
        "stream_error": s(p.stream_error, 100),
        "unknown_chunks": [s(kind, 100) for kind in p.unknown_chunks[:20]],
    }


def queue_of(labels: dict[str, Any]) -> str:
    queue = labels.get("queue")
    return queue[:100] if isinstance(queue, str) else ""


def unknown_type_counts(fmt: str, messages: Sequence[PlannedMessage]) -> Counter[tuple[str, str]]:
    return Counter(
        (fmt, clean_text(b.type)[:100])
        for pm in messages
        for b in pm.message.blocks
        if b.cls is BlockClass.UNKNOWN
    )


def unknown_types_record(counts: Counter[tuple[str, str]]) -> None:
    """Count block types the code has not classified, for the admin's list."""
    now = timezone.now()
    for (fmt, provider_type), seen in sorted(counts.items()):
        UnknownBlockType.objects.bulk_create(
            [UnknownBlockType(format=fmt, provider_type=provider_type)], ignore_conflicts=True
        )
        UnknownBlockType.objects.filter(format=fmt, provider_type=provider_type).update(
            seen_count=F("seen_count") + seen, last_seen_at=now
        )


def encrypt_settings(
    key: bytes, conversation_id: int, ordinal: int, parsed: ParsedExchange
) -> bytes:
    """The request's settings (system prompt, tools...), encrypted: kept, never projected."""
    plain = json.dumps(parsed.params.request_settings, ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )
    return crypto.encrypt(key, plain, exchange_aad(conversation_id, ordinal))
