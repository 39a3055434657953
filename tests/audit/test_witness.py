"""The audit witness (audit/witness.py): the database's owner cuts the log's tail, empties it
under replica mode, or alters a row with the triggers off; ``verify_audit`` exits non-zero naming
each (before the witness, the first two verified). The sealer keeps working afterwards; the
witness also goes to an HTTP collector.

Transactional: rows are sealed once their transactions have finished."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from audit.models import AuditDigest, AuditEvent, AuditSeal
from audit.sealer import seal_pending
from tests.conftest import database_url

from .conftest import write, write_and_seal

pytestmark = pytest.mark.django_db(transaction=True)

MANAGE = Path(__file__).resolve().parents[2] / "manage.py"


def verify(*args: str) -> str:
    out = io.StringIO()
    call_command("verify_audit", "--no-progress", *args, stdout=out)
    return out.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as caught:
        verify(*args)
    return str(caught.value)


def as_owner(*statements: tuple[str, list[Any]]) -> None:
    """What the database's owner can do: triggers skipped for one transaction."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        for sql, params in statements:
            cursor.execute(sql, params)


@pytest.fixture
def no_witness(tmp_path: Path) -> Path:
    """An empty witness: what the database alone says."""
    path = tmp_path / "none.log"
    path.write_text("")
    return path


def five_digests() -> list[AuditDigest]:
    for _ in range(5):
        write_and_seal(2)
    digests = list(AuditDigest.objects.order_by("id"))
    assert len(digests) == 5
    return digests


def test_each_digest_head_is_witnessed_and_a_good_log_verifies(settings: Any) -> None:
    digests = five_digests()
    lines = [json.loads(x) for x in Path(settings.AUDIT_WITNESS).read_text().splitlines()]
    assert [(x["digest"], x["last_position"], x["hash"]) for x in lines] == [
        (d.id, d.last_position, d.hash) for d in digests
    ]
    assert {x["database"] for x in lines} == {connection.settings_dict["NAME"]}
    assert "verified 10 audit rows and 5 digests" in verify()
    assert "5 digests as witnessed" in verify()


def test_a_cut_tail_is_named(no_witness: Path) -> None:
    digests = five_digests()
    cut = [d.id for d in digests[-3:]]
    events = list(AuditSeal.objects.filter(digest_id__in=cut).values_list("event_id", flat=True))
    assert len(events) == 6
    as_owner(
        ("DELETE FROM audit_auditseal WHERE digest_id = ANY(%s)", [cut]),
        ("DELETE FROM audit_auditdigest WHERE id = ANY(%s)", [cut]),
        ("DELETE FROM audit_auditevent WHERE id = ANY(%s)", [events]),
    )
    # What the database alone says: a good, shorter log.
    assert "verified 4 audit rows and 2 digests" in verify("--witness", str(no_witness))
    message = refused()
    assert (
        f"the audit chain ends at digest {digests[1].id} (position 4) before the last witnessed "
        f"head, digest {digests[4].id} at position 10: 3 witnessed digest(s) are missing"
    ) in message
    # The sealer goes on; the cut stays visible.
    write_and_seal(1)
    later = refused()
    assert "3 problem(s)" in later
    for digest in cut:
        assert f"witnessed digest {digest} " in later and "is missing from the database" in later


def test_a_log_emptied_under_replica_mode_is_named(no_witness: Path) -> None:
    digests = five_digests()
    as_owner(("TRUNCATE audit_auditseal, audit_auditdigest, audit_auditevent", []))
    assert AuditEvent.objects.count() == AuditSeal.objects.count() == 0
    assert "verified 0 audit rows" in verify("--witness", str(no_witness))
    message = refused()
    assert (
        f"the audit log is empty but its witness names 5 digest head(s), the last digest "
        f"{digests[-1].id} at position 10: the log was emptied"
    ) in message
    write(1)
    assert seal_pending().rows == 1  # the sealer starts a new chain; the witness remembers


def test_the_command_exits_non_zero_naming_each_break(settings: Any) -> None:
    """The real process and exit status, for each tampering, against the test database."""
    digests = five_digests()
    env = {
        **os.environ,
        "DATABASE_URL": database_url("default"),
        "KEYS_DATABASE_URL": database_url("keys"),
        "AUDIT_WITNESS": settings.AUDIT_WITNESS,
    }
    command = [sys.executable, str(MANAGE), "verify_audit", "--no-progress"]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)

    good = run()
    assert good.returncode == 0, good.stderr
    assert "5 digests as witnessed" in good.stdout

    row = AuditSeal.objects.get(position=3).event_id
    as_owner(("UPDATE audit_auditevent SET code = 'x.y' WHERE id = %s", [row]))
    altered = run()
    assert altered.returncode == 1
    assert f"row {row} (sealed at position 3) was altered" in altered.stderr

    last = digests[-1]
    as_owner(
        ("DELETE FROM audit_auditseal WHERE digest_id = %s", [last.id]),
        ("DELETE FROM audit_auditdigest WHERE id = %s", [last.id]),
    )
    cut = run()
    assert cut.returncode == 1
    assert f"digest {last.id} at position 10: 1 witnessed digest(s) are missing" in cut.stderr

    as_owner(("TRUNCATE audit_auditseal, audit_auditdigest, audit_auditevent", []))
    emptied = run()
    assert emptied.returncode == 1
    assert "the log was emptied" in emptied.stderr


def test_an_unreadable_witness_is_a_command_error(settings: Any, tmp_path: Path) -> None:
    write_and_seal(1)
    assert "is not a readable file" in refused("--witness", str(tmp_path / "absent.log"))
    Path(settings.AUDIT_WITNESS).write_text("not json\n")
    assert "line 1 is not a witness head" in refused()


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('"digest": 1e400', "'digest' is not a whole number"),
        ('"digest": Infinity', "Infinity is not a number"),
        ('"digest": true', "'digest' is not a whole number"),
        ('"digest": 2.0', "'digest' is not a whole number"),
        ('"digest": -3', "'digest' is not a whole number"),
        ('"digest": 99999999999999999999999', "'digest' is not a whole number"),
        ('"first_position": 1e400', "'first_position' is not a whole number"),
        ('"hash": 12', "'hash' is not 64 hexadecimal digits"),
        ('"hash": "zz"', "'hash' is not 64 hexadecimal digits"),
        ('"first_position": 9', "'first_position' is after 'last_position'"),
    ],
)
def test_a_bad_witness_line_is_named(settings: Any, line: str, reason: str) -> None:
    """A witness line with a value no head can hold (``"digest": 1e400`` once raised
    OverflowError out of the command): the command names the file's line and what is wrong."""
    write_and_seal(1)
    path = Path(settings.AUDIT_WITNESS)
    good = path.read_text().splitlines()
    assert len(good) == 1
    head = json.loads(good[0])
    key = line.split(":")[0].strip('"')
    bad = ", ".join(line if k == key else f'"{k}": {json.dumps(v)}' for k, v in head.items())
    path.write_text(good[0] + "\n" + "{" + bad + "}\n")
    text = refused()
    assert f"{path}: line 2 is not a witness head: " in text
    assert reason in text


@pytest.mark.parametrize(
    "raw",
    [b"[" * 100_000 + b"\n", b'{"database": "\xff"}\n', b"[1, 2]\n", b"{}\n", b"\x00\n"],
    ids=["deep", "not-utf-8", "a-list", "no-database", "nul"],
)
def test_a_witness_line_that_is_no_head_is_named(settings: Any, raw: bytes) -> None:
    """Nesting past the recursion limit, a byte that is not UTF-8, JSON that is no object: each a
    line named, never a traceback (the real command's exit and output)."""
    write_and_seal(1)
    path = Path(settings.AUDIT_WITNESS)
    path.write_bytes(path.read_bytes() + raw)
    assert "line 2 is not a witness head" in refused()
    env = {
        **os.environ,
        "DATABASE_URL": database_url("default"),
        "KEYS_DATABASE_URL": database_url("keys"),
        "AUDIT_WITNESS": settings.AUDIT_WITNESS,
    }
    command = [sys.executable, str(MANAGE), "verify_audit", "--no-progress"]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "line 2 is not a witness head" in run.stderr
    assert "Traceback" not in run.stderr


class Collector:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                collector.lines.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/witness"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.server.shutdown()
    c.server.server_close()


def test_heads_go_to_an_http_collector(settings: Any, collector: Collector, tmp_path: Path) -> None:
    settings.AUDIT_WITNESS = collector.url
    write_and_seal(2)
    write_and_seal(2)
    digests = list(AuditDigest.objects.order_by("id"))
    assert [(x["digest"], x["hash"]) for x in collector.lines] == [(d.id, d.hash) for d in digests]
    copy = tmp_path / "fetched.log"
    copy.write_text("".join(json.dumps(x) + "\n" for x in collector.lines))
    assert "2 digests as witnessed" in verify("--witness", str(copy))
    as_owner(
        ("DELETE FROM audit_auditseal WHERE digest_id = %s", [digests[1].id]),
        ("DELETE FROM audit_auditdigest WHERE id = %s", [digests[1].id]),
    )
    assert "1 witnessed digest(s) are missing" in refused("--witness", str(copy))
