"""The one erase path: ``conversation_erase`` is the only code that deletes a conversation.

Its tombstone first (committed, so exchanges arriving during the erase are refused), then its data
key (committed on its own in the keys database: backups become unreadable at once), then every
row the registry (``retention/registry.py``) lists for it, in one transaction.

To add an erase step: a model holding conversation data is an ``Entry`` of ``registry.ERASED``
(deleted here in the one statement of ``registry.erase_rows``); a store outside PostgreSQL gets
its step here after the rows' transaction commits, idempotent (an erase that fails there is run
again), and the verification scan (``receipts.verification_scan``) looks for what it might have
left. Redis's live streams (``live_state.forget``) are the exception: forgetting them is best
effort, never a failed erasure (a Redis blip would otherwise hold the customer's rows readable
until the claim goes stale): what a failed forget leaves expires by itself, and every tick of the
clock forgets the live state of conversations that no longer exist (``live_state_sweep``).
"""

from __future__ import annotations

import logging

import redis
from django.db import transaction

from conversations.keystore.keys import data_key_destroy
from conversations.live import state as live_state
from conversations.live.services import live_conversations_held
from conversations.models import Conversation
from conversations.replicas import replica_fence_raise

from .. import registry
from ..models import DeletionRequest, Tombstone
from .tombstones import conversation_hash, tombstone_write

logger = logging.getLogger(__name__)


def add_counts(total: dict[str, dict[str, int]], counts: dict[str, dict[str, int]]) -> None:
    for store, per_model in counts.items():
        bucket = total.setdefault(store, {})
        for label, n in per_model.items():
            bucket[label] = bucket.get(label, 0) + n


def conversation_erase(
    conversation_id: int, *, request_id: int | None = None
) -> tuple[dict[str, dict[str, int]], str | None]:
    """Erase one conversation: its tombstone (committed first, so exchanges arriving during the
    erase are refused), its data key (committed on its own: backups become unreadable), then every
    registered row in one transaction. Idempotent (an erased conversation erases nothing). Returns
    the rows removed per store and model, and the conversation's external id (None when it was
    already gone). With ``request_id``, the counts are added to the request in the rows'
    transaction, so a resumed execution reports what was removed exactly once."""
    found = Conversation.objects.filter(pk=conversation_id).values_list("external_id", flat=True)
    known = found.first()
    if known is not None:
        tombstone_write(Tombstone.Kind.CONVERSATION, conversation_hash(known))
    data_key_destroy(conversation_id)
    counts: dict[str, dict[str, int]] = {"keys": {}, "main": {}}
    external_id: str | None = None
    with transaction.atomic():
        conversation = Conversation.objects.select_for_update().filter(pk=conversation_id).first()
        if conversation is not None:
            # Holding the lock, no ingest of this conversation is in flight: a key one created
            # while we waited for the lock (it passed the guard before the tombstone) goes too.
            data_key_destroy(conversation_id)
            external_id = conversation.external_id
            deleted = registry.erase_rows([conversation_id])
            counts["main"] = {label: n for label, n in deleted.items() if n}
            # Its messages were encrypted under its key: that key is gone now (destroyed above,
            # or by an attempt that crashed before this transaction committed).
            if conversation.message_count:
                counts["keys"][registry.KEYS.label] = 1
            if external_id != known:  # created since the first look: tombstoned now
                tombstone_write(Tombstone.Kind.CONVERSATION, conversation_hash(external_id))
        if request_id is not None:
            request = DeletionRequest.objects.select_for_update().get(pk=request_id)
            add_counts(request.counts, counts)
            if conversation is not None:
                request.conversations_erased += 1
            request.save(update_fields=["counts", "conversations_erased"])
        # Once committed, no page may be read on a replica that has not replayed this.
        transaction.on_commit(replica_fence_raise)
    # What Redis holds of its live streams goes too, best effort: the rows are gone and the key
    # with them, so what is left there is unreadable and expires; the next tick's sweep forgets it.
    _forget_live(conversation_id)
    return counts, external_id


def _forget_live(conversation_id: int) -> None:
    try:
        live_state.forget(conversation_id)
    except redis.RedisError as exc:
        logger.warning(
            "conversation %s erased; its live state is left to expire or to the next tick's "
            "sweep (Redis: %s)",
            conversation_id,
            type(exc).__name__,
        )


def live_state_sweep() -> int:
    """Forget the live state of every conversation that no longer exists (an erasure whose
    forget found Redis down). Best effort, like the forget: Redis down, nothing is done now.
    Returns the conversations forgotten."""
    try:
        held = live_conversations_held()
    except redis.RedisError:
        return 0
    if not held:
        return 0
    existing = set(Conversation.objects.filter(pk__in=held).values_list("pk", flat=True))
    gone = sorted(held - existing)
    for conversation_id in gone:
        _forget_live(conversation_id)
    return len(gone)
