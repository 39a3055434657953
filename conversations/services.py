"""Writes to the conversation store. Every state change goes through a function here.

Ingest: ``planning.py`` holds the rules (parse, which messages are new, history rewrites),
``writer.py`` the one writer (used here for one exchange, by ``ingest`` for many).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction

from .models import Conversation, ConversationEvent, IdempotencyKey, ServiceToken
from .planning import ExchangeInput, IngestConflict, exchange_parse
from .writer import ingest_batch

__all__ = [
    "ExchangeInput",
    "IngestConflict",
    "body_sha256",
    "conversation_ingest_exchange",
    "conversation_record_event",
    "exchange_parse",
    "service_token_create",
    "token_hash",
]


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
            result = ingest_batch([(0, data, parsed)])
            if result.rejected:
                raise result.rejected[0][1]
            stored = result.stored[0]
            body = {
                "conversation": data.conversation,
                "exchange": stored.exchange_id,
                "sequences": stored.sequences,
                "history_rewritten": stored.rewritten_at is not None,
                "rewritten_at": stored.rewritten_at,
            }
            if idempotency_key is not None and token is not None:
                IdempotencyKey.objects.create(
                    token=token,
                    key=idempotency_key,
                    request_sha256=request_sha256 or "",
                    conversation_id=stored.conversation_id,
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
