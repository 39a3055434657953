"""The keystore: per-conversation data keys, wrapped, in the ``keys`` database.

``data_key_for(conversation_id, create=True)`` returns the plaintext data key for one conversation,
creating it on first use; ``data_keys_for(ids)`` reads many in one query. Plaintext keys are never
cached beyond the call that asked: destroying a key row (``data_key_destroy``) must make the
conversation unreadable at once, in every process.

The keys database is separate from the main one, so a transaction on the main database does not
cover a key: a key is created (and committed) before the rows it encrypts, and destroyed (and
committed) before the rows it encrypted are deleted. A key whose conversation was never committed
is an orphan that decrypts nothing; ``data_key_orphans_delete`` removes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from . import crypto
from .models import DataKey
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
    for master in master_keys():
        if master.id == row.master_key_id:
            return crypto.unwrap(master, bytes(row.wrapped_key), row.conversation_id)
    raise crypto.DecryptionError(
        f"the data key of conversation {row.conversation_id} is wrapped by master key "
        f"{row.master_key_id}, which is not in FIELD_ENCRYPTION_KEYS"
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


def data_keys_for(conversation_ids: Iterable[int], *, create: bool = False) -> dict[int, bytes]:
    ids = set(conversation_ids)
    rows = DataKey.objects.using(KEYS_DB).filter(conversation_id__in=ids)
    keys = {row.conversation_id: _unwrap(row) for row in rows}
    missing = ids - keys.keys()
    if missing and not create:
        raise KeyDestroyed(f"no data key for conversations {sorted(missing)}")
    if missing:
        master = master_keys()[0]
        fresh = {cid: crypto.new_data_key() for cid in missing}
        DataKey.objects.using(KEYS_DB).bulk_create(
            [
                DataKey(
                    conversation_id=cid,
                    master_key_id=master.id,
                    wrapped_key=crypto.wrap(master, key, cid),
                )
                for cid, key in fresh.items()
            ],
            ignore_conflicts=True,
        )
        # Read back: a concurrent writer's key wins over ours where both tried.
        rows = DataKey.objects.using(KEYS_DB).filter(conversation_id__in=missing)
        keys.update({row.conversation_id: _unwrap(row) for row in rows})
    return keys


def data_key_destroy(conversation_id: int) -> int:
    """Delete the key row, committed on its own: the conversation is unreadable from here on."""
    with transaction.atomic(using=KEYS_DB):
        deleted, _ = DataKey.objects.using(KEYS_DB).filter(conversation_id=conversation_id).delete()
    return deleted


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
