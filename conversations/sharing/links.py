"""Share links: a signed, unguessable token; only its SHA-256 at rest; an expiry; a boundary.

The token is ``django.core.signing`` over 32 random bytes (salt ``conversations.share-link``):
a token we did not issue fails its signature and answers 404 without a query of the links; one
we issued whose row is gone was erased with its conversation (rows are never deleted otherwise:
a revoked or expired link stays, for the record) and answers 410. The row stores the boundary
(the last message's sequence when the link was made), never the text: the page is rendered at
each opening through the one projection.

Expiry: ``SHARE_LINK_DEFAULT_DAYS`` (7) unless asked, at most ``SHARE_LINK_MAX_DAYS`` (30), fixed
when the link is made. A legal hold keeps the conversation, not the link: nothing here looks at
holds, and nothing extends ``expires_at``.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.db.models import Max
from django.http import Http404
from django.utils import timezone

import audit

from ..keystore import crypto
from ..keystore.keys import KeyDestroyed, data_key_for
from ..models import Message, ShareLink
from ..permissions import (
    access_conversation,
    is_compliance,
    require_reader,
    visible_conversations,
)

SALT = "conversations.share-link"


def default_days() -> int:
    return int(getattr(settings, "SHARE_LINK_DEFAULT_DAYS", 7))


def max_days() -> int:
    return int(getattr(settings, "SHARE_LINK_MAX_DAYS", 30))


class ShareRefused(ValueError):
    def __init__(self, detail: str, field: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_valid(token: str) -> bool:
    """Whether we signed this token (no query)."""
    try:
        signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return False
    return True


def _new_token() -> str:
    return signing.dumps(secrets.token_urlsafe(32), salt=SALT, compress=False)


def _aad(conversation_id: int, link_id: int) -> bytes:
    return crypto.field_aad(conversation_id, "sharelink", link_id, "token")


def _seal_token(conversation_id: int, link_id: int, token: str) -> bytes:
    key = data_key_for(conversation_id, create=True)
    return crypto.encrypt(key, token.encode(), _aad(conversation_id, link_id))


def link_tokens(links: list[ShareLink]) -> dict[int, str]:
    """The tokens of these links (one conversation's) that are still live, unsealed with the
    conversation's data key: the conversation page shows them again. None for a link made
    before tokens were sealed, or whose key is gone."""
    live = [
        link for link in links if link.token_ciphertext and link.state(timezone.now()) == "live"
    ]
    if not live:
        return {}
    try:
        key = data_key_for(live[0].conversation_id)
    except KeyDestroyed:
        return {}
    return {
        link.pk: crypto.decrypt(
            key, bytes(link.token_ciphertext or b""), _aad(link.conversation_id, link.pk)
        ).decode()
        for link in live
    }


@transaction.atomic(durable=True)
def share_link_create(
    *, actor: Any, conversation_id: int, days: int | None = None
) -> tuple[ShareLink, str]:
    """A link to the conversation as it stands now, and its token (shown once, never stored),
    for a person who may read it (404 otherwise). ``days``: 1 to ``SHARE_LINK_MAX_DAYS``;
    ``None``, the default."""
    require_reader(actor)
    conversation = access_conversation(actor, conversation_id)
    days = default_days() if days is None else days
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= max_days():
        raise ShareRefused(f"days must be 1 to {max_days()}", field="days")
    boundary = (
        Message.objects.filter(conversation=conversation, superseded=False).aggregate(
            last=Max("sequence")
        )["last"]
        or 0
    )
    token = _new_token()
    now = timezone.now()
    link = ShareLink.objects.create(
        created_at=now,
        conversation=conversation,
        token_sha256=token_sha256(token),
        boundary_sequence=boundary,
        created_by=actor,
        expires_at=now + timedelta(days=days),
    )
    link.token_ciphertext = _seal_token(conversation.pk, link.pk, token)
    link.save(update_fields=["token_ciphertext"])
    audit.record(
        "share_link.created",
        actor=actor,
        conversation_id=conversation.pk,
        link=link.pk,
        days=days,
        expires_at=link.expires_at.isoformat(),
    )
    return link, token


@transaction.atomic(durable=True)
def share_link_revoke(*, actor: Any, link_id: int) -> ShareLink:
    """Revoke now (a link already revoked stays as it was): anyone who may read the
    conversation, and compliance staff. 404 for a link one may not see, like a missing one."""
    link = ShareLink.objects.select_for_update().filter(pk=link_id).first()
    if link is None:
        raise Http404("no such link")
    if not is_compliance(actor):
        require_reader(actor)
        access_conversation(actor, link.conversation_id)
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.revoked_by = actor
        link.save(update_fields=["revoked_at", "revoked_by"])
        audit.record(
            "share_link.revoked", actor=actor, conversation_id=link.conversation_id, link=link.pk
        )
    return link


@transaction.atomic
def share_links_revoke_for_user(*, user: Any, reason: str) -> int:
    """Revoke every live link ``user`` made (their access was taken: deactivated, deleted): one
    audit row per link, the system as the actor and ``reason`` in it. Returns the links revoked.
    The opening checks the creator's access anyway (``sharing.selectors.share_open_read``); this
    makes the end of the links visible on the compliance page and in the log, at the moment it
    happened."""
    now = timezone.now()
    links = list(
        ShareLink.objects.select_for_update()
        .filter(created_by=user, revoked_at__isnull=True, expires_at__gt=now)
        .order_by("pk")
    )
    for link in links:
        link.revoked_at = now
        link.save(update_fields=["revoked_at"])
        audit.record(
            "share_link.revoked",
            conversation_id=link.conversation_id,
            link=link.pk,
            reason=reason,
        )
    return len(links)


def creator_may_open(link: ShareLink) -> bool:
    """Whether the link's creator could still open its conversation now (active, a reader's
    role, the queue's grant): a link lives no longer than its creator's access."""
    creator = link.created_by
    if creator is None:
        return False
    return visible_conversations(creator).filter(pk=link.conversation_id).exists()
