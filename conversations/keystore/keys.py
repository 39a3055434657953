"""The keystore: per-conversation data keys, wrapped, in the ``keys`` database.

``data_key_for(conversation_id, create=True)`` returns the plaintext data key for one conversation,
creating it on first use; ``data_keys_for(ids)`` reads many in one query. Plaintext keys are never
cached beyond the call that asked: destroying a key row (``data_key_destroy``) must make the
conversation unreadable at once, in every process. One exception, bounded by Redis state: a web
process keeps the key of a conversation whose live exchange is in flight, and uses it only while
that exchange's state is in Redis (``conversations/live/state.py``, ``key_kept``); the erase path
deletes that state (``live.state.forget``), and the ingest guard refuses the chunks of an erased
conversation before it (its tombstone is committed before the key is destroyed).

The keys database is separate from the main one, so a transaction on the main database does not
cover a key: a key is created (and committed) before the rows it encrypts, and destroyed (and
committed) before the rows it encrypted are deleted. A key whose conversation was never committed
is an orphan that decrypts nothing; ``data_key_orphans_delete`` removes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from django.conf import settings
from django.db import IntegrityError, connections, transaction
from django.utils import timezone

from ..models import DataKey
from . import crypto
from .routers import KEYS_DB


class KeyDestroyed(Exception):
    """The conversation's data key does not exist (erased, or never created)."""


@cache
def _master_keys(texts: tuple[str, ...]) -> tuple[crypto.MasterKey, ...]:
    return tuple(crypto.MasterKey.from_text(t) for t in texts)


def master_keys() -> tuple[crypto.MasterKey, ...]:
    """Newest first."""
    keys = _master_keys(tuple(settings.FIELD_ENCRYPTION_KEYS))
    if not keys:
        raise crypto.DecryptionError("no master key configured (FIELD_ENCRYPTION_KEYS)")
    return keys


def _unwrap(row: DataKey) -> bytes:
    return _unwrap_raw(row.conversation_id, row.master_key_id, bytes(row.wrapped_key))


def _unwrap_raw(conversation_id: int, master_key_id: str, wrapped: bytes) -> bytes:
    for master in master_keys():
        if master.id == master_key_id:
            return crypto.unwrap(master, wrapped, conversation_id)
    raise crypto.DecryptionError(
        f"the data key of conversation {conversation_id} is wrapped by master key "
        f"{master_key_id}, which is not in FIELD_ENCRYPTION_KEYS"
    )


def data_key_for(conversation_id: int, *, create: bool = False) -> bytes:
    row = DataKey.objects.using(KEYS_DB).filter(conversation_id=conversation_id).first()
    if row is not None:
        return _unwrap(row)
    if not create:
        raise KeyDestroyed(f"no data key for conversation {conversation_id}")
    master = master_keys()[0]
    key = crypto.new_data_key()
    try:
        with transaction.atomic(using=KEYS_DB):
            DataKey.objects.using(KEYS_DB).create(
                conversation_id=conversation_id,
                master_key_id=master.id,
                wrapped_key=crypto.wrap(master, key, conversation_id),
            )
    except IntegrityError:
        # Created concurrently: the stored one is the key.
        return data_key_for(conversation_id)
    return key


_TABLE = DataKey._meta.db_table
_DESTROY = f"DELETE FROM {_TABLE} WHERE conversation_id = %s"  # noqa: S608
_SELECT_KEYS = (
    f"SELECT conversation_id, master_key_id, wrapped_key FROM {_TABLE} "  # noqa: S608
    "WHERE conversation_id = ANY(%s)"
)
_INSERT_KEYS = f"""
    INSERT INTO {_TABLE} (conversation_id, master_key_id, wrapped_key, created_at)
    SELECT v.c, v.m, v.w, now() FROM unnest(%s::bigint[], %s::text[], %s::bytea[]) AS v(c, m, w)
    ON CONFLICT (conversation_id) DO NOTHING
    RETURNING conversation_id
"""  # noqa: S608


def data_keys_for(conversation_ids: Iterable[int], *, create: bool = False) -> dict[int, bytes]:
    """The data keys of many conversations (on the hot path of ingest: plain SQL, one round trip
    when they exist, two when some are created)."""
    ids = sorted(set(conversation_ids))
    keys: dict[int, bytes] = {}
    with connections[KEYS_DB].cursor() as cur:
        cur.execute(_SELECT_KEYS, [ids])
        for conversation_id, master_key_id, wrapped in cur.fetchall():
            keys[conversation_id] = _unwrap_raw(conversation_id, master_key_id, bytes(wrapped))
        missing = [cid for cid in ids if cid not in keys]
        if missing and not create:
            raise KeyDestroyed(f"no data key for conversations {missing}")
        if missing:
            master = master_keys()[0]
            fresh = {cid: crypto.new_data_key() for cid in missing}
            cur.execute(
                _INSERT_KEYS,
                [
                    missing,
                    [master.id] * len(missing),
                    [crypto.wrap(master, fresh[cid], cid) for cid in missing],
                ],
            )
            inserted = {row[0] for row in cur.fetchall()}
            keys.update({cid: fresh[cid] for cid in inserted})
            lost = [cid for cid in missing if cid not in inserted]
            if lost:  # created concurrently: the stored key wins over ours
                cur.execute(_SELECT_KEYS, [lost])
                for conversation_id, master_key_id, wrapped in cur.fetchall():
                    keys[conversation_id] = _unwrap_raw(
                        conversation_id, master_key_id, bytes(wrapped)
                    )
    return keys


def data_key_destroy(conversation_id: int) -> int:
    """Delete the key row, committed on its own (one statement, the keys database's connection
    in autocommit, whatever the main database's transaction): the conversation is unreadable from
    here on. Returns the rows deleted (0 or 1)."""
    with connections[KEYS_DB].cursor() as cur:
        cur.execute(_DESTROY, [conversation_id])
        return cur.rowcount


def data_keys_rewrap(*, batch_size: int = 500) -> int:
    """Re-wrap every data key not wrapped by the newest master key; data is not re-encrypted."""
    newest = master_keys()[0]
    done = 0
    while True:
        with transaction.atomic(using=KEYS_DB):
            rows = list(
                DataKey.objects.using(KEYS_DB)
                .exclude(master_key_id=newest.id)
                .select_for_update(skip_locked=True)[:batch_size]
            )
            if not rows:
                return done
            now = timezone.now()
            for row in rows:
                key = _unwrap(row)
                row.wrapped_key = crypto.wrap(newest, key, row.conversation_id)
                row.master_key_id = newest.id
                row.rewrapped_at = now
            DataKey.objects.using(KEYS_DB).bulk_update(
                rows, ["wrapped_key", "master_key_id", "rewrapped_at"]
            )
            done += len(rows)


def message_aad(conversation_id: int, sequence: int) -> bytes:
    return crypto.field_aad(conversation_id, "message", sequence, "raw")


def exchange_aad(conversation_id: int, ordinal: int) -> bytes:
    return crypto.field_aad(conversation_id, "exchange", ordinal, "settings")


def encrypt_message(key: bytes, conversation_id: int, sequence: int, raw: str) -> bytes:
    return crypto.encrypt(key, raw.encode("utf-8"), message_aad(conversation_id, sequence))


def decrypt_message(
    key: bytes, conversation_id: int, sequence: int, sealed: bytes | memoryview
) -> str:
    return crypto.decrypt(key, bytes(sealed), message_aad(conversation_id, sequence)).decode()
