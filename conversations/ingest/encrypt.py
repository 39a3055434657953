"""Stage 4 of ingest: the verbatim store sealed, with each conversation's data key (no database
but the keys, which the pipeline fetches: ``keystore.keys.data_keys_for``).

Every new message's raw text, byte for byte, and each exchange's request settings (system prompt,
tools...) are encrypted (AES-GCM, associated data naming the conversation, the row and the
field): kept for replay and review, never projected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..blocks import ParsedExchange
from ..keystore import crypto
from ..keystore.keys import encrypt_message, exchange_aad
from .history import Planned


def encrypt_settings(
    key: bytes, conversation_id: int, ordinal: int, parsed: ParsedExchange
) -> bytes:
    """The request's settings, encrypted."""
    plain = json.dumps(parsed.params.request_settings, ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )
    return crypto.encrypt(key, plain, exchange_aad(conversation_id, ordinal))


def seal_batch(
    planned: Sequence[Planned], keys: Mapping[int, bytes]
) -> tuple[list[bytes], list[list[bytes]]]:
    """The sealed settings of each planned exchange, and the sealed raw text of each of its new
    messages (in sequence order, numbered from the exchange's ``first``)."""
    settings: list[bytes] = []
    messages: list[list[bytes]] = []
    for p in planned:
        pk = p.conversation.pk
        key = keys[pk]
        settings.append(encrypt_settings(key, pk, p.ordinal, p.parsed))
        messages.append(
            [
                encrypt_message(key, pk, sequence, pm.message.raw)
                for sequence, pm in enumerate(p.plan.new_messages, start=p.first)
            ]
        )
    return settings, messages
