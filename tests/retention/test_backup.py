"""Backups: a dump of the main database taken before an erasure holds the subject's messages only
as ciphertext whose key is gone. Restored into a scratch database, they can no longer be read;
the other subject's messages still can (the dump and the restore work)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connections
from django.utils import timezone
from psycopg import sql

from conversations.keystore import crypto
from conversations.keystore.keys import KeyDestroyed, data_key_for, decrypt_message, master_keys
from conversations.models import Conversation
from conversations.services import service_token_create
from retention.backups import backup_horizon
from retention.models import DeletionRequest, Receipt
from retention.services import (
    conversation_erase,
    deletion_request_claim,
    deletion_request_execute,
    deletion_request_submit,
    receipt_verify,
)
from tests.dumps import pg_dump, pg_dump_binary
from tests.factories import UserFactory, post_exchange, roles

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


# --- the backup horizon -------------------------------------------------------------------------


def _dump_custom(alias: str, path: Path) -> None:
    """``pg_dump --format=custom`` of ``alias``'s database into ``path`` (a backup, as
    docs/operations.md takes them)."""
    connection = connections[alias]
    connection.ensure_connection()
    params = connection.get_connection_params()
    args = [pg_dump_binary(connection.pg_version // 10000), "--format=custom", "--no-owner"]
    args += ["--file", str(path), "--dbname", params["dbname"]]
    for flag, key in (("--host", "host"), ("--port", "port"), ("--username", "user")):
        if params.get(key):
            args += [flag, str(params[key])]
    env = {"PGPASSWORD": params.get("password") or ""}
    subprocess.run(args, check=True, capture_output=True, env=env, timeout=300)


def _pg_restore(path: Path, scratch: str) -> dict[str, Any]:
    """Restore a custom-format dump into a new database ``scratch`` with ``pg_restore``."""
    connection = connections["default"]
    params = connection.get_connection_params()
    admin = {k: v for k, v in params.items() if k in ("host", "port", "user", "password") and v}
    with psycopg.connect(dbname="postgres", autocommit=True, **admin) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(scratch))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(scratch)))
    restore = str(Path(pg_dump_binary(connection.pg_version // 10000)).with_name("pg_restore"))
    args = [restore, "--no-owner", "--exit-on-error", "--dbname", scratch]
    for flag, key in (("--host", "host"), ("--port", "port"), ("--username", "user")):
        if admin.get(key):
            args += [flag, str(admin[key])]
    args.append(str(path))
    env = {"PGPASSWORD": str(admin.get("password") or "")}
    subprocess.run(args, check=True, capture_output=True, env=env, timeout=300)
    return {"dbname": scratch, **admin}


def _readable_from(main: dict[str, Any], keys: dict[str, Any], conversation_id: int) -> list[str]:
    """What a restore of these two backups gives back of one conversation: its messages,
    decrypted with its data key as found in the restored keys database (KeyDestroyed: none)."""
    with psycopg.connect(**keys) as conn:
        found = conn.execute(
            "SELECT master_key_id, wrapped_key FROM conversations_datakey "
            "WHERE conversation_id = %s",
            [conversation_id],
        ).fetchone()
    if found is None:
        raise KeyDestroyed(f"no data key for conversation {conversation_id} in this backup")
    master = next(m for m in master_keys() if m.id == found[0])
    key = crypto.unwrap(master, bytes(found[1]), conversation_id)
    with psycopg.connect(**main) as conn:
        rows = conn.execute(
            "SELECT sequence, raw_ciphertext FROM conversations_message "
            "WHERE conversation_id = %s ORDER BY sequence",
            [conversation_id],
        ).fetchall()
    return [decrypt_message(key, conversation_id, seq, bytes(sealed)) for seq, sealed in rows]


def _url(database: dict[str, Any]) -> str:
    host = database.get("host") or "127.0.0.1"
    port = database.get("port") or 5432
    user, password = database.get("user") or "", database.get("password") or ""
    return f"postgres://{user}:{password}@{host}:{port}/{database['dbname']}"


def _manage(main: dict[str, Any], keys: dict[str, Any], *command: str) -> str:
    """A management command on restored databases (a process of its own)."""
    env = {**os.environ, "DATABASE_URL": _url(main), "KEYS_DATABASE_URL": _url(keys)}
    env.pop("DATABASE_REPLICA_URLS", None)
    done = subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_backup_horizon_is_the_erasure_plus_the_longest_retention(settings: Any) -> None:
    at = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    settings.KEY_BACKUP_RETENTION_DAYS, settings.BACKUP_RETENTION_DAYS = 14, 14
    assert backup_horizon(at) == at + timedelta(days=14)
    settings.BACKUP_RETENTION_DAYS = 35  # main backups kept longer: their projections count
    assert backup_horizon(at) == at + timedelta(days=35)
    settings.KEY_BACKUP_RETENTION_DAYS = 90
    assert backup_horizon(at) == at + timedelta(days=90)
    with pytest.raises(ValueError, match="aware"):
        backup_horizon(datetime(2026, 3, 1, 12, 0))


def test_a_key_backup_before_the_erasure_reads_it_until_the_receipts_horizon(
    api: Any, tmp_path: Path, settings: Any
) -> None:
    """A main dump restored with a key backup taken after the erasure: the conversation stays
    unreadable. With one taken before it: readable, which the receipt says will be true until
    its horizon, and no later than that (the key backup expires by then)."""
    settings.KEY_BACKUP_RETENTION_DAYS = settings.BACKUP_RETENTION_DAYS = 21
    post_exchange(api, conversation="bk-hz", customer="cus-bk-hz", text="MARKER-HORIZON-7b3e")
    conversation = Conversation.objects.get(external_id="bk-hz")

    keys_before_taken = timezone.now()
    _dump_custom("keys", tmp_path / "keys-before.dump")
    _dump_custom("default", tmp_path / "main.dump")  # holds the messages, encrypted

    request = deletion_request_submit(customer="cus-bk-hz", reason="GDPR art. 17")
    claimed = deletion_request_claim()
    assert claimed is not None and claimed.pk == request.pk
    done = deletion_request_execute(request=claimed)
    assert done.status == DeletionRequest.Status.COMPLETED
    receipt = Receipt.objects.get(request=done)
    _dump_custom("keys", tmp_path / "keys-after.dump")

    name = connections["default"].settings_dict["NAME"]
    main = _pg_restore(tmp_path / "main.dump", f"{name}_hz_main")
    scratch = [main]
    try:
        after = _pg_restore(tmp_path / "keys-after.dump", f"{name}_hz_keys_after")
        scratch.append(after)
        with pytest.raises(KeyDestroyed):
            _readable_from(main, after, conversation.pk)
        before = _pg_restore(tmp_path / "keys-before.dump", f"{name}_hz_keys_before")
        scratch.append(before)
        restored = _readable_from(main, before, conversation.pk)
        assert any("MARKER-HORIZON-7b3e" in raw for raw in restored)
        # The projections came back with the main dump, in the clear, whatever the keys say...
        with psycopg.connect(**main) as conn:
            assert conn.execute(
                "SELECT count(*) FROM conversations_block WHERE text LIKE %s",
                ["%MARKER-HORIZON-7b3e%"],
            ).fetchone()[0]  # type: ignore[index]
        # ...until the restore is reconciled with its keys backup: erased again.
        assert "would erase 1 conversation(s)" in _manage(
            main, after, "reconcile_restore", "--dry-run"
        )
        reconciled = _manage(main, after, "reconcile_restore")
        assert "erased 1 conversation(s) without a data key" in reconciled
        with psycopg.connect(**main) as conn:
            left = conn.execute(
                "SELECT count(*) FROM conversations_conversation WHERE id = %s",
                [conversation.pk],
            ).fetchone()[0]  # type: ignore[index]
            audited = conn.execute(
                "SELECT details FROM audit_auditevent WHERE code = 'restore.reconciled'"
            ).fetchall()
        assert left == 0
        assert [row[0]["conversations"] for row in audited] == [1]
    finally:
        for database in scratch:
            _drop(database)

    # Until when: the receipt's horizon, signed with it, covers that key backup's whole life.
    assert receipt.backup_horizon == backup_horizon(receipt.issued_at)
    assert receipt.backup_horizon >= keys_before_taken + timedelta(days=21)
    assert receipt.backup_horizon <= timezone.now() + timedelta(days=21)
    assert receipt_verify(receipt)
    forged = Receipt.objects.get(pk=receipt.pk)
    forged.backup_horizon = receipt.backup_horizon - timedelta(days=20)
    assert not receipt_verify(forged)


def test_every_receipt_surface_states_the_horizon(api: Any, client: Any) -> None:
    roles()
    officer = UserFactory(groups=["compliance"])
    post_exchange(api, conversation="bk-hz-2", customer="cus-bk-hz-2", text="x")
    request = deletion_request_submit(customer="cus-bk-hz-2", reason="GDPR art. 17")
    done = deletion_request_execute(request=deletion_request_claim())
    receipt = Receipt.objects.get(request=done)
    assert receipt.backup_horizon is not None
    shown = timezone.localtime(receipt.backup_horizon).strftime("%Y-%m-%d %H:%M")

    client.force_login(officer)
    page = client.get(f"/compliance/deletions/{request.pk}/").content.decode()
    assert "no backup can restore the erased data after" in page
    assert shown in page
    as_json = client.get(f"/compliance/deletions/{request.pk}/receipt.json").json()
    assert as_json["backup_horizon"] == receipt.backup_horizon.isoformat()
    as_csv = client.get(f"/compliance/deletions/{request.pk}/receipt.csv").content.decode()
    header, first = as_csv.splitlines()[:2]
    assert header.split(",")[2] == "backup_horizon"
    assert first.split(",")[2] == receipt.backup_horizon.isoformat()

    _, compliance_token = service_token_create(name="ticketing", scope="compliance")
    from rest_framework.test import APIClient

    ticketing = APIClient()
    ticketing.credentials(HTTP_AUTHORIZATION=f"Bearer {compliance_token}")
    body = ticketing.get(f"/api/v1/deletion-requests/{request.pk}").json()
    assert body["receipt"]["backup_horizon"].replace("Z", "+00:00") == (
        receipt.backup_horizon.isoformat()
    )
