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

from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.utils import timezone

import audit

from .formats.registry import message_blocks
from .ingest.guards import Refusals
from .ingest.planning import ExchangeInput, IngestConflict, exchange_parse
from .ingest.writer import ingest_batch
from .keystore.keys import data_key_for, decrypt_message
from .models import (
    Block,
    Conversation,
    ConversationEvent,
    FieldPolicy,
    IdempotencyKey,
    Message,
    Queue,
    ReprojectionJob,
    ServiceToken,
)
from .projection.policies import field_policies, policies_changed
from .projection.project import Policies, project_block

__all__ = [
    "ExchangeInput",
    "IngestConflict",
    "body_sha256",
    "conversation_ingest_exchange",
    "conversation_record_event",
    "conversation_reproject",
    "exchange_parse",
    "field_policy_delete",
    "field_policy_save",
    "queue_grant",
    "reprojection_run",
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
    same transaction as the exchange and returned again for a retry with the same body. An
    exchange an ingest guard refuses (``guards.py``) raises ``Refused`` and stores nothing; the
    refusal is recorded once the transaction has rolled back.
    """
    parsed = exchange_parse(data)
    if idempotency_key is not None and token is not None:
        previous = _idempotent_result(token, idempotency_key, request_sha256)
        if previous is not None:
            return previous
    try:
        with transaction.atomic():
            result = ingest_batch([(0, data, parsed)], retry_refused=False)
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
    except Refusals as refusals:
        refusals.record()
        raise refusals.refused[0] from None
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
def service_token_create(
    *, name: str, scope: str = ServiceToken.Scope.INGEST
) -> tuple[ServiceToken, str]:
    """A new token (for the chat backend, or a ticketing system with scope ``compliance``); the
    clear token is returned once and never stored."""
    token = "sct_" + secrets.token_urlsafe(32)
    row = ServiceToken.objects.create(
        name=name, scope=scope, prefix=token[:10], token_sha256=token_hash(token)
    )
    return row, token


def body_sha256(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
    ).hexdigest()


@transaction.atomic
def conversation_reproject(*, conversation_id: int, policies: Policies) -> int:
    """Rebuild one conversation's Block rows from its verbatim store under ``policies``.

    The messages are decrypted and parsed again by their format; the blocks are projected the
    way ingest projects them (tool results resolved to their call's tool name). Returns the
    number of blocks written. A conversation erased meanwhile is skipped (0).
    """
    conversation = Conversation.objects.select_for_update().filter(pk=conversation_id).first()
    if conversation is None:
        return 0
    messages = list(
        Message.objects.filter(conversation=conversation)
        .order_by("sequence")
        .values_list("pk", "sequence", "raw_ciphertext", "exchange__format")
    )
    if not messages:
        return 0
    key = data_key_for(conversation.pk)
    tool_names: dict[str, str] = {}
    rows: list[Block] = []
    for pk, sequence, sealed, fmt in messages:
        raw = decrypt_message(key, conversation.pk, sequence, sealed)
        for position, block in enumerate(message_blocks(fmt, raw)):
            if block.call_id and block.tool_name:
                tool_names.setdefault(block.call_id, block.tool_name)
            tool = tool_names.get(block.call_id or "")
            rows.append(
                Block(
                    message_id=pk,
                    conversation_id=conversation.pk,
                    position=position,
                    **project_block(block, policies, tool),
                )
            )
    Block.objects.filter(conversation=conversation).delete()
    Block.objects.bulk_create(rows)
    return len(rows)


@transaction.atomic
def field_policy_save(*, policy: FieldPolicy, actor: Any = None) -> ReprojectionJob:
    """Save a policy and re-project every conversation under the new table (in the background).
    Audited in the same transaction."""
    policy.full_clean()
    policy.save()
    return _policies_changed(change="saved", description=str(policy), actor=actor)


@transaction.atomic
def field_policy_delete(*, policy: FieldPolicy, actor: Any = None) -> ReprojectionJob:
    description = str(policy)
    policy.delete()
    return _policies_changed(change="deleted", description=description, actor=actor)


def _policies_changed(*, change: str, description: str, actor: Any) -> ReprojectionJob:
    from .tasks import reproject  # tasks import services: imported here, at call time

    job = ReprojectionJob.objects.create(reason=f"policy {change}: {description}"[:300])
    transaction.on_commit(policies_changed)
    transaction.on_commit(lambda: reproject.delay(job.pk))
    audit.record("policy.changed", actor=actor, change=change, policy=description, job=job.pk)
    return job


def reprojection_run(*, job_id: int, chunk: int = 200) -> ReprojectionJob:
    """Run (or resume) a re-projection job: every conversation, in id order, one transaction
    each, the job's progress saved after each chunk. Idempotent: a job finished is left alone,
    and a crashed one resumes after the last conversation it recorded."""
    job = ReprojectionJob.objects.get(pk=job_id)
    if job.status == ReprojectionJob.Status.COMPLETED:
        return job
    policies = field_policies(fresh=True)
    job.status = ReprojectionJob.Status.RUNNING
    job.total = Conversation.objects.count()
    job.save(update_fields=["status", "total"])
    try:
        while True:
            ids = list(
                Conversation.objects.filter(pk__gt=job.last_conversation_id)
                .order_by("pk")
                .values_list("pk", flat=True)[:chunk]
            )
            if not ids:
                break
            for conversation_id in ids:
                conversation_reproject(conversation_id=conversation_id, policies=policies)
            job.done += len(ids)
            job.last_conversation_id = ids[-1]
            job.save(update_fields=["done", "last_conversation_id"])
    except Exception as exc:
        job.status = ReprojectionJob.Status.FAILED
        job.error = f"{type(exc).__name__}: {exc}"[:2000]
        job.save(update_fields=["status", "error"])
        raise
    job.status = ReprojectionJob.Status.COMPLETED
    job.done = max(job.done, job.total)
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "done", "finished_at"])
    return job


@transaction.atomic
def queue_grant(
    *, principal: Any, queue_name: str, revoke: bool = False, actor: Any = None
) -> Queue:
    """Let a user or a group see a queue's conversations (or stop them): a guardian object
    permission on the queue, created if no conversation named it yet."""
    from guardian.shortcuts import assign_perm, remove_perm

    from .permissions import SEE_QUEUE

    queue, _ = Queue.objects.get_or_create(name=queue_name)
    if revoke:
        remove_perm(SEE_QUEUE, principal, queue)
    else:
        assign_perm(SEE_QUEUE, principal, queue)
    who = {"group": principal.pk} if isinstance(principal, Group) else {"user": principal.pk}
    audit.record(
        "queue.revoked" if revoke else "queue.granted", actor=actor, queue=queue.name, **who
    )
    return queue
