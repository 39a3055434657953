"""The conversation page's customer panel: the customer's other conversations (those the reader
may see, newest activity first) and the identifiers this conversation's tool calls carried.
Open deletion requests for the customer come from ``retention`` (this app never imports it):
the page asks ``retention.selectors.open_requests_for`` beside this panel.

Pure: the audited selector (``selectors.audited.conversation_read``) fetches the other
conversations the reader may see (one query, ``OTHERS + 1`` rows); the identifiers come from the
timeline already built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .timeline import Timeline

OTHERS = 10  # the panel lists this many; "and more" past it
IDENTIFIERS = 20  # identifiers listed; past it, how many more (a turn of 10,000 calls)
COST_DAYS = 30  # the customer's cost is read over this many days


@dataclass
class CustomerPanel:
    customer: str
    others: list[Any] = field(default_factory=list)  # Conversation rows, newest activity first
    more: bool = False
    identifiers: list[tuple[str, str]] = field(default_factory=list)  # (label, value), distinct
    more_identifiers: int = 0  # distinct identifiers past IDENTIFIERS, not listed
    # What the customer's conversations the reader may see cost over the last COST_DAYS days
    # (``selectors.prices.cost_by_day``): per day, in total, and the exchanges left unpriced.
    cost_days: list[Any] = field(default_factory=list)
    cost_total: Any = 0
    cost_exchanges: int = 0
    cost_unpriced: int = 0


def customer_panel(
    *,
    customer: str,
    rows: list[Any],
    timeline: Timeline,
    costs: Sequence[Any] = (),
) -> CustomerPanel:
    seen: dict[tuple[str, str], None] = {}
    for call in timeline.calls.values():
        for f in [*call.identifiers, *(o for o in call.outputs if o.storage_class == "identifier")]:
            seen.setdefault((f.label, str(f.value)), None)
    return CustomerPanel(
        customer,
        rows[:OTHERS],
        len(rows) > OTHERS,
        list(seen)[:IDENTIFIERS],
        max(0, len(seen) - IDENTIFIERS),
        list(costs),
        sum((c.cost for c in costs), 0),
        sum(c.exchanges for c in costs),
        sum(c.unpriced for c in costs),
    )
