"""The blocks of stored messages, read again from the verbatim store: decrypted with the
conversation's data key and re-parsed by their format. What re-projection and the policy
preview project (ingest projects the blocks it has just parsed)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from ..blocks import Block
from ..formats.registry import message_blocks
from ..keystore.keys import data_key_for, decrypt_message

R = TypeVar("R", bound=tuple)


def stored_blocks(conversation_id: int, rows: Iterable[R]) -> Iterator[tuple[R, tuple[Block, ...]]]:
    """For each row ``(sequence, raw_ciphertext, format, ...)`` of one conversation's messages,
    in sequence order: the row and its message's blocks. Raises ``KeyDestroyed`` when the
    conversation's key is gone."""
    for row, _, blocks in stored_messages(conversation_id, rows):
        yield row, blocks


def stored_messages(
    conversation_id: int, rows: Iterable[R]
) -> Iterator[tuple[R, str, tuple[Block, ...]]]:
    """As ``stored_blocks``, with each message's raw text (decrypted) beside its blocks."""
    key = data_key_for(conversation_id)
    for row in rows:
        sequence, sealed, fmt = row[0], row[1], row[2]
        raw = decrypt_message(key, conversation_id, sequence, sealed)
        yield row, raw, message_blocks(fmt, raw)
