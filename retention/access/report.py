"""The audited selector: ``subject_access_read`` builds the report (and, asked, the package's
contents), checks who asks, and writes the audit row as its last statement."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import Http404
from django.utils import timezone

import audit
from conversations.models import Conversation
from conversations.permissions import require_compliance
from conversations.projection.redaction import redact
from conversations.reviews.held import HeldTrace, reasoning_texts
from conversations.selectors import conversation_page
from conversations.sharing.notes import note_templates
from conversations.sharing.transcript import Transcript, transcript_of

from .covered import covered_customer, covered_ids, covered_union
from .exposure import (
    Grant,
    LeftRow,
    ReadRow,
    ReviewRow,
    audit_reads,
    audit_reviews,
    could_read,
    exports_made,
    share_links,
)
from .inventory import Reasoning, Store, reasoning_of_conversations, stores_of
from .schedule import Erasure, erasure_of, subject_hash_of

FORMATS = ("json", "md")
MAX_PURPOSE = 300
MAX_ID = 200


class AccessRefused(ValueError):
    """Bad input: the field and why (the command's CommandError, the page's form error)."""

    def __init__(self, detail: str, *, field: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


@dataclass(frozen=True)
class ConversationRow:
    id: int
    external_id: str
    queue: str
    status: str
    created_at: datetime
    last_activity_at: datetime
    messages: int
    exchanges: int


@dataclass
class Report:
    customer: str
    conversation: str | None  # the one conversation asked about, or None: the customer
    generated_at: datetime
    purpose: str
    conversations: list[ConversationRow]
    stores: list[Store]
    reasoning_held: Reasoning
    reads: list[ReadRow]
    reviews: list[ReviewRow]
    could_read: list[Grant]
    left: list[LeftRow]
    erasure: Erasure
    audit_id: int = 0
    # The package only (``package=True``): transcripts through the one projection and, asked
    # with a purpose, the reasoning text.
    transcripts: list[tuple[int, Transcript]] = field(default_factory=list)
    reasoning_text: list[HeldTrace] = field(default_factory=list)


def _check(customer: str, conversation: str | None, purpose: str, fmt: str) -> str:
    if not isinstance(customer, str) or not customer.strip() or len(customer) > MAX_ID:
        raise AccessRefused(f"the customer id is 1 to {MAX_ID} characters", field="customer")
    if "\x00" in customer or (conversation and "\x00" in conversation):
        raise AccessRefused("an id holds no NUL character", field="customer")
    if conversation is not None and (not conversation.strip() or len(conversation) > MAX_ID):
        raise AccessRefused(
            f"the conversation id is 1 to {MAX_ID} characters", field="conversation"
        )
    purpose = (purpose or "").strip()
    if not purpose:
        raise AccessRefused("a subject access report states its purpose", field="purpose")
    if len(purpose) > MAX_PURPOSE or "\x00" in purpose:
        raise AccessRefused(f"the purpose is at most {MAX_PURPOSE} characters", field="purpose")
    if fmt not in (*FORMATS, "page", "panel"):
        raise AccessRefused(f"the format is one of {', '.join(FORMATS)}", field="format")
    return purpose


def _conversations(customer: str, conversation: str | None) -> list[Conversation]:
    qs = Conversation.objects.filter(customer_external_id=customer)
    if conversation is not None:
        named = qs.filter(external_id=conversation)
        if conversation.isdigit() and len(conversation) < 19 and not named.exists():
            named = qs.filter(pk=int(conversation))  # the internal id, as the pages show it
        qs = named
    rows = list(
        qs.only(
            "pk",
            "external_id",
            "customer_external_id",
            "queue",
            "status",
            "created_at",
            "last_activity_at",
            "message_count",
            "exchange_count",
        ).order_by("pk")
    )
    if conversation is not None and not rows:
        raise AccessRefused("no such conversation of this customer", field="conversation")
    return rows


def _build(
    customer: str, conversation: str | None, purpose: str, rows: list[Conversation]
) -> Report:
    now = timezone.now()
    ids = [c.pk for c in rows]
    customer_scope = conversation is None
    covered = covered_customer(customer, ids) if customer_scope else covered_ids(ids)
    subject_hash = subject_hash_of(customer)
    erasure = erasure_of(rows, covered, subject_hash=subject_hash, customer_scope=customer_scope)
    # Who read it: also the conversations erased already (the log keeps their internal ids).
    _, past = covered_union(covered, erasure.past_conversation_ids)
    reads, audit_rows = audit_reads(covered, past, subject_hash if customer_scope else "")
    exports = exports_made(covered, past)
    links = share_links(covered, now)
    horizon = erasure.backup_horizon.isoformat() if erasure.backup_horizon else "(held: no date)"
    stores = stores_of(covered, exports=len(exports), audit_rows=audit_rows, backups_until=horizon)
    return Report(
        customer=customer,
        conversation=rows[0].external_id if conversation is not None else None,
        generated_at=now,
        purpose=purpose,
        conversations=[
            ConversationRow(
                c.pk,
                c.external_id,
                c.queue,
                c.status,
                c.created_at,
                c.last_activity_at,
                c.message_count,
                c.exchange_count,
            )
            for c in rows
        ],
        stores=stores,
        reasoning_held=reasoning_of_conversations(covered, stores),
        reads=reads,
        reviews=audit_reviews(covered, past),
        could_read=could_read(covered, {c.queue for c in rows}, links),
        left=sorted([*exports, *links], key=lambda r: r.at, reverse=True),
        erasure=erasure,
    )


def _transcripts(rows: list[Conversation]) -> list[tuple[int, Transcript]]:
    """Each conversation as an export shows it (the system's view: no restricted field)."""
    zone_name = settings.TIME_ZONE
    zone = zoneinfo.ZoneInfo(zone_name)
    templates = note_templates()
    out = []
    for c in rows:
        page = conversation_page(c, can_see_restricted=False, every_branch=True)
        out.append((c.pk, transcript_of(page, zone=zone, zone_name=zone_name, templates=templates)))
    return out


@transaction.atomic
def subject_access_read(
    *,
    user: Any,
    customer: str,
    purpose: str,
    fmt: str,
    conversation: str | None = None,
    package: bool = False,
    include_reasoning: bool = False,
) -> Report:
    """The subject access report of ``customer`` (or of one of their conversations: its chat
    backend id or internal id), for ``purpose``. ``user``: compliance staff or an admin (404 for
    anyone else); None: the ``subject_access`` command. ``package``: also the transcripts;
    ``include_reasoning`` (with ``package``): also the reasoning text, redacted. Audited last
    (``subject_access.reported``: who, the customer's keyed hash, the purpose redacted, whether
    reasoning was included). Raises ``AccessRefused`` for bad input (nothing is recorded)."""
    if user is not None:
        require_compliance(user)
    purpose = _check(customer, conversation, purpose, fmt)
    if include_reasoning and not package:
        raise AccessRefused("reasoning text goes only into a package", field="include_reasoning")
    try:
        rows = _conversations(customer, conversation)
    except AccessRefused:
        if user is not None:
            raise Http404("no such conversation") from None
        raise
    report = _build(customer, conversation, purpose, rows)
    if package:
        report.transcripts = _transcripts(rows)
        if include_reasoning:
            report.reasoning_text = reasoning_texts([c.pk for c in rows])
    event = audit.record(
        "subject_access.reported",
        actor=user,
        subject=customer,
        conversation_id=rows[0].pk if conversation is not None else None,
        purpose=redact(purpose),
        format=fmt,
        scope="conversation" if conversation is not None else "customer",
        conversations=len(rows),
        reasoning=bool(include_reasoning),
        package=bool(package),
    )
    report.audit_id = event.pk
    return report
