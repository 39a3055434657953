"""The conversation page's customer panel: the customer's other conversations (those the reader
may see, newest activity first) and the identifiers this conversation's tool calls carried.
Open deletion requests for the customer come from ``retention`` (this app never imports it):
the page asks ``retention.selectors.open_requests_for`` beside this panel.

One query (the other conversations); the identifiers come from the timeline already built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..permissions import visible_conversations
from .timeline import Timeline

OTHERS = 10  # the panel lists this many; "and more" past it


@dataclass
class CustomerPanel:
    customer: str
    others: list[Any] = field(default_factory=list)  # Conversation rows, newest activity first
    more: bool = False
    identifiers: list[tuple[str, str]] = field(default_factory=list)  # (label, value), distinct


def customer_panel(*, user: Any, conversation: Any, timeline: Timeline) -> CustomerPanel:
    rows = list(
        visible_conversations(user)
        .filter(customer_external_id=conversation.customer_external_id)
        .exclude(pk=conversation.pk)
        .only("pk", "external_id", "queue", "status", "last_activity_at")
        .order_by("-last_activity_at", "-pk")[: OTHERS + 1]
    )
    seen: dict[tuple[str, str], None] = {}
    for call in timeline.calls.values():
        for f in [*call.identifiers, *(o for o in call.outputs if o.storage_class == "identifier")]:
            seen.setdefault((f.label, str(f.value)), None)
    return CustomerPanel(
        conversation.customer_external_id,
        rows[:OTHERS],
        len(rows) > OTHERS,
        list(seen),
    )
