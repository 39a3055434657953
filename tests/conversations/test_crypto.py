"""Envelope encryption (keystore/crypto.py): keys bind to their conversation, values to their row
and field; any flipped byte is detected."""

from __future__ import annotations

import pytest

from conversations.keystore import crypto


@pytest.fixture
def master() -> crypto.MasterKey:
    return crypto.MasterKey.from_text(crypto.new_master_key_text())


def test_round_trip(master: crypto.MasterKey) -> None:
    key = crypto.new_data_key()
    wrapped = crypto.wrap(master, key, 7)
    assert crypto.unwrap(master, wrapped, 7) == key
    aad = crypto.field_aad(7, "message", 3, "raw")
    sealed = crypto.encrypt(key, "héllo".encode(), aad)
    assert b"h\xc3\xa9llo" not in sealed
    assert crypto.decrypt(key, sealed, aad) == "héllo".encode()


def test_nonces_differ_so_equal_values_do_not_look_equal(master: crypto.MasterKey) -> None:
    key = crypto.new_data_key()
    aad = crypto.field_aad(1, "message", 0, "raw")
    assert crypto.encrypt(key, b"same", aad) != crypto.encrypt(key, b"same", aad)


def test_a_wrapped_key_does_not_open_for_another_conversation(master: crypto.MasterKey) -> None:
    wrapped = crypto.wrap(master, crypto.new_data_key(), 7)
    with pytest.raises(crypto.DecryptionError):
        crypto.unwrap(master, wrapped, 8)


def test_one_conversations_key_cannot_open_anothers_data() -> None:
    mine, theirs = crypto.new_data_key(), crypto.new_data_key()
    aad = crypto.field_aad(1, "message", 0, "raw")
    sealed = crypto.encrypt(theirs, b"secret", aad)
    with pytest.raises(crypto.DecryptionError):
        crypto.decrypt(mine, sealed, aad)


@pytest.mark.parametrize(
    "other_aad",
    [
        crypto.field_aad(2, "message", 0, "raw"),  # another conversation
        crypto.field_aad(1, "message", 1, "raw"),  # another row
        crypto.field_aad(1, "exchange", 0, "raw"),  # another table
        crypto.field_aad(1, "message", 0, "settings"),  # another field
    ],
    ids=["conversation", "row", "table", "field"],
)
def test_a_value_moved_elsewhere_does_not_decrypt(other_aad: bytes) -> None:
    key = crypto.new_data_key()
    sealed = crypto.encrypt(key, b"secret", crypto.field_aad(1, "message", 0, "raw"))
    with pytest.raises(crypto.DecryptionError):
        crypto.decrypt(key, sealed, other_aad)


def test_every_flipped_byte_is_detected() -> None:
    key = crypto.new_data_key()
    aad = crypto.field_aad(1, "message", 0, "raw")
    sealed = crypto.encrypt(key, b"the customer's message", aad)
    for i in range(len(sealed)):
        tampered = bytearray(sealed)
        tampered[i] ^= 0x01
        with pytest.raises(crypto.DecryptionError):
            crypto.decrypt(key, bytes(tampered), aad)


def test_truncated_ciphertext_is_detected() -> None:
    key = crypto.new_data_key()
    aad = crypto.field_aad(1, "message", 0, "raw")
    sealed = crypto.encrypt(key, b"x", aad)
    for n in (0, 1, 12, len(sealed) - 1):
        with pytest.raises(crypto.DecryptionError):
            crypto.decrypt(key, sealed[:n], aad)


@pytest.mark.parametrize(
    "text", ["", "not base64 !!!", "c2hvcnQ="], ids=["empty", "garbage", "short"]
)
def test_bad_master_key_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="master key"):
        crypto.MasterKey.from_text(text)


def test_master_key_id_is_a_stable_fingerprint() -> None:
    text = crypto.new_master_key_text()
    assert crypto.MasterKey.from_text(text).id == crypto.MasterKey.from_text(text).id
    assert (
        crypto.MasterKey.from_text(text).id
        != crypto.MasterKey.from_text(crypto.new_master_key_text()).id
    )
