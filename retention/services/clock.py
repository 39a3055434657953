"""The retention clock: one tick files the expired conversations as a retention request, then
claims and executes due requests one by one (``tasks.retention_tick``, on the one beat entry)."""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.db import Error, connection, transaction
from django.utils import timezone

import audit
from conversations.models import Conversation

from ..models import DeletionRequest, RetentionClass
from .erase import live_state_sweep
from .execution import deletion_request_claim, deletion_request_execute, deletion_request_release
from .holds import active_holds, hold_for
from .requests import preview_counts

logger = logging.getLogger("retention.services")


# Expired: last activity older than the conversation's retention (its own class, else its
# queue's, else RETENTION_DEFAULT_DAYS), measured in elapsed seconds (days x 86,400), so a
# daylight-saving change neither shortens nor lengthens it. Conversations already named by an
# unfinished request are left to it. Table names come from the models, statuses from the model's
# choices (passed as a parameter), never from input.
_UNFINISHED = [
    DeletionRequest.Status.PENDING,
    DeletionRequest.Status.RUNNING,
    DeletionRequest.Status.BLOCKED,
]
_EXPIRED = f"""
    SELECT c.id FROM {Conversation._meta.db_table} c
    LEFT JOIN {RetentionClass._meta.db_table} o ON o.conversation_id = c.id
    LEFT JOIN {RetentionClass._meta.db_table} q ON q.queue = c.queue AND q.queue <> ''
    WHERE c.last_activity_at + make_interval(secs => COALESCE(o.days, q.days, %s) * 86400) < %s
      AND NOT EXISTS (
        SELECT 1 FROM {DeletionRequest._meta.db_table} r
        WHERE r.status = ANY(%s) AND c.id = ANY(r.conversation_ids)
      )
    ORDER BY c.id
    LIMIT %s
    FOR UPDATE OF c SKIP LOCKED
"""  # noqa: S608
# One sweep at a time (two ticks must not file the same conversations twice).
_SWEEP_LOCK = 0x7265746E  # "retn"


def retention_sweep(*, now: datetime | None = None) -> tuple[DeletionRequest | None, int]:
    """File the expired conversations not under a legal hold as one retention request, due now;
    returns it (None when nothing expired) and how many expired ones a hold kept."""
    now = now or timezone.now()
    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("SELECT pg_try_advisory_xact_lock(%s)", [_SWEEP_LOCK])
            if not cur.fetchone()[0]:
                return None, 0
            cur.execute(
                _EXPIRED,
                [
                    settings.RETENTION_DEFAULT_DAYS,
                    now,
                    [str(status) for status in _UNFINISHED],
                    settings.RETENTION_SWEEP_LIMIT,
                ],
            )
            expired = [row[0] for row in cur.fetchall()]
        if not expired:
            return None, 0
        holds = active_holds()
        keep: list[int] = []
        held = 0
        for conversation in Conversation.objects.filter(pk__in=expired).only(
            "pk", "queue", "customer_external_id"
        ):
            if holds and hold_for(holds, subject_hash="", conversations=[conversation]):
                held += 1
            else:
                keep.append(conversation.pk)
        if not keep:
            return None, held
        request = DeletionRequest.objects.create(
            scope=DeletionRequest.Scope.RETENTION,
            conversation_ids=sorted(keep),
            reason="retention period expired",
            due=now,
            preview=preview_counts(keep),
        )
    return request, held


def _release(request: DeletionRequest) -> None:
    try:
        deletion_request_release(request)
    except Error:
        logger.warning("deletion request %s: its lock went with the connection", request.pk)


def retention_tick(*, now: datetime | None = None, limit: int = 50) -> dict[str, int]:
    """One tick of the clock: file expired conversations, then claim and execute due requests
    one by one (at most ``limit``), then forget the live state Redis still holds of conversations
    that no longer exist (an erasure's forget that found Redis down). Idempotent: run it twice,
    nothing happens twice."""
    started = timezone.now()
    now = now or started
    sweep, held = retention_sweep(now=now)
    Status = DeletionRequest.Status
    done = {"requests": 0, Status.COMPLETED: 0, Status.BLOCKED: 0, Status.FAILED: 0, "held": held}
    tried: list[int] = []
    for _ in range(limit):
        request = deletion_request_claim(now=now, exclude=tried)
        if request is None:
            break
        tried.append(request.pk)
        try:
            request = deletion_request_execute(request=request)
        except Exception as exc:
            # Left running with its claim token given up: the claim goes stale and a later tick
            # resumes it (every step is idempotent), until RETENTION_MAX_ATTEMPTS claims have
            # failed. (A worker killed here gives up nothing: the next tick resumes at once.)
            logger.exception(
                "deletion request %s failed (attempt %s)", request.pk, request.attempts
            )
            failed = request.attempts >= settings.RETENTION_MAX_ATTEMPTS
            DeletionRequest.objects.filter(pk=request.pk, claim_token=request.claim_token).update(
                status=DeletionRequest.Status.FAILED if failed else DeletionRequest.Status.RUNNING,
                error=f"{type(exc).__name__}: {exc}"[:2000],
                claim_token="",
            )
            done[Status.FAILED] += int(failed)
            continue
        finally:
            _release(request)
        done["requests"] += 1
        done[request.status] = done.get(request.status, 0) + 1
    done["live_forgotten"] = live_state_sweep()
    if sweep is not None:
        sweep.refresh_from_db()
        with transaction.atomic(durable=True):
            audit.record(
                "retention.swept",
                conversations=sweep.conversations_erased,
                requests=1,
                blocked=held,
                duration_ms=int((timezone.now() - started).total_seconds() * 1000),
            )
    return done
