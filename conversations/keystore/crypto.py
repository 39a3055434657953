"""Encryption at rest: per-conversation data keys, wrapped by master keys (envelope encryption).

- Each conversation has one 256-bit data key. Every verbatim message and each exchange's
  parameters are encrypted with it (AES-GCM, a fresh 96-bit nonce per value), with associated data
  naming the conversation, the row and the field, so a ciphertext moved to another row, field or
  conversation fails to decrypt instead of decrypting to the wrong thing.
- Data keys are stored wrapped (AES-GCM under a master key, associated data naming the
  conversation) in their own database (``KEYS_DATABASE_URL``): a backup of the main database holds
  only ciphertext, and destroying one key row makes one conversation unreadable everywhere,
  backups included.
- Master keys come from ``FIELD_ENCRYPTION_KEYS``, newest first. The newest wraps new data keys;
  the others still unwrap old ones until ``rewrap_keys`` moves every data key to the newest.

This module is pure: it takes keys and bytes. ``keys.py`` stores and finds data keys.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12
KEY_BYTES = 32
# A version byte in front of every ciphertext, so the scheme can change without guessing.
VERSION = b"\x01"


class DecryptionError(Exception):
    """The ciphertext was altered, or belongs to another key, row, field or conversation."""


@dataclass(frozen=True, slots=True)
class MasterKey:
    id: str  # a fingerprint, stored beside each wrapped data key
    key: bytes

    @classmethod
    def from_text(cls, text: str) -> MasterKey:
        try:
            key = base64.urlsafe_b64decode(text.strip() + "=" * (-len(text.strip()) % 4))
        except (binascii.Error, ValueError):
            raise ValueError("a master key must be base64 (32 bytes)") from None
        if len(key) != KEY_BYTES:
            raise ValueError(f"a master key must be {KEY_BYTES} bytes, got {len(key)}")
        return cls(id=hashlib.sha256(key).hexdigest()[:16], key=key)


def new_master_key_text() -> str:
    return base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode().rstrip("=")


def _seal(key: bytes, plaintext: bytes, aad: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return VERSION + nonce + AESGCM(key).encrypt(nonce, plaintext, aad)


def _open(key: bytes, sealed: bytes, aad: bytes) -> bytes:
    if len(sealed) < 1 + NONCE_BYTES + 16 or sealed[:1] != VERSION:
        raise DecryptionError("not a ciphertext of this scheme")
    nonce = sealed[1 : 1 + NONCE_BYTES]
    try:
        return AESGCM(key).decrypt(nonce, sealed[1 + NONCE_BYTES :], aad)
    except InvalidTag:
        raise DecryptionError("authentication failed") from None


def _key_aad(conversation_id: int) -> bytes:
    return f"datakey|conversation={conversation_id}".encode()


def new_data_key() -> bytes:
    return AESGCM.generate_key(bit_length=256)


def wrap(master: MasterKey, data_key: bytes, conversation_id: int) -> bytes:
    return _seal(master.key, data_key, _key_aad(conversation_id))


def unwrap(master: MasterKey, wrapped: bytes, conversation_id: int) -> bytes:
    return _open(master.key, wrapped, _key_aad(conversation_id))


def field_aad(conversation_id: int, table: str, row: int, field: str) -> bytes:
    return f"conversation={conversation_id}|{table}={row}|field={field}".encode()


def encrypt(data_key: bytes, plaintext: bytes, aad: bytes) -> bytes:
    return _seal(data_key, plaintext, aad)


def decrypt(data_key: bytes, sealed: bytes, aad: bytes) -> bytes:
    return _open(data_key, sealed, aad)
