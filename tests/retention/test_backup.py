"""Backups: a dump of the main database taken before an erasure holds the subject's messages only
as ciphertext whose key is gone. Restored into a scratch database, they can no longer be read;
the other subject's messages still can (the dump and the restore work)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connections
from psycopg import sql

from conversations.keystore import crypto
from conversations.keystore.keys import KeyDestroyed, data_key_for, decrypt_message
from conversations.models import Conversation
from retention.services import conversation_erase
from tests.dumps import pg_dump, pg_dump_binary
from tests.factories import post_exchange

pytestmark = pytest.mark.django_db(transaction=True, databases="__all__")


def _restore(dump: str, scratch: str) -> dict[str, Any]:
    """Create ``scratch`` on the test server, load the plain-SQL dump into it with psql."""
    connection = connections["default"]
    params = connection.get_connection_params()
    admin = {k: v for k, v in params.items() if k in ("host", "port", "user", "password") and v}
    with psycopg.connect(dbname="postgres", autocommit=True, **admin) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(scratch)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(scratch)))
    psql = str(Path(pg_dump_binary(connection.pg_version // 10000)).with_name("psql"))
    args = [psql, "--quiet", "--set", "ON_ERROR_STOP=1", "--dbname", scratch]
    if admin.get("host"):
        args += ["--host", str(admin["host"])]
    if admin.get("port"):
        args += ["--port", str(admin["port"])]
    if admin.get("user"):
        args += ["--username", str(admin["user"])]
    subprocess.run(args, input=dump, text=True, check=True, capture_output=True, timeout=300)
    return {"dbname": scratch, **admin}


def _drop(scratch: dict[str, Any]) -> None:
    admin = {k: v for k, v in scratch.items() if k != "dbname"}
    with psycopg.connect(dbname="postgres", autocommit=True, **admin) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(scratch["dbname"])
            )
        )


def test_a_restored_backup_cannot_be_read_for_an_erased_subject(api: Any) -> None:
    for conversation, customer, text in [
        ("bk-gone", "cus-bk-gone", "MARKER-BACKUP-GONE-41c7"),
        ("bk-kept", "cus-bk-kept", "MARKER-BACKUP-KEPT-9e02"),
    ]:
        post_exchange(api, conversation=conversation, customer=customer, text=text)
    gone = Conversation.objects.get(external_id="bk-gone")
    kept = Conversation.objects.get(external_id="bk-kept")

    backup = pg_dump("default")  # taken before the erasure
    conversation_erase(gone.pk)
    scratch_name = f"{connections['default'].settings_dict['NAME']}_restore"
    scratch = _restore(backup, scratch_name)
    try:
        with psycopg.connect(**scratch) as conn:
            rows = conn.execute(
                "SELECT conversation_id, sequence, raw_ciphertext FROM conversations_message "
                "WHERE conversation_id = ANY(%s) ORDER BY conversation_id, sequence",
                [[gone.pk, kept.pk]],
            ).fetchall()
        restored = {cid for cid, _, _ in rows}
        assert restored == {gone.pk, kept.pk}  # the backup holds both subjects' rows
        for conversation_id, sequence, sealed in rows:
            if conversation_id == kept.pk:
                raw = decrypt_message(data_key_for(kept.pk), kept.pk, sequence, bytes(sealed))
                assert "MARKER-BACKUP-KEPT-9e02" in raw
            else:
                with pytest.raises(KeyDestroyed):
                    data_key_for(gone.pk)
                # No other key opens it either.
                with pytest.raises(crypto.DecryptionError):
                    decrypt_message(data_key_for(kept.pk), gone.pk, sequence, bytes(sealed))
                assert b"MARKER-BACKUP-GONE" not in bytes(sealed)
    finally:
        _drop(scratch)
