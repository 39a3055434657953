"""The conversations a report covers, as a list of ids and as a subquery.

Filters take ``covered.q``: for a customer, the subquery of their conversations (one parameter,
whatever their number: a list of 1,000 ids costs more to compile, send and plan than the count
it filters); for one conversation, or a few erased ones, the ids themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conversations.models import Conversation


@dataclass(frozen=True)
class Covered:
    ids: list[int]
    q: Any  # a QuerySet of pks, or a list of ids

    def __bool__(self) -> bool:
        return bool(self.ids)


def covered_customer(customer: str, ids: Sequence[int]) -> Covered:
    return Covered(
        list(ids), Conversation.objects.filter(customer_external_id=customer).values("pk")
    )


def covered_ids(ids: Sequence[int]) -> Covered:
    return Covered(list(ids), list(ids))


def covered_union(live: Covered, past: Sequence[int]) -> tuple[Covered, list[int]]:
    """``live`` and conversations erased already (ids only): for the audit log's reads."""
    extra = sorted(set(past) - set(live.ids))
    return Covered([*live.ids, *extra], live.q), extra
