"""Writes to the conversation store. Every state change goes through a function here.

Ingest runs in two steps so that the same rules serve the API and the bulk path:
``exchange_plan`` (pure: parsed exchange + what the conversation already holds -> the rows to add,
and whether the history was rewritten) and a writer (the ORM here; COPY in ``bulk.py``).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from . import formats
from .blocks import BlockClass, Message, ParsedExchange
from .models import (
    Block,
    Conversation,
    ConversationEvent,
    Exchange,
    IdempotencyKey,
    ServiceToken,
    UnknownBlockType,
)
from .models import Message as MessageRow
from .projection import clean_text, project_block
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


@dataclass(frozen=True, slots=True)
class IngestResult:
    conversation: Conversation
    exchange_id: int
    sequences: list[int]
    history_rewritten: bool
    rewritten_at: int | None

    def as_response(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation.external_id,
            "exchange": self.exchange_id,
            "sequences": self.sequences,
            "history_rewritten": self.history_rewritten,
            "rewritten_at": self.rewritten_at,
        }


def exchange_parse(data: ExchangeInput) -> ParsedExchange:
    """Parse with the format's module; raises FormatError for anything that does not fit."""
    return formats.get(data.format).parse(
        request=data.request, response=data.response, stream=data.stream
    )


def exchange_plan(fmt: str, parsed: ParsedExchange, current: Sequence[str]) -> ExchangePlan:
    """Which messages are new, and where (if anywhere) the history sent differs from the stored.

    ``current`` holds the canonical hashes of the conversation's current messages, in order. The
    transcript is append-only: the history element at position i matches the current message i
    when their canonical forms are equal; elements past the current length are new. The first
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
                    and canonical_sha256(message.raw, fmt) != current[i]
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
    }


def queue_of(labels: dict[str, Any]) -> str:
    queue = labels.get("queue")
    return queue[:100] if isinstance(queue, str) else ""


def _lock_conversation(data: ExchangeInput, now: datetime) -> Conversation:
    """The conversation row, created if new, locked for the rest of the transaction so that
    concurrent exchanges of one conversation take sequence numbers one after the other."""
    Conversation.objects.bulk_create(
        [
            Conversation(
                external_id=data.conversation,
                customer_external_id=data.customer,
                queue=queue_of(data.labels),
                labels=data.labels,
                last_activity_at=now,
            )
        ],
        ignore_conflicts=True,
    )
    conversation = Conversation.objects.select_for_update().get(external_id=data.conversation)
    if conversation.customer_external_id != data.customer:
        raise IngestConflict(
            "this conversation belongs to another customer",
            field="customer",
            code="customer_mismatch",
        )
    return conversation


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


def _write(data: ExchangeInput, parsed: ParsedExchange) -> IngestResult:
    now = timezone.now()
    conversation = _lock_conversation(data, now)
    stored = list(
        MessageRow.objects.filter(conversation=conversation)
        .order_by("sequence")
        .values_list("pk", "canonical_sha256", "superseded")
    )
    current = [(pk, canon) for pk, canon, superseded in stored if not superseded]
    plan = exchange_plan(data.format, parsed, [canon for _, canon in current])
    if plan.supersede_current is not None:
        MessageRow.objects.filter(pk=current[plan.supersede_current][0]).update(superseded=True)
    exchange = Exchange.objects.create(
        conversation=conversation,
        history_rewritten=plan.rewritten_at is not None,
        rewritten_at=plan.rewritten_at,
        tool_call_count=plan.tool_call_count,
        **exchange_fields(data, parsed),
    )
    first = len(stored)
    rows = MessageRow.objects.bulk_create(
        [
            MessageRow(
                conversation=conversation,
                exchange=exchange,
                sequence=first + i,
                role=clean_text(pm.message.role)[:20],
                from_response=pm.from_response,
                superseded=pm.superseded,
                raw=pm.message.raw,
                sha256=pm.sha256,
                canonical_sha256=pm.canonical_sha256,
            )
            for i, pm in enumerate(plan.new_messages)
        ]
    )
    Block.objects.bulk_create(
        [
            Block(message=row, conversation=conversation, position=pos, **project_block(b))
            for row, pm in zip(rows, plan.new_messages, strict=True)
            for pos, b in enumerate(pm.message.blocks)
        ]
    )
    unknown_types_record(unknown_type_counts(data.format, plan.new_messages))
    Conversation.objects.filter(pk=conversation.pk).update(
        message_count=F("message_count") + len(rows),
        exchange_count=F("exchange_count") + 1,
        last_activity_at=now,
    )
    return IngestResult(
        conversation=conversation,
        exchange_id=exchange.pk,
        sequences=[r.sequence for r in rows],
        history_rewritten=plan.rewritten_at is not None,
        rewritten_at=plan.rewritten_at,
    )


def conversation_ingest_exchange(
    *,
    data: ExchangeInput,
    token: ServiceToken | None = None,
    idempotency_key: str | None = None,
    request_sha256: str | None = None,
) -> tuple[int, dict[str, Any]]:
    """Store one provider exchange; returns (HTTP status, response body).

    Parsing happens before the transaction opens (it is pure and can be slow); FormatError
    propagates and nothing is written. With an idempotency key, the first result is stored in the
    same transaction as the exchange and returned again for a retry with the same body.
    """
    parsed = exchange_parse(data)
    if idempotency_key is not None and token is not None:
        previous = _idempotent_result(token, idempotency_key, request_sha256)
        if previous is not None:
            return previous
    try:
        with transaction.atomic():
            result = _write(data, parsed)
            body = result.as_response()
            if idempotency_key is not None and token is not None:
                IdempotencyKey.objects.create(
                    token=token,
                    key=idempotency_key,
                    request_sha256=request_sha256 or "",
                    conversation=result.conversation,
                    status_code=201,
                    response=body,
                )
    except IntegrityError:
        # A concurrent request with the same key won the race: its result is the answer.
        if idempotency_key is not None and token is not None:
            previous = _idempotent_result(token, idempotency_key, request_sha256)
            if previous is not None:
                return previous
        raise
    return 201, body


def _idempotent_result(
    token: ServiceToken, key: str, request_sha256: str | None
) -> tuple[int, dict[str, Any]] | None:
    stored = IdempotencyKey.objects.filter(token=token, key=key).first()
    if stored is None:
        return None
    if request_sha256 is not None and stored.request_sha256 != request_sha256:
        raise IngestConflict(
            "this Idempotency-Key was used with a different body",
            field="Idempotency-Key",
            code="idempotency_key_reused",
        )
    return stored.status_code, stored.response


@transaction.atomic
def conversation_record_event(
    *, conversation: Conversation, type: str, at: datetime, value: Any
) -> ConversationEvent:
    event = ConversationEvent.objects.create(
        conversation=conversation, type=type, at=at, value=value
    )
    Conversation.objects.filter(pk=conversation.pk).update(
        last_activity_at=max(conversation.last_activity_at, at)
    )
    return event


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@transaction.atomic
def service_token_create(*, name: str) -> tuple[ServiceToken, str]:
    """A new token for the chat backend; the clear token is returned once and never stored."""
    token = "sct_" + secrets.token_urlsafe(32)
    row = ServiceToken.objects.create(name=name, prefix=token[:10], token_sha256=token_hash(token))
    return row, token


def body_sha256(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
    ).hexdigest()
