"""The audited selectors of what leaves the console: the export, a share link's opening, the links
of a conversation and for compliance. Shaped like ``conversations.selectors.audited``: access (404
for missing and forbidden alike), the selectors, the transcript built from the one timeline, the
audit row as the very last statement, a plain value returned."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.http import Http404
from django.utils import timezone

import audit

from ..models import Conversation, ShareLink
from ..permissions import access_conversation, require_compliance, require_reader
from ..selectors import conversation_page
from .links import creator_may_open, link_tokens, token_sha256, token_valid
from .notes import note_templates
from .transcript import CONTENT_TYPES, FORMATS, Transcript, page_up_to, render, transcript_of


@dataclass(frozen=True)
class Export:
    text: str
    filename: str
    content_type: str
    audit_id: int


def _zone(name: str | None) -> tuple[Any, str]:
    """The time zone named (IANA), or KeyError: a name that is no key (a path such as
    ``../../etc/passwd``, a NUL, a directory) is unknown like a missing one."""
    name = name or settings.TIME_ZONE
    try:
        return zoneinfo.ZoneInfo(name), name
    except (ValueError, OSError):
        raise KeyError(name) from None


@transaction.atomic
def conversation_export_read(*, user: Any, id: int, fmt: str, zone: str | None = None) -> Export:
    """The conversation as ``user`` sees it, as text (``fmt``: md, txt or json), times in
    ``zone``. ``user`` None: the ``export_conversation`` command (the system, shown what an agent
    without ``view_restricted_fields`` is shown)."""
    if fmt not in FORMATS:
        raise Http404("no such format")
    if user is None:
        conversation = Conversation.objects.filter(pk=id).first()
        if conversation is None:
            raise Http404("no such conversation")
        restricted = False
    else:
        require_reader(user)
        conversation = access_conversation(user, id)
        restricted = user.has_perm("conversations.view_restricted_fields")
    page = conversation_page(conversation, can_see_restricted=restricted, every_branch=True)
    tz, zone_name = _zone(zone)
    transcript = transcript_of(page, zone=tz, zone_name=zone_name, templates=note_templates())
    text = render(transcript, fmt)
    event = audit.record(
        "conversation.viewed",
        actor=user,
        conversation_id=conversation.pk,
        page="export",
        format=fmt,
    )
    return Export(text, f"conversation-{conversation.pk}.{fmt}", CONTENT_TYPES[fmt], event.pk)


@dataclass(frozen=True)
class Shared:
    """A share link's opening: ``state`` live (``transcript`` set), or expired, revoked or
    erased (answered 410), or unknown (a token we never signed: 404, nothing recorded)."""

    state: str
    transcript: Transcript | None = None
    expires_at: datetime | None = None
    audit_id: int | None = None


class _ErasedLink:
    audit_actor = "share-link:erased"


@transaction.atomic
def share_open_read(*, token: str, zone: str | None = None) -> Shared:
    """Open a share link. The transcript is rendered now, through the one projection, as an
    anonymous viewer sees it (no restricted field), up to the link's boundary. Every opening of
    a link we signed is audited with the link as the actor, refused ones too. ``zone``: the
    viewer's (their browser's, already checked), else the server's."""
    if not token_valid(token):
        return Shared("unknown")
    link = (
        ShareLink.objects.select_related("conversation", "created_by")
        .filter(token_sha256=token_sha256(token))
        .first()
    )
    if link is None:  # signed by us, row gone: erased with its conversation
        event = audit.record("share_link.opened", actor=_ErasedLink(), outcome="erased")
        return Shared("erased", audit_id=event.pk)
    state = link.state(timezone.now())
    if state == "live" and not creator_may_open(link):
        state = "withdrawn"  # its creator's access is gone: so is the link's (410)
    if state != "live":
        event = audit.record(
            "share_link.opened",
            actor=link,
            conversation_id=link.conversation_id,
            link=link.pk,
            outcome=state,
        )
        return Shared(state, audit_id=event.pk)
    # The path the link was made on (the latest then), as it stood.
    page = conversation_page(
        link.conversation, can_see_restricted=False, up_to=link.boundary_sequence
    )
    page = page_up_to(page, sequence=link.boundary_sequence, at=link.created_at)
    tz, zone_name = _zone(zone)
    transcript = transcript_of(
        page, zone=tz, zone_name=zone_name, templates=note_templates(), up_to=link.created_at
    )
    ShareLink.objects.filter(pk=link.pk).update(
        opened_count=F("opened_count") + 1, last_opened_at=timezone.now()
    )
    event = audit.record(
        "share_link.opened",
        actor=link,
        conversation_id=link.conversation_id,
        link=link.pk,
        outcome="shown",
    )
    return Shared("live", transcript, link.expires_at, event.pk)


@dataclass(frozen=True)
class LinkRow:
    link: ShareLink
    state: str


@transaction.atomic
def share_links_read(*, user: Any) -> list[LinkRow]:
    """Compliance: every share link made in the last 30 days and every one still live."""
    require_compliance(user)
    now = timezone.now()
    since = now - timedelta(days=30)
    rows = list(
        ShareLink.objects.select_related("created_by", "conversation")
        .filter(Q(created_at__gte=since) | Q(expires_at__gt=now, revoked_at__isnull=True))
        .order_by("-created_at")[:500]
    )
    result = [LinkRow(link, link.state(now)) for link in rows]
    audit.record("audit.viewed", actor=user, page="share-links", results=len(result))
    return result


def share_links_of(conversation: Conversation) -> list[ShareLink]:
    """A conversation's links, newest first (one query), each with ``current``, its state now
    (live, expired, revoked): the conversation page lists them."""
    now = timezone.now()
    links = list(
        ShareLink.objects.filter(conversation=conversation)
        .select_related("created_by")
        .order_by("-created_at")
    )
    tokens = link_tokens(links)
    for link in links:
        link.current = link.state(now)  # type: ignore[attr-defined]
        link.token = tokens.get(link.pk, "")  # type: ignore[attr-defined]
    return links


def share_link_made_read(*, user: Any, conversation_id: int, link_id: int) -> ShareLink:
    """The page a new link's maker is sent to (after the POST that made it): the link and its
    address, read again from the link (``token``: its sealed token, "" once it is no longer
    live), so reloading the page shows the same link and makes none. Only its maker, while they
    may read the conversation; anyone else gets the 404 of a missing page. It shows no text of
    the conversation, so no audit row (making the link wrote one)."""
    require_reader(user)
    conversation = access_conversation(user, conversation_id)
    link = ShareLink.objects.filter(
        pk=link_id, conversation=conversation, created_by_id=user.pk
    ).first()
    if link is None:
        raise Http404("no such share link")
    link.current = link.state(timezone.now())  # type: ignore[attr-defined]
    link.token = link_tokens([link]).get(link.pk, "")  # type: ignore[attr-defined]
    return link
