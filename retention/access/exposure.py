"""Who read some conversations, who could read them now, and what left the console.

Read from the audit log (``conversation_id`` is the internal id, ``subject_hash`` the keyed hash
of the customer: both outlive an erasure) and from the grants and links in force. Each function
is one or two queries whatever the number of conversations, and returns plain rows.

To count a new kind of read: give its audit code a line in ``READS`` (and, if it names who may
read, a function here read by ``report.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Max, Min, Q
from django.db.models.fields.json import KT
from django.utils import timezone

from audit.models import AuditEvent
from conversations.models import (
    QueueGroupObjectPermission,
    QueueUserObjectPermission,
    ServiceToken,
    ShareLink,
)
from conversations.permissions import ADMIN_GROUP, READER_GROUPS, SEE_QUEUE
from conversations.reviews import review_grants_live

from .covered import Covered

# The audit codes that are a read of the data, in words.
READS: dict[str, str] = {
    "conversation.viewed": "opened a page of it",
    "review.read": "read its reasoning under a review grant",
    "share_link.opened": "opened a share link to it",
    "subject_access.reported": "read this report",
}


@dataclass(frozen=True)
class ReadRow:
    who: str  # the audit log's actor label (a username, service-token:<name>, share-link:<id>)
    what: str  # the code, with the page where the code has one ("conversation.viewed/export")
    words: str
    times: int
    first: datetime
    last: datetime


@dataclass(frozen=True)
class ReviewRow:
    who: str
    at: datetime
    conversation_id: int | None
    purpose: str  # the category
    statement: str  # the reviewer's words, redacted when recorded
    reference: str


@dataclass(frozen=True)
class LeftRow:
    kind: str  # "export" | "share_link"
    conversation_id: int | None
    who: str
    at: datetime
    state: str  # an export: its format; a link: live, expired or revoked
    expires_at: datetime | None = None
    opened: int = 0
    ref: int | None = None  # a link's id


@dataclass(frozen=True)
class Grant:
    who: str  # a username, or "group <name>"
    how: str  # "admin role", "queue <name>", "review grant until ...", "share link <id>"
    until: datetime | None = None
    members: int | None = None  # a group: its active members


def _named(live: Covered, past: Sequence[int]) -> Q:
    named = Q(conversation_id__in=live.q) if live else Q(pk__in=[])
    if past:
        named |= Q(conversation_id__in=list(past))
    return named


def _audit_rows(live: Covered, past: Sequence[int], subject_hash: str) -> Any:
    named = _named(live, past)
    if subject_hash:
        named |= Q(subject_hash=subject_hash)
    return AuditEvent.objects.filter(named)


def audit_reads(live: Covered, past: Sequence[int], subject_hash: str) -> tuple[list[ReadRow], int]:
    """The reads, grouped by who and what, with the first and last time; and how many rows of
    the log name these conversations or this customer at all. One query."""
    grouped = (
        _audit_rows(live, past, subject_hash)
        .order_by()
        .values("actor_label", "code", page=KT("details__page"))
        .annotate(n=Count("id"), first=Min("at"), last=Max("at"))
    )
    rows: list[ReadRow] = []
    total = 0
    for g in grouped:
        total += g["n"]
        if g["code"] not in READS:
            continue
        what = f"{g['code']}/{g['page']}" if g["page"] else g["code"]
        words = READS[g["code"]] + (f" ({g['page']})" if g["page"] else "")
        rows.append(ReadRow(g["actor_label"], what, words, g["n"], g["first"], g["last"]))
    rows.sort(key=lambda r: (r.last, r.who, r.what), reverse=True)
    return rows, total


def audit_reviews(live: Covered, past: Sequence[int]) -> list[ReviewRow]:
    """Every reasoning review, with its stated purpose. One query."""
    if not live and not past:
        return []
    rows = AuditEvent.objects.filter(_named(live, past), code="review.read").order_by("-id")
    out = []
    for e in rows.values("actor_label", "at", "conversation_id", "details"):
        purpose = e["details"].get("purpose") or {}
        if not isinstance(purpose, dict):
            purpose = {"category": str(purpose)}
        out.append(
            ReviewRow(
                e["actor_label"],
                e["at"],
                e["conversation_id"],
                str(purpose.get("category", "")),
                str(purpose.get("statement", "")),
                str(e["details"].get("reference", "")),
            )
        )
    return out


def exports_made(live: Covered, past: Sequence[int]) -> list[LeftRow]:
    """Every export (the page's download and the command), from the audit log. One query."""
    if not live and not past:
        return []
    rows = AuditEvent.objects.filter(
        _named(live, past), code="conversation.viewed", details__page="export"
    ).order_by("-id")
    return [
        LeftRow("export", e["conversation_id"], e["actor_label"], e["at"], e["format"] or "")
        for e in rows.values("actor_label", "at", "conversation_id", format=KT("details__format"))
    ]


def share_links(ids: Covered, now: datetime) -> list[LeftRow]:
    """Every share link, with its state now. One query."""
    if not ids:
        return []
    links = (
        ShareLink.objects.filter(conversation_id__in=ids.q)
        .select_related("created_by")
        .order_by("-created_at")
    )
    return [
        LeftRow(
            "share_link",
            link.conversation_id,
            link.created_by.get_username() if link.created_by else "—",
            link.created_at,
            link.state(now),
            link.expires_at,
            link.opened_count,
            link.pk,
        )
        for link in links
    ]


def could_read(ids: Covered, queues: Iterable[str], links: list[LeftRow]) -> list[Grant]:
    """Who could read them now: every active admin, the readers (agents, reviewers) granted one
    of their queues directly or through a group, the live review grants, the live share links.
    Compliance staff read this report and the audit log, not the transcripts. Five queries."""
    if not ids:
        return []
    names = sorted(set(queues))
    now = timezone.now()
    out: list[Grant] = []
    admins = (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(is_superuser=True) | Q(groups__name=ADMIN_GROUP))
        .distinct()
        .order_by("username")
        .values_list("username", flat=True)
    )
    out.extend(Grant(name, "admin role: every queue") for name in admins)
    codename = SEE_QUEUE.split(".", 1)[1]
    direct = (
        QueueUserObjectPermission.objects.filter(
            content_object__name__in=names,
            permission__codename=codename,
            user__is_active=True,
            user__groups__name__in=sorted(READER_GROUPS),
        )
        .values_list("user__username", "content_object__name")
        .distinct()
        .order_by("content_object__name", "user__username")
    )
    out.extend(Grant(user, f"queue {queue}") for user, queue in direct)
    groups = (
        QueueGroupObjectPermission.objects.filter(
            content_object__name__in=names, permission__codename=codename
        )
        .values("group__name", "content_object__name")
        .annotate(members=Count("group__user", filter=Q(group__user__is_active=True)))
        .order_by("content_object__name", "group__name")
    )
    out.extend(
        Grant(f"group {g['group__name']}", f"queue {g['content_object__name']}", None, g["members"])
        for g in groups
    )
    grants = (
        review_grants_live(now=now)
        .filter(conversation_id__in=ids.q)
        .select_related("reviewer")
        .order_by("expires_at")
    )
    out.extend(
        Grant(
            g.reviewer.get_username(),
            f"review grant on conversation {g.conversation_id} ({g.purpose})",
            g.expires_at,
        )
        for g in grants
    )
    # The chat backend's tokens replay any conversation byte for byte, reasoning included (the
    # provider needs it back): machines, but the widest readers of all. Their replays are not in
    # the audit log (machine reads), so they are named here.
    tokens = ServiceToken.objects.filter(
        scope=ServiceToken.Scope.INGEST, revoked_at__isnull=True
    ).order_by("name")
    out.extend(
        Grant(f"service-token:{name}", "ingest token: replays every conversation verbatim")
        for name in tokens.values_list("name", flat=True)
    )
    out.extend(
        Grant(
            "anyone holding the link",
            f"share link {link.ref} on conversation {link.conversation_id}",
            link.expires_at,
        )
        for link in links
        if link.state == "live"
    )
    return out
