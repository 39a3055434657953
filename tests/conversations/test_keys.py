"""Data keys at rest: in their own database, one per conversation; rotation re-wraps keys without
re-encrypting data; a destroyed key makes a conversation unreadable; tampering is detected."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import override_settings
from rest_framework.test import APIClient

from conversations.demo import demo_bodies
from conversations.keystore import crypto
from conversations.keystore.keys import (
    KeyDestroyed,
    data_key_destroy,
    data_key_for,
    decrypt_message,
)
from conversations.models import Conversation, DataKey, Exchange, Message
from conversations.replay import envelope
from conversations.selectors import conversation_message_raws

pytestmark = pytest.mark.django_db(databases="__all__")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def two_conversations(api: APIClient) -> list[Conversation]:
    for body in demo_bodies(2):
        assert api.post("/api/v1/exchanges", body, format="json").status_code == 201
    return list(Conversation.objects.order_by("pk"))


def test_each_conversation_has_one_key_in_the_keys_database(two_conversations: list) -> None:
    rows = DataKey.objects.using("keys").order_by("conversation_id")
    assert [r.conversation_id for r in rows] == [c.pk for c in two_conversations]
    with connections["default"].cursor() as cur:
        cur.execute("SELECT to_regclass('conversations_datakey')")
        assert cur.fetchone()[0] is None  # no key table in the main database


def test_messages_are_stored_encrypted(two_conversations: list) -> None:
    conversation = two_conversations[0]
    raws = conversation_message_raws(conversation)
    for message, raw in zip(conversation.messages.order_by("sequence"), raws, strict=True):
        sealed = bytes(message.raw_ciphertext)
        assert raw.encode() not in sealed
        assert raw[:40].encode() not in sealed


def test_one_conversations_key_cannot_open_anothers_messages(two_conversations: list) -> None:
    mine, theirs = two_conversations
    message = theirs.messages.order_by("sequence").first()
    with pytest.raises(crypto.DecryptionError):
        decrypt_message(data_key_for(mine.pk), theirs.pk, message.sequence, message.raw_ciphertext)
    # Moved into the other conversation's row, the ciphertext fails too (associated data).
    with pytest.raises(crypto.DecryptionError):
        decrypt_message(data_key_for(theirs.pk), mine.pk, message.sequence, message.raw_ciphertext)


def test_a_flipped_byte_in_the_database_is_detected(two_conversations: list) -> None:
    conversation = two_conversations[0]
    message = conversation.messages.order_by("sequence").first()
    sealed = bytearray(message.raw_ciphertext)
    sealed[len(sealed) // 2] ^= 0x40
    Message.objects.filter(pk=message.pk).update(raw_ciphertext=bytes(sealed))
    with pytest.raises(crypto.DecryptionError):
        conversation_message_raws(conversation)


def test_a_destroyed_key_makes_one_conversation_unreadable(two_conversations: list) -> None:
    gone, kept = two_conversations
    before = conversation_message_raws(kept)
    assert data_key_destroy(gone.pk) == 1
    with pytest.raises(KeyDestroyed):
        conversation_message_raws(gone)
    assert conversation_message_raws(kept) == before


def test_rotation_rewraps_keys_without_reencrypting_data(
    api: APIClient, two_conversations: list, settings: Any
) -> None:
    old_key = settings.FIELD_ENCRYPTION_KEYS[0]
    replays = [
        api.get(f"/api/v1/conversations/{c.external_id}/messages").content
        for c in two_conversations
    ]
    ciphertexts = list(Message.objects.order_by("pk").values_list("raw_ciphertext", flat=True))
    settings_ct = list(
        Exchange.objects.order_by("pk").values_list("settings_ciphertext", flat=True)
    )
    wrapped_before = dict(
        DataKey.objects.using("keys").values_list("conversation_id", "wrapped_key")
    )
    new_key = crypto.new_master_key_text()
    settings.FIELD_ENCRYPTION_KEYS = [new_key, old_key]
    out = io.StringIO()
    call_command("rewrap_keys", stdout=out)
    assert "re-wrapped 2 data key(s)" in out.getvalue()
    rows = list(DataKey.objects.using("keys"))
    assert {r.master_key_id for r in rows} == {crypto.MasterKey.from_text(new_key).id}
    assert all(bytes(r.wrapped_key) != bytes(wrapped_before[r.conversation_id]) for r in rows)
    # The data is untouched...
    assert [
        bytes(c) for c in Message.objects.order_by("pk").values_list("raw_ciphertext", flat=True)
    ] == [bytes(c) for c in ciphertexts]
    assert [
        bytes(c)
        for c in Exchange.objects.order_by("pk").values_list("settings_ciphertext", flat=True)
    ] == [bytes(c) for c in settings_ct]
    # ...and still replays byte for byte, now with only the new master key.
    settings.FIELD_ENCRYPTION_KEYS = [new_key]
    assert [
        api.get(f"/api/v1/conversations/{c.external_id}/messages").content
        for c in two_conversations
    ] == replays
    # A second run has nothing left to do.
    out = io.StringIO()
    call_command("rewrap_keys", stdout=out)
    assert "re-wrapped 0 data key(s)" in out.getvalue()


def test_without_the_old_master_key_rewrap_fails_clearly(
    two_conversations: list, settings: Any
) -> None:
    settings.FIELD_ENCRYPTION_KEYS = [crypto.new_master_key_text()]
    with pytest.raises(CommandError, match="not in FIELD_ENCRYPTION_KEYS"):
        call_command("rewrap_keys", stdout=io.StringIO())


def test_replay_envelope_is_byte_exact_after_encryption(
    api: APIClient, two_conversations: list
) -> None:
    conversation = two_conversations[0]
    body = api.get(f"/api/v1/conversations/{conversation.external_id}/messages").content
    assert body == envelope(conversation_message_raws(conversation))


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"FIELD_ENCRYPTION_KEYS": ""}, "FIELD_ENCRYPTION_KEYS is not set"),
        ({"FIELD_ENCRYPTION_KEYS": "x" * 10, "SECRET_KEY": ""}, "SECRET_KEY is not set"),
    ],
    ids=["no-master-key", "no-secret-key"],
)
def test_production_refuses_to_start_without_secrets(environment: dict, expected: str) -> None:
    env = {
        **os.environ,
        "ENVIRONMENT": "production",
        "SECRET_KEY": "s" * 50,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        **environment,
    }
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert expected in result.stderr


@override_settings(FIELD_ENCRYPTION_KEYS=[])
def test_no_master_key_at_run_time_is_an_error_not_plaintext(db: Any) -> None:
    with pytest.raises(crypto.DecryptionError, match="no master key"):
        data_key_for(1, create=True)
