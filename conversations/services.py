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
from .guards import Refusals
from .keys import data_key_for, decrypt_message
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
    ToolLink,
)
from .planning import ExchangeInput, IngestConflict, exchange_parse
from .policies import field_policies, policies_changed
from .projection import Policies, project_block
from .writer import ingest_batch

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
    """Record what the customer did next, and fold the conversation's events into its status
    (``workspace/status.py``). The conversation's row is locked first, so two events arriving
    at once each fold the other in."""
    from .workspace.status import conversation_status

    locked = (
        Conversation.objects.select_for_update()
        .filter(pk=conversation.pk)
        .values_list("last_activity_at", flat=True)
        .first()
    )
    event = ConversationEvent.objects.create(
        conversation=conversation, type=type, at=at, value=value
    )
    status, status_at = conversation_status(
        ConversationEvent.objects.filter(conversation=conversation)
        .order_by("at", "pk")
        .values_list("type", "at")
    )
    last = max(locked or conversation.last_activity_at, at)
    Conversation.objects.filter(pk=conversation.pk).update(
        last_activity_at=last, status=status, status_at=status_at
    )
    conversation.last_activity_at, conversation.status = last, status
    conversation.status_at = status_at
    return event


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@transaction.atomic
def service_token_create(
    *, name: str, scope: str = ServiceToken.Scope.INGEST, actor: Any = None
) -> tuple[ServiceToken, str]:
    """A new token (for the chat backend, or a ticketing system with scope ``compliance``); the
    clear token is returned once and never stored. Audited (``token.created``)."""
    token = "sct_" + secrets.token_urlsafe(32)
    row = ServiceToken.objects.create(
        name=name, scope=scope, prefix=token[:10], token_sha256=token_hash(token)
    )
    audit.record("token.created", actor=actor, token=row.pk, name=row.name, scope=row.scope)
    return row, token


@transaction.atomic
def service_token_update(
    *, token: ServiceToken, name: str | None = None, scope: str | None = None, actor: Any = None
) -> ServiceToken:
    """Rename a token or change its scope (``token.changed``, naming the fields changed). A scope
    it never had is refused; nothing changed writes nothing."""
    row = ServiceToken.objects.select_for_update().get(pk=token.pk)
    changed = []
    if name is not None and name != row.name:
        row.name = name
        changed.append("name")
    if scope is not None and scope != row.scope:
        if scope not in ServiceToken.Scope.values:
            raise ValueError(f"unknown token scope {scope!r}")
        row.scope = scope
        changed.append("scope")
    if changed:
        row.full_clean()
        row.save(update_fields=changed)
        audit.record("token.changed", actor=actor, token=row.pk, fields=changed, scope=row.scope)
    return row


@transaction.atomic
def service_token_revoke(*, token: ServiceToken, actor: Any = None) -> ServiceToken:
    """Revoke a token now (``token.revoked``); revoking a revoked token changes nothing."""
    row = ServiceToken.objects.select_for_update().get(pk=token.pk)
    if row.revoked_at is None:
        row.revoked_at = timezone.now()
        row.save(update_fields=["revoked_at"])
        audit.record("token.revoked", actor=actor, token=row.pk)
    return row


@transaction.atomic
def tool_link_save(*, link: ToolLink, actor: Any = None) -> ToolLink:
    """Save a tool's source-system link (``tool_link.changed``); pages link with it at once."""
    link.full_clean()
    link.save()
    transaction.on_commit(policies_changed)
    audit.record(
        "tool_link.changed", actor=actor, change="saved", tool=link.tool_name, link=link.pk
    )
    return link


@transaction.atomic
def tool_link_delete(*, link: ToolLink, actor: Any = None) -> None:
    tool, pk = link.tool_name, link.pk
    link.delete()
    transaction.on_commit(policies_changed)
    audit.record("tool_link.changed", actor=actor, change="deleted", tool=tool, link=pk)


@transaction.atomic
def queue_create(*, name: str, actor: Any = None) -> Queue:
    """A queue, named once: conversations name their queue, so a queue is never renamed (the
    database refuses it, migration 0006) and a rename can never hide its conversations."""
    queue = Queue(name=name)
    queue.full_clean()
    queue.save()
    audit.record("queue.created", actor=actor, queue=queue.name)
    return queue


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
