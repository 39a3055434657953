"""verify_audit: a good log passes; an altered, removed or reordered row, a forged or removed
digest, and rows left unsealed too long are each named; the command's exit status says so.

Transactional: rows are sealed once their transactions have finished (test_sealer.py)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from django.utils import timezone

import audit
from audit.hashing import digest_hash, digest_signature
from audit.management.commands import verify_audit
from audit.models import AuditDigest, AuditSeal
from audit.sealer import seal_pending
from audit.verify import verify_chain
from tests.conftest import database_url

from .conftest import as_superuser, seals, write, write_and_seal

pytestmark = pytest.mark.django_db(transaction=True)

MANAGE = Path(__file__).resolve().parents[2] / "manage.py"


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("verify_audit", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def problems(**kwargs: Any) -> list[tuple[str, int | None]]:
    report = verify_chain(**kwargs)
    return [(p.kind, p.event_id) for p in report.problems]


def test_a_good_log_verifies() -> None:
    write_and_seal(5)
    last = seals()[-1]
    out, err = run("--no-progress")
    assert f"verified 5 audit rows and 1 digests; head: position 5, hash {last.hash}" in out, out
    assert err == ""


def test_an_empty_log_verifies() -> None:
    out, _ = run("--no-progress")
    assert "verified 0 audit rows and 0 digests" in out


def test_recent_unsealed_rows_are_counted_not_reported() -> None:
    write_and_seal(2)
    write(3)
    report = verify_chain()
    assert report.ok and (report.verified, report.unsealed) == (2, 3)
    out, _ = run("--no-progress")
    assert "3 recent rows not sealed yet" in out


def test_small_chunks_walk_the_whole_chain() -> None:
    write_and_seal(7)
    seen: list[int] = []
    report = verify_chain(chunk_size=2, progress=seen.append)
    assert report.ok and report.verified == 7
    assert sum(seen) == 7


def test_an_altered_middle_row_is_named() -> None:
    events = write_and_seal(5)
    middle = events[2]
    as_superuser(
        "audit_auditevent",
        "UPDATE audit_auditevent SET details = %s WHERE id = %s",
        ['{"page": "detail", "purpose": "nothing to see"}', middle.id],
    )
    assert problems() == [("altered", middle.id)]
    with pytest.raises(CommandError) as caught:
        run("--no-progress")
    message = str(caught.value)
    assert f"row {middle.id} (sealed at position 3) was altered" in message
    assert "4 sealed rows and 1 digests checked out" in message


def test_a_deleted_sealed_row_is_named() -> None:
    events = write_and_seal(5)
    as_superuser("audit_auditevent", "DELETE FROM audit_auditevent WHERE id = %s", [events[1].id])
    assert problems() == [("removed", events[1].id)]


def test_a_swapped_pair_is_named() -> None:
    """Two rows trade places in the order: their seals swap positions 2 and 3."""
    events = write_and_seal(4)
    for old, new in ((2, 0), (3, 2), (0, 3)):  # the primary key forbids a swap in one statement
        as_superuser(
            "audit_auditseal",
            "UPDATE audit_auditseal SET position = %s WHERE position = %s",
            [new, old],
        )
    found = verify_chain().problems
    reordered = [(p.position, p.event_id) for p in found if p.kind == "reordered"]
    assert reordered[:2] == [(2, events[2].id), (3, events[1].id)]
    assert "broken link at position 2" in found[0].text


def test_a_deleted_seal_breaks_the_chain() -> None:
    write_and_seal(4)
    as_superuser("audit_auditseal", "DELETE FROM audit_auditseal WHERE position = 2", [])
    found = verify_chain().problems
    assert [p.kind for p in found][:2] == ["reordered", "reordered"]
    assert found[0].position == 3
    assert "positions 2..2 are missing" in found[0].text


def test_a_rehashed_chain_without_the_key_fails_at_its_digest() -> None:
    """Rewrite a row, its seal and every later seal with correct hashes: only the digest's
    signature, which needs the key, gives it away."""
    from audit.hashing import event_hash, seal_hash

    write_and_seal(3)
    chain = seals()
    from audit.models import AuditEvent

    target = AuditEvent.objects.get(pk=chain[1].event_id)
    as_superuser(
        "audit_auditevent",
        "UPDATE audit_auditevent SET details = %s WHERE id = %s",
        ['{"page": "detail", "purpose": "rewritten"}', target.pk],
    )
    target.refresh_from_db()
    fields = {
        f: getattr(target, f)
        for f in (
            "id",
            "at",
            "xid",
            "code",
            "actor_id",
            "actor_label",
            "conversation_id",
            "subject_hash",
            "details",
        )
    }
    prev = chain[0].hash
    for seal in chain[1:]:
        h = event_hash(fields) if seal.event_id == target.pk else seal.event_hash
        link = seal_hash(position=seal.position, event_hash=h, prev_hash=prev)
        as_superuser(
            "audit_auditseal",
            "UPDATE audit_auditseal SET event_hash = %s, prev_hash = %s, hash = %s "
            "WHERE position = %s",
            [h, prev, link, seal.position],
        )
        prev = link
    digest = AuditDigest.objects.get()
    values = {f.name: getattr(digest, f.name) for f in AuditDigest._meta.fields}
    values["last_seal_hash"] = prev
    forged_hash = digest_hash(values)
    as_superuser(
        "audit_auditdigest",
        "UPDATE audit_auditdigest SET last_seal_hash = %s, hash = %s, signature = %s",
        [prev, forged_hash, digest_signature(forged_hash, b"not the key")],
    )
    found = verify_chain(witness="").problems  # what the database alone shows
    assert [(p.kind, p.digest_id) for p in found] == [("digest", digest.id)]
    assert "signature is not valid (forged)" in found[0].text
    # The witness (audit/witness.py) names the same digest: its head differs.
    assert [(p.kind, p.digest_id) for p in verify_chain().problems] == [
        ("digest", digest.id),
        ("witness", digest.id),
    ]


def test_a_forged_digest_is_named() -> None:
    write_and_seal(2)
    digest = AuditDigest.objects.get()
    as_superuser(
        "audit_auditdigest",
        "UPDATE audit_auditdigest SET signature = %s WHERE id = %s",
        ["0" * 64, digest.id],
    )
    found = verify_chain().problems
    assert [(p.kind, p.digest_id) for p in found] == [("digest", digest.id)]


def test_a_removed_digest_is_named() -> None:
    write_and_seal(2)
    write_and_seal(2)
    first, second = AuditDigest.objects.order_by("id")
    as_superuser("audit_auditdigest", "DELETE FROM audit_auditdigest WHERE id = %s", [first.id])
    found = verify_chain(witness="").problems  # what the database alone shows
    assert {(p.kind, p.digest_id) for p in found} == {("digest", second.id)}
    assert any("prev_hash is not the previous digest's hash" in p.text for p in found)
    witnessed = [p.text for p in verify_chain().problems if p.kind == "witness"]
    assert witnessed == [
        f"witnessed digest {first.id} (positions 1..2, hash {first.hash}) is "
        "missing from the database"
    ]


def test_seals_after_the_last_digest_are_unsigned() -> None:
    write_and_seal(3)
    as_superuser("audit_auditdigest", "DELETE FROM audit_auditdigest", [])
    found = verify_chain(witness="").problems  # what the database alone shows
    assert [p.kind for p in found] == ["unsigned"]
    assert [p.kind for p in verify_chain().problems] == ["witness", "unsigned"]
    assert "positions 1..3 are not covered" in found[0].text


def test_rows_unsealed_too_long_are_reported(settings: Any) -> None:
    events = write(2)
    later = timezone.now() + timedelta(
        seconds=settings.AUDIT_SEAL_INTERVAL_SECONDS * settings.AUDIT_UNSEALED_GRACE_INTERVALS + 1
    )
    found = verify_chain(now=later).problems
    assert [(p.kind, p.event_id) for p in found] == [("unsealed", events[0].id)]
    assert "2 row(s) unsealed for longer than" in found[0].text
    assert seal_pending().rows == 2
    assert verify_chain(now=later).ok


def test_a_row_inserted_behind_the_frontier_is_named() -> None:
    events = write_and_seal(3)
    from audit.models import AuditEvent

    with transaction.atomic():  # an INSERT is allowed; this one claims an old transaction id
        forged = AuditEvent.objects.create(
            code="retention.swept", actor_label="system", details={}, xid=events[0].xid - 1
        )
    assert seal_pending().rows == 0  # behind the frontier: the sealer never goes back
    found = verify_chain().problems
    assert [(p.kind, p.event_id) for p in found] == [("unsealed", forged.id)]


def test_progress_bar_on_stderr_for_many_rows(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    write_and_seal(3)
    monkeypatch.setattr(verify_audit, "PROGRESS_MIN_ROWS", 2)
    call_command("verify_audit")
    assert "verify_audit" in capsys.readouterr().err
    call_command("verify_audit", "--no-progress")
    assert capsys.readouterr().err == ""


def test_the_command_exits_non_zero_on_a_break() -> None:
    """The real process and exit status, against the test database."""
    events = write_and_seal(3)
    env = {
        **os.environ,
        "DATABASE_URL": database_url("default"),
        "KEYS_DATABASE_URL": database_url("keys"),
    }
    command = [sys.executable, str(MANAGE), "verify_audit", "--no-progress"]
    good = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert good.returncode == 0, good.stderr
    assert "verified 3 audit rows" in good.stdout
    as_superuser(
        "audit_auditevent",
        "UPDATE audit_auditevent SET code = %s WHERE id = %s",
        ["x.y", events[1].id],
    )
    bad = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1
    assert f"row {events[1].id} (sealed at position 2) was altered" in bad.stderr


def test_details_hash_as_values_not_as_one_serialisation() -> None:
    """jsonb may print a value differently from how it was written; the hash covers the value."""
    with transaction.atomic():
        audit.record("conversation.listed", filters={"b": [1, 2], "a": "ü"}, results=0, page="x")
    assert seal_pending().rows == 1
    (seal,) = seals()
    from audit.hashing import event_hash
    from audit.models import AuditEvent

    row = AuditEvent.objects.values(
        "id",
        "at",
        "xid",
        "code",
        "actor_id",
        "actor_label",
        "conversation_id",
        "subject_hash",
        "details",
    ).get()
    assert event_hash(row) == seal.event_hash
    assert event_hash({**row, "details": json.dumps(row["details"], indent=2)}) == seal.event_hash
    assert AuditSeal.objects.count() == 1
