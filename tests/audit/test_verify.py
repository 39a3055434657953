"""verify_audit: a good chain passes; the first altered or unlinked row is named; appends from
concurrent transactions still form one line."""

from __future__ import annotations

import io
import itertools
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections, transaction

import audit
from audit.management.commands import verify_audit
from audit.models import AuditEvent
from audit.verify import verify_chain
from tests.conftest import database_url

from .conftest import GENESIS, chain, expected_hash

pytestmark = pytest.mark.django_db

TRIGGER = "audit_auditevent_append_only"
MANAGE = Path(__file__).resolve().parents[2] / "manage.py"


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("verify_audit", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def write(n: int) -> list[AuditEvent]:
    events = []
    for i in range(n):
        with transaction.atomic():
            events.append(
                audit.record(
                    "conversation.viewed",
                    conversation_id=i + 1,
                    subject=f"cust-{i}",
                    page="detail",
                    purpose=f"ticket {i} ✓",
                )
            )
    return events


def as_superuser(sql: str, params: list[Any]) -> None:
    """What a database superuser can do behind the application's back: the trigger is disabled
    for one statement, inside the test's transaction (rolled back with it)."""
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE audit_auditevent DISABLE TRIGGER {TRIGGER}")
        cursor.execute(sql, params)
        cursor.execute(f"ALTER TABLE audit_auditevent ENABLE TRIGGER {TRIGGER}")


def test_a_good_chain_verifies() -> None:
    events = write(5)
    out, err = run("--no-progress")
    assert f"verified 5 audit rows; head: row {events[-1].id}, hash {events[-1].hash}" in out
    assert err == ""


def test_an_empty_log_verifies() -> None:
    out, _ = run("--no-progress")
    assert "verified 0 audit rows" in out


def test_small_chunks_walk_the_whole_chain() -> None:
    write(7)
    seen: list[int] = []
    report = verify_chain(chunk_size=2, progress=seen.append)
    assert report.ok and report.verified == 7
    assert sum(seen) == 7


def test_an_altered_middle_row_is_named() -> None:
    events = write(5)
    middle = events[2]
    as_superuser(
        "UPDATE audit_auditevent SET details = %s WHERE id = %s",
        ['{"page": "detail", "purpose": "nothing to see"}', middle.id],
    )
    with pytest.raises(CommandError) as caught:
        run("--no-progress")
    message = str(caught.value)
    assert message.startswith(f"audit chain broken at row {middle.id}: hash mismatch")
    assert "2 rows before it verified" in message
    assert caught.value.returncode != 0


def test_an_altered_and_rehashed_row_breaks_the_next_link() -> None:
    events = write(5)
    forged = AuditEvent.objects.get(pk=events[2].id)
    forged.details = {"page": "detail", "purpose": "nothing to see"}
    forged_hash = expected_hash(forged)
    as_superuser(
        "UPDATE audit_auditevent SET details = %s, hash = %s WHERE id = %s",
        ['{"page": "detail", "purpose": "nothing to see"}', forged_hash, forged.id],
    )
    # The forged row hashes right; the next row still names the original.
    with pytest.raises(CommandError) as caught:
        run("--no-progress")
    assert str(caught.value).startswith(f"audit chain broken at row {events[3].id}: broken link")


def test_a_deleted_middle_row_is_a_broken_link() -> None:
    events = write(5)
    as_superuser("DELETE FROM audit_auditevent WHERE id = %s", [events[2].id])
    with pytest.raises(CommandError) as caught:
        run("--no-progress")
    assert str(caught.value).startswith(f"audit chain broken at row {events[3].id}: broken link")
    assert f"row {events[1].id}" in str(caught.value)


def test_a_deleted_first_row_is_a_broken_link() -> None:
    events = write(3)
    as_superuser("DELETE FROM audit_auditevent WHERE id = %s", [events[0].id])
    report = verify_chain()
    assert (report.broken_id, report.verified) == (events[1].id, 0)
    assert "start of the chain" in report.problem


def test_a_row_inserted_behind_records_back_is_a_broken_link() -> None:
    events = write(3)
    last = events[-1]
    with connection.cursor() as cursor:  # inserts are allowed: they just cannot join the chain
        cursor.execute(
            "INSERT INTO audit_auditevent (id, at, code, actor_label, details, prev_hash, hash) "
            "VALUES (%s, now(), 'retention.swept', 'system', '{}', %s, %s)",
            [last.id + 1000, "e" * 64, "d" * 64],
        )
    report = verify_chain()
    assert report.broken_id == last.id + 1000
    assert report.problem.startswith("broken link")


def test_progress_bar_on_stderr_for_many_rows(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    write(3)
    monkeypatch.setattr(verify_audit, "PROGRESS_MIN_ROWS", 2)
    call_command("verify_audit")
    assert "verify_audit" in capsys.readouterr().err
    call_command("verify_audit", "--no-progress")
    assert capsys.readouterr().err == ""


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_form_one_chain() -> None:
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        try:
            start.wait(timeout=10)
            for i in range(20):
                with transaction.atomic():
                    audit.record("conversation.listed", actor=None, filters={"w": name, "i": i})
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            connections.close_all()  # this thread's own connection

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    rows = chain()
    assert len(rows) == 40
    assert rows[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(rows))
    assert all(a.at <= b.at for a, b in itertools.pairwise(rows))
    report = verify_chain()
    assert report.ok and report.verified == 40


@pytest.mark.django_db(transaction=True)
def test_the_command_exits_non_zero_on_a_break() -> None:
    """The real process and exit status, against the test database."""
    events = write(3)
    env = {
        **os.environ,
        "DATABASE_URL": database_url("default"),
        "KEYS_DATABASE_URL": database_url("keys"),
    }
    command = [sys.executable, str(MANAGE), "verify_audit", "--no-progress"]
    good = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert good.returncode == 0, good.stderr
    assert "verified 3 audit rows" in good.stdout
    with transaction.atomic():
        as_superuser("UPDATE audit_auditevent SET code = %s WHERE id = %s", ["x.y", events[1].id])
    bad = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1
    assert f"audit chain broken at row {events[1].id}: hash mismatch" in bad.stderr
