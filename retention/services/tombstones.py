"""Tombstones: a deleted conversation or customer, kept as a keyed hash, so that a late exchange
for it is refused (410) by the ingest guard registered in ``apps.py``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from django.db.models import F
from django.utils import timezone

import audit
from conversations.ingest.guards import Refused

from ..models import Tombstone


def conversation_hash(external_id: str) -> str:
    # A namespace of its own, so a conversation id and a customer id of the same text differ.
    return audit.subject_hash(f"conversation:{external_id}")


def tombstone_guard(pairs: Sequence[tuple[str, str]]) -> dict[int, Refused]:
    """The ingest guard (registered in apps.py): refuse, with 410, the exchanges of a deleted
    conversation or customer. One query for the whole batch; each refusal, once recorded, is
    counted on its tombstone and audited."""
    wanted: list[tuple[tuple[str, str], tuple[str, str] | None]] = []
    for conversation_external_id, customer_external_id in pairs:
        conversation = (
            str(Tombstone.Kind.CONVERSATION),
            conversation_hash(conversation_external_id),
        )
        customer = (
            (str(Tombstone.Kind.CUSTOMER), audit.subject_hash(customer_external_id))
            if customer_external_id
            else None
        )
        wanted.append((conversation, customer))
    hashes = {key for pair in wanted for key in pair if key is not None}
    found = {
        (t.kind, t.key_hash): t
        for t in Tombstone.objects.filter(key_hash__in=[h for _, h in hashes])
        if (t.kind, t.key_hash) in hashes
    }
    refused: dict[int, Refused] = {}
    for position, (conversation, customer) in enumerate(wanted):
        tombstone = found.get(conversation) or (found.get(customer) if customer else None)
        if tombstone is None:
            continue
        what = "conversation" if tombstone.kind == Tombstone.Kind.CONVERSATION else "customer"
        refused[position] = Refused(
            f"this {what} was deleted; exchanges for it are not stored",
            field=what,
            code="gone",
            record=partial(
                _refusal_record,
                tombstone=tombstone.pk,
                customer=pairs[position][1],
                conversation_hash=conversation[1],
            ),
        )
    return refused


def _refusal_record(*, tombstone: int, customer: str, conversation_hash: str) -> None:
    Tombstone.objects.filter(pk=tombstone).update(
        refused_count=F("refused_count") + 1, last_refused_at=timezone.now()
    )
    audit.record(
        "exchange.refused_tombstoned",
        subject=customer or None,
        tombstone=tombstone,
        conversation_hash=conversation_hash,
    )


def tombstone_write(kind: str, key_hash: str) -> None:
    # One statement (INSERT … ON CONFLICT DO NOTHING): committed at once outside a transaction.
    Tombstone.objects.bulk_create([Tombstone(kind=kind, key_hash=key_hash)], ignore_conflicts=True)
