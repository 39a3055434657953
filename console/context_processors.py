"""What the header offers the current user: only the pages they may open."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from conversations.permissions import can_read_conversations, is_compliance, is_console_admin
from conversations.reviews.access import review_access_pending_count


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


def nav(request: HttpRequest) -> dict[str, Any]:
    # Lazy: pages that do not render the header cost no query, and the count of review requests
    # waiting is read only for those who decide them (the header shows it in their part).
    return {
        "nav": SimpleLazyObject(lambda: _links(request.user)),
        "review_requests_waiting": SimpleLazyObject(
            lambda: review_access_pending_count(user=request.user)
        ),
    }
