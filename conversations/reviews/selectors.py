"""The read of a review: decrypt, read the reasoning, fetch what is missing, redact, audit,
limit (see the package docstring)."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

import audit
from audit.hashing import hmac_key
from audit.selectors import AuditFilters, audit_events

from ..formats import profile
from ..formats.profile import Profile
from ..keystore.keys import data_key_for, decrypt_message
from ..models import Block, Exchange, Message, ReviewAlert, ReviewGrant
from ..projection.redaction import redact
from . import provider
from .grants import ReviewError, review_grant_live
from .reasoning import Trace, TraceKind, Withheld, fetched_reasoning, reasoning_of

logger = logging.getLogger("conversations.reviews")

# Provider fetches in one review: a conversation of many exchanges must not hold the page (and
# its transaction) for many timeouts.
MAX_FETCHES = 10
# pg_advisory_xact_lock(namespace, user id): serialises one user's reviews ("REVI").
_LOCK_NAMESPACE = 0x52455649


class ReviewNotAllowed(ReviewError):
    """No live grant: the caller answers as for a missing conversation (404)."""


class ReviewRateLimited(ReviewError):
    def __init__(self, *, count: int, limit: int) -> None:
        super().__init__(f"{count} reviews in the last hour; the limit is {limit}")
        self.count = count
        self.limit = limit


_KIND_LABELS = {
    TraceKind.THINKING: "thinking",
    TraceKind.SUMMARY: "reasoning summary",
    TraceKind.REASONING_TEXT: "reasoning text",
    TraceKind.REASONING_CONTENT: "reasoning content",
    TraceKind.REASONING_PART: "reasoning part",
}
_STORED = "stored with the exchange"
_FETCHED = "fetched from the provider at read time"


@dataclass(frozen=True)
class ShownTrace:
    """One piece of reasoning as the page shows it: ``text`` redacted, or a ``note`` saying why
    there is no text."""

    label: str
    text: str = ""
    note: str = ""
    source: str = _STORED


@dataclass(frozen=True)
class ShownExchange:
    id: int
    ordinal: int
    format: str
    model: str
    reasoning_tokens: int | None
    traces: list[ShownTrace] = field(default_factory=list)
    notice: str = ""  # why a fetch gave nothing, in the reviewer's words
    # The visible answer this exchange produced (as the conversation page shows it), so the
    # reviewer reads the reasoning beside what it led to. Not part of ``content_hash``: it is
    # the conversation's own visible text, not what the review discloses.
    answer: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Review:
    conversation_id: int
    grant: ReviewGrant
    exchanges: list[ShownExchange]
    content_hash: str
    audit_id: int
    at: datetime


def _note(trace: Trace) -> str:
    if trace.withheld is Withheld.REDACTED:
        return "redacted by provider"
    if trace.withheld is Withheld.OMITTED:
        return "omitted by provider"
    if trace.withheld is Withheld.MISSING:
        return "no summary returned by the provider"
    return ""


def _shown(trace: Trace, source: str) -> ShownTrace:
    return ShownTrace(
        label=_KIND_LABELS[trace.kind],
        text=redact(trace.text) if trace.text else "",
        note=_note(trace),
        source=source,
    )


def _answers(conversation_id: int) -> dict[int, list[str]]:
    """Per exchange, the visible text of the answer it produced (one query of Block rows)."""
    answers: dict[int, list[str]] = {}
    rows = (
        Block.objects.filter(
            conversation_id=conversation_id,
            block_class=Block.Class.VISIBLE,
            message__superseded=False,
            message__from_response=True,
        )
        .order_by("message__sequence", "position")
        .values_list("message__exchange_id", "text")
    )
    for exchange_id, text in rows:
        if text:
            answers.setdefault(exchange_id, []).append(text)
    return answers


def _stored_traces(conversation_id: int) -> tuple[list[Exchange], dict[int, list[Trace]]]:
    """The conversation's exchanges, and the reasoning of the current messages each brought."""
    exchanges = list(
        Exchange.objects.filter(conversation_id=conversation_id)
        .defer("settings_ciphertext")
        .order_by("ordinal")
    )
    formats = {e.pk: e.format for e in exchanges}
    rows = list(
        Message.objects.filter(conversation_id=conversation_id, superseded=False)
        .order_by("sequence")
        .values_list("sequence", "exchange_id", "raw_ciphertext")
    )
    traces: dict[int, list[Trace]] = {e.pk: [] for e in exchanges}
    if rows:
        key = data_key_for(conversation_id)
        for sequence, exchange_id, sealed in rows:
            raw = decrypt_message(key, conversation_id, sequence, sealed)
            traces[exchange_id].extend(reasoning_of(formats[exchange_id], raw))
    return exchanges, traces


def _fetcher(exchange: Exchange, traces: list[Trace]) -> Profile | None:
    """The profile of an exchange whose stored reasoning lacks what its provider keeps and gives
    back by the response's id (the profile's ``summary``: OpenAI Responses summaries), or None."""
    found = profile(exchange.format)
    if found is None or found.summary is None or found.transport is None:
        return None
    if not exchange.response_id:
        return None
    return found if found.summary.wanted(traces, exchange.reasoning_tokens) else None


def _fetched(fmt: str, stored: list[Trace], body: dict[str, Any]) -> list[Trace]:
    """The fetched response's reasoning; matched to the stored items by id when they have one."""
    fetched = [t for t in fetched_reasoning(fmt, body) if t.text]
    ids = {t.item_id for t in stored if t.item_id}
    if ids:
        fetched = [t for t in fetched if t.item_id in ids]
    return fetched


@sensitive_variables()
def _exchanges_shown(conversation_id: int) -> list[ShownExchange]:
    exchanges, traces = _stored_traces(conversation_id)
    answers = _answers(conversation_id) if exchanges else {}
    shown: list[ShownExchange] = []
    clients: dict[str, Any] = {}  # one client per provider setting of the review
    fetches = 0
    unreachable = ""
    try:
        for exchange in exchanges:
            stored = traces[exchange.pk]
            notice = ""
            items = [_shown(t, _STORED) for t in stored]
            fetcher = _fetcher(exchange, stored)
            if fetcher is not None:
                assert fetcher.transport is not None and fetcher.summary is not None
                transport = fetcher.transport
                if not provider.configured(transport):
                    notice = (
                        "The stored exchange has no reasoning summary, and no provider API key "
                        f"is configured ({transport.key_setting}) to fetch it."
                    )
                elif unreachable:
                    notice = f"Not fetched: earlier in this review, {unreachable}."
                elif fetches >= MAX_FETCHES:
                    notice = f"Not fetched: a review fetches at most {MAX_FETCHES} exchanges."
                else:
                    fetches += 1
                    http = clients.get(transport.base_url_setting)
                    if http is None:
                        http = clients[transport.base_url_setting] = provider.client(transport)
                    try:
                        body = provider.response_retrieve(
                            http, fetcher.summary, exchange.response_id
                        )
                    except provider.ProviderError as exc:
                        notice = f"The summary could not be fetched: {exc}."
                        if exc.unreachable:
                            unreachable = str(exc)
                    else:
                        fetched = _fetched(exchange.format, stored, body)
                        if fetched:
                            items = [_shown(t, _FETCHED) for t in fetched]
                        else:
                            notice = "The provider has no reasoning summary for this response."
            if not items and not notice:
                continue  # an exchange without reasoning: nothing to show or to audit
            shown.append(
                ShownExchange(
                    id=exchange.pk,
                    ordinal=exchange.ordinal,
                    format=exchange.format,
                    model=exchange.response_model or exchange.requested_model,
                    reasoning_tokens=exchange.reasoning_tokens,
                    traces=items,
                    notice=notice,
                    answer=answers.get(exchange.pk, []),
                )
            )
    finally:
        for http in clients.values():
            http.close()
    return shown


def content_hash(exchanges: Iterable[ShownExchange]) -> str:
    """A keyed hash of exactly what the page shows: compliance can later check a claimed text
    against it (with the key), while the log itself holds nothing that could be read back or
    confirmed by guessing without the key."""
    shown = [
        [e.id, [[t.label, t.text, t.note, t.source] for t in e.traces], e.notice] for e in exchanges
    ]
    payload = json.dumps(shown, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    key = hmac.new(hmac_key(), b"review.content_hash", hashlib.sha256).digest()
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def _lock_reviewer(user_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_NAMESPACE, user_id])


def _reviews_since(user_id: int, since: datetime) -> QuerySet[Any]:
    return audit_events(AuditFilters(code="review.read", actor_id=user_id, since=since))


@sensitive_variables()
@transaction.atomic
def review_read(
    *, user: Any, conversation_id: int, purpose: str, reference: str, statement: str
) -> Review:
    """Read a conversation's reasoning for ``user`` under their live grant, with the purpose
    they state now; audited in this transaction (no audit row, no read).

    Raises ReviewNotAllowed (no live grant: answer 404), ReviewRateLimited, and whatever the
    audit insert raises (AuditError, DatabaseError): then nothing may be shown.
    """
    _lock_reviewer(user.pk)
    grant = review_grant_live(user=user, conversation_id=conversation_id)
    if grant is None:
        raise ReviewNotAllowed(conversation_id)
    now = timezone.now()
    limit = int(settings.REVIEW_RATE_LIMIT)
    recent = _reviews_since(user.pk, now - timedelta(hours=1)).count()
    if recent >= limit:
        raise ReviewRateLimited(count=recent, limit=limit)

    exchanges = _exchanges_shown(conversation_id)
    digest = content_hash(exchanges)
    event = audit.record(
        "review.read",
        actor=user,
        conversation_id=conversation_id,
        grant=grant.pk,
        # The stated purpose: its category, and the reviewer's words through the redaction
        # pipeline (the log is kept for ever, so no customer detail goes into it).
        purpose={"category": purpose, "statement": redact(statement)},
        reference=reference,
        exchanges=[e.id for e in exchanges],
        content_hash=digest,
    )
    _alert_if_unusual(user, now)
    return Review(
        conversation_id=conversation_id,
        grant=grant,
        exchanges=exchanges,
        content_hash=digest,
        audit_id=event.pk,
        at=event.at,
    )


def _alert_if_unusual(user: Any, now: datetime) -> ReviewAlert | None:
    threshold = int(settings.REVIEW_ALERT_THRESHOLD)
    reviewed = (
        _reviews_since(user.pk, now - timedelta(hours=24))
        .order_by()
        .values("conversation_id")
        .distinct()
        .count()
    )
    if reviewed <= threshold:
        return None
    alert, created = ReviewAlert.objects.update_or_create(
        reviewer=user,
        day=timezone.localdate(now),
        defaults={"conversations": reviewed, "threshold": threshold, "last_review_at": now},
    )
    if created:
        # Ids and counts only: the review's content never reaches a log line.
        logger.warning(
            "review alert %s: user %s reviewed %s conversations in 24 hours (threshold %s)",
            alert.pk,
            user.pk,
            reviewed,
            threshold,
        )
    return alert
