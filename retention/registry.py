"""Every model that holds conversation or customer data, and how the erase path finds its rows.

``ERASED`` lists the models whose rows go with a conversation, in deletion order (children
first, the Conversation row last), each with a function from conversation ids to its rows.
``KEPT`` lists the models that refer to a conversation or a customer and are deliberately not
erased, each with the reason. ``tests/retention/test_registry.py`` walks every installed model and
fails when one that refers to a conversation or a customer is in neither list.

To add a model: if its rows are personal data of a conversation, add an ``Entry`` to ``ERASED``
before the models it depends on; if it holds only internal ids or keyed hashes, add it to
``KEPT`` and say why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.sql import DeleteQuery
from guardian.models import GroupObjectPermission, UserObjectPermission

from conversations.keystore.routers import KEYS_DB
from conversations.models import (
    Block,
    Conversation,
    ConversationEvent,
    ConversationGroupObjectPermission,
    ConversationUserObjectPermission,
    DataKey,
    Exchange,
    IdempotencyKey,
    Message,
    Notification,
    ReviewAccessRequest,
    ReviewGrant,
    ShareLink,
)
from conversations.monitoring.rollups import rollups_subtract

from .models import RetentionClass


@dataclass(frozen=True)
class Entry:
    model: type[Model]
    rows: Callable[[Sequence[int]], QuerySet[Any]]
    store: str = "main"

    @property
    def label(self) -> str:
        return self.model._meta.label_lower


def _fk(model: type[Model], field: str = "conversation_id") -> Callable[[Sequence[int]], Any]:
    return lambda ids: model._default_manager.filter(**{f"{field}__in": list(ids)})


def _generic(model: type[Model]) -> Callable[[Sequence[int]], Any]:
    # Guardian's generic object permissions name the object by content type and text pk.
    def rows(ids: Sequence[int]) -> Any:
        ct = ContentType.objects.get_for_model(Conversation)
        return model._default_manager.filter(content_type=ct, object_pk__in=[str(i) for i in ids])

    return rows


# In deletion order: nothing below refers to anything above it.
ERASED: tuple[Entry, ...] = (
    Entry(Block, _fk(Block)),
    Entry(Message, _fk(Message)),
    Entry(Exchange, _fk(Exchange)),
    Entry(ConversationEvent, _fk(ConversationEvent)),
    Entry(IdempotencyKey, _fk(IdempotencyKey)),
    # The notifications telling the deciders of a review request go with the request.
    Entry(Notification, _fk(Notification, "review_request__conversation_id")),
    # A reviewer's request for a grant names the conversation (and the grant it led to).
    Entry(ReviewAccessRequest, _fk(ReviewAccessRequest)),
    Entry(ReviewGrant, _fk(ReviewGrant)),
    # A link holds no text, but it opens the conversation: it goes with it (opening it
    # afterwards answers 410, conversations/sharing/links.py).
    Entry(ShareLink, _fk(ShareLink)),
    Entry(
        ConversationUserObjectPermission, _fk(ConversationUserObjectPermission, "content_object")
    ),
    Entry(
        ConversationGroupObjectPermission, _fk(ConversationGroupObjectPermission, "content_object")
    ),
    Entry(UserObjectPermission, _generic(UserObjectPermission)),
    Entry(GroupObjectPermission, _generic(GroupObjectPermission)),
    Entry(RetentionClass, _fk(RetentionClass)),
    Entry(Conversation, _fk(Conversation, "pk")),
)

# Destroyed first, on its own (keys.data_key_destroy), not by the rows' transaction.
KEYS = Entry(
    DataKey, lambda ids: DataKey.objects.using(KEYS_DB).filter(conversation_id__in=ids), "keys"
)

KEPT: dict[str, str] = {
    "audit.auditevent": "the audit log names conversations by internal id and customers by keyed "
    "hash only (DESIGN invariant 6), so an erasure never rewrites the hash chain",
    "conversations.reprojectionjob": "last_conversation_id is an internal id (a resume point)",
    "retention.deletionrequest": "its raw subject and conversation ids are cleared when it "
    "completes (a database constraint); it keeps the keyed hash and internal ids",
    "retention.legalhold": "keyed hash of the customer, internal conversation id, queue name; "
    "the customer id the officer typed (subject) is cleared in the transaction that completes "
    "the customer's erasure",
    "retention.tombstone": "keyed hashes only",
    "retention.receipt": "keyed hash and counts only",
}

ALL: tuple[Entry, ...] = (*ERASED, KEYS)


def erase_rows(ids: Sequence[int]) -> dict[str, int]:
    """Delete the rows of every ``ERASED`` model for these conversations in one statement (one
    data-modifying CTE per model; the foreign keys are deferred to commit, so the order within
    the statement does not matter) and return the rows deleted per model. Run it in the erase
    transaction: a model missing from ``ERASED`` whose rows still refer to a conversation fails
    the commit, it is never left behind silently."""
    # The signals' rollups lose these conversations' share first, from the rows about to go, in
    # this transaction (conversations/monitoring/rollups.py says why: they stay equal to the rows).
    rollups_subtract(conversation_ids=ids)
    parts: list[str] = []
    params: list[Any] = []
    alias = ""
    for i, entry in enumerate(ERASED):
        rows = entry.rows(ids)
        query = rows.query.chain(DeleteQuery)  # the same filter, as a DELETE (Django's own turn)
        text, values = query.get_compiler(rows.db).as_sql()
        parts.append(f"d{i} AS ({text} RETURNING 1)")
        params.extend(values)
        alias = rows.db
    counts = ", ".join(f"(SELECT count(*) FROM d{i})" for i in range(len(ERASED)))  # noqa: S608
    with connections[alias].cursor() as cur:
        cur.execute(f"WITH {', '.join(parts)} SELECT {counts}", params)
        found = cur.fetchone()
    return {entry.label: int(n) for entry, n in zip(ERASED, found, strict=True)}
