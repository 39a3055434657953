"""The stores an erasure counts, named in words and always listed in one order.

Previews, requests, receipts and their exports count rows by model label
(``conversations.block``); people read them as "Blocks (the text and tool trail agents see)".
The order is the registry's, with the conversation first and the data key last: the same on
every page and in every export. A model added to the registry without words here is named by
its verbose name, so nothing is ever left out.

To name a new store: add its label and words to ``WORDS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import registry

WORDS: dict[str, str] = {
    "conversations.conversation": "Conversations",
    "conversations.message": "Messages (the encrypted verbatim store)",
    "conversations.exchange": "Exchanges (provider calls and their settings)",
    "conversations.block": "Blocks (the text and tool trail agents see)",
    "conversations.conversationevent": "Customer events",
    "conversations.idempotencykey": "Idempotency records of the ingest API",
    "conversations.reviewgrant": "Reasoning review grants",
    "conversations.conversationuserobjectpermission": "Per-user permissions on the conversation",
    "conversations.conversationgroupobjectpermission": "Per-group permissions on the conversation",
    "guardian.userobjectpermission": "Other per-user permissions on the conversation",
    "guardian.groupobjectpermission": "Other per-group permissions on the conversation",
    "retention.retentionclass": "The conversation's own retention class",
    "conversations.datakey": "Data keys (in the keys database, destroyed first)",
}


def _ordered() -> list[registry.Entry]:
    erased = [e for e in registry.ERASED if e.label != "conversations.conversation"]
    first = [e for e in registry.ERASED if e.label == "conversations.conversation"]
    return [*first, *erased, registry.KEYS]


@dataclass(frozen=True)
class StoreRow:
    label: str  # the model label, as the counts and the API name it
    name: str  # in words
    store: str  # "main" or "keys": the database
    rows: int


def store_name(label: str) -> str:
    if label in WORDS:
        return WORDS[label]
    for entry in registry.ALL:
        if entry.label == label:
            return str(entry.model._meta.verbose_name_plural).capitalize()
    return label


def store_rows(counts: Mapping[str, Any], *, skip_empty: bool = True) -> list[StoreRow]:
    """Counts as rows in the one order. ``counts`` is flat (``{label: n}``, a preview) or by
    database (``{"main": {label: n}, "keys": {...}}``, a receipt)."""
    flat: dict[str, int] = {}
    for key, value in counts.items():
        if isinstance(value, Mapping):
            for label, n in value.items():
                flat[label] = flat.get(label, 0) + int(n)
        else:
            flat[key] = flat.get(key, 0) + int(value)
    out = []
    for entry in _ordered():
        n = flat.pop(entry.label, 0)
        if n or not skip_empty:
            out.append(StoreRow(entry.label, store_name(entry.label), entry.store, n))
    for label, n in sorted(flat.items()):  # a label the registry no longer lists
        if n or not skip_empty:
            out.append(StoreRow(label, store_name(label), "main", n))
    return out
