"""What the header offers the current user: only the pages they may open."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from conversations.permissions import can_read_conversations, is_compliance


def _links(user: Any) -> dict[str, bool]:
    if not user.is_authenticated:
        return {"conversations": False, "audit": False}
    return {"conversations": can_read_conversations(user), "audit": is_compliance(user)}


def nav(request: HttpRequest) -> dict[str, Any]:
    # Lazy: pages that do not render the header cost no query.
    return {"nav": SimpleLazyObject(lambda: _links(request.user))}
