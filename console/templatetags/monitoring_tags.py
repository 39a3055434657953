"""Template filters of the signals' pieces of the pages (conversations/monitoring/)."""

from __future__ import annotations

from typing import Any

from django import template

from conversations.monitoring.rewrites import SEEN, words

register = template.Library()


@register.filter
def rewrite_words(kind: str) -> str:
    """How a history was rewritten, in plain words."""
    return words(kind)


@register.filter
def rewritten(exchanges: Any) -> list[Any]:
    """The exchanges whose history was rewritten in what the model sees, in order (a change it
    does not see is recorded on the exchange, without the banner)."""
    return [e for e in exchanges if getattr(e, "rewrite_kind", "") in SEEN]
