"""What the header offers the current user: only the pages they may open."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from conversations.permissions import can_read_conversations, is_compliance, is_console_admin
from conversations.selectors.audited import live_now_count


def _links(user: Any) -> dict[str, bool]:
    if not user.is_authenticated:
        return {"conversations": False, "audit": False, "people": False, "admin": False}
    admin = is_console_admin(user)
    return {
        "conversations": can_read_conversations(user),
        "audit": is_compliance(user),
        # The People page and the Django admin: the admin role opens both (no staff flag). The
        # role, not has_perm: the groups are read once per request already, permissions not.
        "people": admin,
        "admin": user.is_active and (user.is_staff or admin),
    }


def _live(user: Any) -> int:
    if not (user.is_authenticated and can_read_conversations(user)):
        return 0
    return live_now_count(user=user)


def nav(request: HttpRequest) -> dict[str, Any]:
    # Lazy: pages that do not render the header cost no query. (The count of review requests
    # waiting loads after the page, from its own URL: no page pays a query for it.) "Live now"'s
    # count: one Redis read, and a query only while a conversation is streaming (the Live now
    # page keeps it current: static/console/live-now.js).
    return {
        "nav": SimpleLazyObject(lambda: _links(request.user)),
        "live": SimpleLazyObject(lambda: {"count": _live(request.user)}),
    }
