"""Writes to the conversation store. Every state change goes through a function here (or one
re-exported here from its room).

Ingest: ``conversation_ingest_exchange`` stores one exchange through the pipeline of
``ingest/`` (``ingest/pipeline.py`` calls its stages in order; ``manage.py ingest`` sends it
batches). Re-projection after a policy change: ``projection/reproject.py``, enqueued here as
``tasks.reproject`` (tasks import the room, not this module, so the two never import each other).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.utils import timezone

import audit

from .cache_errors import CACHE_ERRORS
from .ingest.body import ExchangeInput
from .ingest.errors import IngestConflict
from .ingest.guards import Refusals
from .ingest.parse import exchange_parse
from .ingest.pipeline import ingest_batch
from .live.services import live_exchange_finish
from .models import (
    Conversation,
    ConversationEvent,
    FieldPolicy,
    IdempotencyKey,
    Queue,
    ReprojectionJob,
    ServiceToken,
    ToolLink,
)
from .permissions import SEE_QUEUE, access_conversation
from .projection.policies import policies_changed
from .projection.reproject import conversation_reproject, reprojection_run
from .tasks import reproject

__all__ = [
    "ExchangeInput",
    "IngestConflict",
    "Ingested",
    "body_sha256",
    "conversation_ingest_exchange",
    "conversation_record_event",
    "conversation_reproject",
    "exchange_parse",
    "field_policy_delete",
    "field_policy_save",
    "queue_create",
    "queue_grant",
    "reprojection_run",
    "service_token_create",
    "service_token_revoke",
    "service_token_update",
    "token_hash",
    "tool_link_delete",
    "tool_link_save",
]


@dataclass(frozen=True, slots=True)
class Ingested:
    """One stored exchange, as the ingest answers it: the conversation (the backend's id), the
    exchange's id, the sequences of its messages, whether it rewrote the history (and where) and
    the branch it is on. ``replayed``: a retry with the same Idempotency-Key, answered from the
    first result, stored nothing new."""

    conversation: str
    exchange: int
    sequences: list[int]
    history_rewritten: bool
    rewritten_at: int | None
    branch: str
    branched_at: int | None
    replayed: bool = False

    def as_json(self) -> dict[str, Any]:
        """The members the API answers with (and an idempotent retry is answered with again)."""
        return {name: getattr(self, name) for name in _INGESTED_MEMBERS}

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> Ingested:
        return cls(
            conversation=stored["conversation"],
            exchange=stored["exchange"],
            sequences=stored["sequences"],
            history_rewritten=bool(stored.get("history_rewritten")),
            rewritten_at=stored.get("rewritten_at"),
            branch=stored.get("branch") or "",
            branched_at=stored.get("branched_at"),
            replayed=True,
        )


_INGESTED_MEMBERS = (
    "conversation",
    "exchange",
    "sequences",
    "history_rewritten",
    "rewritten_at",
    "branch",
    "branched_at",
)


def conversation_ingest_exchange(
    *,
    data: ExchangeInput,
    token: ServiceToken | None = None,
    idempotency_key: str | None = None,
    request_sha256: str | None = None,
) -> Ingested:
    """Store one provider exchange and return what was stored.

    Parsing happens before the transaction opens (it is pure and can be slow); FormatError
    propagates and nothing is written. With an idempotency key, the first result is stored in the
    same transaction as the exchange and returned again for a retry with the same body. An
    exchange an ingest guard refuses (``guards.py``) raises ``Refused`` and stores nothing; the
    refusal is recorded once the transaction has rolled back. An exchange that ends a live
    stream (``live_exchange``) closes it once the transaction has committed.
    """
    parsed = exchange_parse(data)
    if idempotency_key is not None and token is not None:
        previous = _idempotent_result(token, idempotency_key, request_sha256)
        if previous is not None:
            _close_live(data, previous.exchange)
            return previous
    try:
        with transaction.atomic(durable=True):
            result = ingest_batch([(0, data, parsed)], retry_refused=False)
            if result.rejected:
                raise result.rejected[0][1]
            stored = result.stored[0]
            ingested = Ingested(
                conversation=data.conversation,
                exchange=stored.exchange_id,
                sequences=stored.sequences,
                history_rewritten=stored.rewritten_at is not None,
                rewritten_at=stored.rewritten_at,
                branch=stored.branch,
                branched_at=stored.branched_at,
            )
            if idempotency_key is not None and token is not None:
                IdempotencyKey.objects.create(
                    token=token,
                    key=idempotency_key,
                    request_sha256=request_sha256 or "",
                    conversation_id=stored.conversation_id,
                    status_code=201,
                    response=ingested.as_json(),
                )
    except Refusals as refusals:
        refusals.record()
        raise refusals.refused[0] from None
    except IntegrityError:
        # A concurrent request with the same key won the race: its result is the answer.
        if idempotency_key is not None and token is not None:
            previous = _idempotent_result(token, idempotency_key, request_sha256)
            if previous is not None:
                _close_live(data, previous.exchange)
                return previous
        raise
    _close_live(data, ingested.exchange)  # the transaction is durable: it has committed here
    return ingested


def _close_live(data: ExchangeInput, exchange_id: int) -> None:
    """After the commit, the live stream this exchange ends (``live_exchange``) closes: a
    courtesy to its viewers, so with Redis down the stored exchange still stands (the stream
    ends by its state's expiry instead)."""
    if data.live_exchange is not None:
        with contextlib.suppress(*CACHE_ERRORS):
            live_exchange_finish(data.conversation, data.live_exchange, exchange_id=exchange_id)


def _idempotent_result(
    token: ServiceToken, key: str, request_sha256: str | None
) -> Ingested | None:
    stored = IdempotencyKey.objects.filter(token=token, key=key).first()
    if stored is None:
        return None
    if request_sha256 is not None and stored.request_sha256 != request_sha256:
        raise IngestConflict(
            "this Idempotency-Key was used with a different body",
            field="Idempotency-Key",
            code="idempotency_key_reused",
        )
    return Ingested.from_json(stored.response)


@transaction.atomic(durable=True)
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


@transaction.atomic(durable=True)
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
    database refuses it: a trigger of the conversations app's migration) and a rename can never
    hide its conversations."""
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
def field_policy_save(*, policy: FieldPolicy, actor: Any = None) -> ReprojectionJob:
    """Save a policy and re-project every conversation under the new table (in the background).
    Audited in the same transaction."""
    policy.full_clean()
    policy.save()
    return _policies_changed(change="saved", description=str(policy), actor=actor)


@transaction.atomic(durable=True)
def conversation_review_ask(
    *, actor: Any, conversation_id: int, purpose: str, reference: str, days: int
) -> Any:
    """A reviewer asks for a review grant on a conversation they may read (404 otherwise, like
    a missing one): ``reviews.access.review_access_request`` checks the rest and audits."""
    from .reviews.access import review_access_request

    conversation = access_conversation(actor, conversation_id)
    return review_access_request(
        actor=actor, conversation=conversation, purpose=purpose, reference=reference, days=days
    )


@transaction.atomic
def field_policies_save(*, policies: list[FieldPolicy], actor: Any = None) -> ReprojectionJob:
    """Save several policies (several fields of one tool) as one change: one re-projection job,
    one audit row naming each. All or none: the first invalid one raises ``ValidationError``."""
    for policy in policies:
        policy.full_clean()
    for policy in policies:
        policy.save()
    return _policies_changed(
        change="saved", description="; ".join(str(p) for p in policies), actor=actor
    )


@transaction.atomic
def field_policy_delete(*, policy: FieldPolicy, actor: Any = None) -> ReprojectionJob:
    description = str(policy)
    policy.delete()
    return _policies_changed(change="deleted", description=description, actor=actor)


def _policies_changed(*, change: str, description: str, actor: Any) -> ReprojectionJob:
    job = ReprojectionJob.objects.create(reason=f"policy {change}: {description}"[:300])
    transaction.on_commit(policies_changed)
    transaction.on_commit(lambda: reproject.delay(job.pk))
    audit.record("policy.changed", actor=actor, change=change, policy=description, job=job.pk)
    return job


@transaction.atomic
def queue_grant(
    *, principal: Any, queue_name: str, revoke: bool = False, actor: Any = None
) -> Queue:
    """Let a user or a group see a queue's conversations (or stop them): a guardian object
    permission on the queue, created if no conversation named it yet."""
    from guardian.shortcuts import assign_perm, remove_perm

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
