"""record() takes no lock shared by writers; the sealer chains committed rows exactly once, in
the order it records, never skipping a row whose transaction commits late.

Every test here is transactional: a row is sealed only once the transaction that wrote it has
finished, so the test's own transaction (the ``db`` fixture's) would hold every row back.
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, connections, transaction

import audit
from audit.models import AuditDigest, AuditEvent
from audit.sealer import SEAL_LOCK_KEY, seal_pending
from audit.verify import verify_chain

from .conftest import GENESIS, expected_event_hash, expected_seal_hash, rows, seals
from .sessions import Session

pytestmark = pytest.mark.django_db(transaction=True, databases="__all__")


@pytest.fixture
def sessions() -> Iterator[list[Session]]:
    opened: list[Session] = []
    yield opened
    for session in opened:
        session.close()


def open_session(sessions: list[Session], name: str, *, using: str = "default") -> Session:
    session = Session(name, using=using)
    sessions.append(session)
    return session


def record_in(session: Session, n: int = 0) -> AuditEvent:
    return session.run(
        lambda: audit.record("conversation.listed", filters=[session.name], results=n, page="list")
    )


def test_a_transaction_held_open_after_record_holds_up_no_other_writer(
    sessions: list[Session],
) -> None:
    a, b = open_session(sessions, "a"), open_session(sessions, "b")
    a.begin()
    held = record_in(a)
    # b must not wait on anything a holds: give up on any lock after a second (an error, not a
    # hang), and finish its record() and commit while a's transaction is still open.
    b.sql("SET lock_timeout = '1s'")
    b.begin()
    written = record_in(b)
    b.commit()
    assert a.open
    assert a.sql(
        "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'"
    ) == [(0,)]
    committed = list(AuditEvent.objects.values_list("id", flat=True))
    assert committed == [written.id]  # b's row committed; a's is still in flight
    a.commit()
    assert sorted(AuditEvent.objects.values_list("id", flat=True)) == [held.id, written.id]


def test_a_row_committed_after_a_later_id_is_sealed_once_in_the_recorded_order(
    sessions: list[Session],
) -> None:
    a, b = open_session(sessions, "a"), open_session(sessions, "b")
    a.begin()
    early = record_in(a)  # the lower id, in a transaction still running
    b.begin()
    late = record_in(b)
    b.commit()
    assert early.id < late.id

    # a is still running: b's row is held back with it, or sealing it first would let a's row
    # arrive behind the frontier.
    assert seal_pending().rows == 0
    a.commit()
    assert seal_pending().rows == 2
    assert seal_pending().rows == 0  # nothing twice

    chain = seals()
    assert [s.event_id for s in chain] == [early.id, late.id]
    assert [s.position for s in chain] == [1, 2]
    assert chain[0].prev_hash == GENESIS and chain[1].prev_hash == chain[0].hash
    by_id = {e.id: e for e in rows()}
    for seal in chain:
        assert seal.event_hash == expected_event_hash(by_id[seal.event_id])
        assert seal.hash == expected_seal_hash(seal.position, seal.event_hash, seal.prev_hash)
    assert verify_chain().ok


def test_the_order_is_the_transactions_not_the_ids(sessions: list[Session]) -> None:
    a, b = open_session(sessions, "a"), open_session(sessions, "b")
    a.begin()
    a.sql("SELECT pg_current_xact_id()")  # a's transaction id is taken first...
    b.begin()
    first_id = record_in(b)  # ...but b writes the first row
    b.commit()
    second_id = record_in(a)
    assert first_id.id < second_id.id and second_id.xid < first_id.xid
    assert seal_pending().rows == 0  # b's row waits for a, whose xid is older
    a.commit()
    assert seal_pending().rows == 2
    assert [s.event_id for s in seals()] == [second_id.id, first_id.id]  # (xid, id) order
    report = verify_chain()
    assert report.ok and report.verified == 2


def test_rolled_back_rows_are_never_sealed_and_hold_up_nothing(sessions: list[Session]) -> None:
    a = open_session(sessions, "a")
    a.begin()
    record_in(a)
    a.rollback()
    with transaction.atomic():
        kept = audit.record("retention.swept", conversations=1)
    assert seal_pending().rows == 1
    assert [s.event_id for s in seals()] == [kept.id]
    assert verify_chain().ok


def test_a_long_transaction_in_another_database_does_not_hold_up_sealing(
    sessions: list[Session],
) -> None:
    keys = open_session(sessions, "keys", using="keys")
    keys.begin()
    (xid,) = keys.sql("SELECT pg_current_xact_id()::text::bigint")[0]
    with transaction.atomic():
        event = audit.record("retention.swept", conversations=2)
    assert event.xid > xid
    # The server-wide horizon is held back by the keys database's transaction...
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
        assert cursor.fetchone()[0] <= xid
    # ...but the sealer only waits for this database's transactions.
    assert seal_pending().rows == 1
    keys.commit()


def test_a_second_sealer_finds_the_lock_taken_and_seals_nothing(sessions: list[Session]) -> None:
    with transaction.atomic():
        audit.record("retention.swept", conversations=3)
    other = open_session(sessions, "other-sealer")
    other.begin()
    other.sql("SELECT pg_advisory_xact_lock(%s)", [SEAL_LOCK_KEY])
    report = seal_pending()
    assert (report.busy, report.rows) == (True, 0)
    other.rollback()
    assert seal_pending().rows == 1


def test_batches_are_signed_digests_chained_to_each_other() -> None:
    for i in range(7):
        with transaction.atomic():
            audit.record("retention.swept", conversations=i)
    report = seal_pending(batch_size=3)
    assert (report.rows, report.batches) == (7, 3)
    digests = list(AuditDigest.objects.order_by("id"))
    assert [(d.first_position, d.last_position, d.rows) for d in digests] == [
        (1, 3, 3),
        (4, 6, 3),
        (7, 7, 1),
    ]
    assert digests[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(digests))
    chain = seals()
    assert [d.last_seal_hash for d in digests] == [chain[2].hash, chain[5].hash, chain[6].hash]
    assert {s.digest_id for s in chain[:3]} == {digests[0].id}
    assert verify_chain().digests == 3


def test_concurrent_writers_and_a_sealer_seal_every_row_exactly_once() -> None:
    writers, per_writer = 4, 25
    start = threading.Barrier(writers + 1)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        rng = random.Random(n)
        try:
            start.wait(timeout=10)
            for i in range(per_writer):
                with transaction.atomic():
                    audit.record("conversation.listed", filters=[f"w{n}"], results=i, page="list")
                    if rng.random() < 0.3:  # some transactions stay open a little longer
                        with connection.cursor() as cursor:
                            cursor.execute("SELECT pg_sleep(0.01)")
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    start.wait(timeout=10)
    sealed = 0
    while any(t.is_alive() for t in threads):
        sealed += seal_pending(batch_size=7).rows
    for t in threads:
        t.join(timeout=60)
    sealed += seal_pending().rows
    assert not errors, errors
    total = writers * per_writer
    assert sealed == total == AuditEvent.objects.count()
    chain = seals()
    assert [s.position for s in chain] == list(range(1, total + 1))
    assert len({s.event_id for s in chain}) == total
    report = verify_chain()
    assert report.ok and report.verified == total and report.unsealed == 0


def test_seal_audit_command(capsys: Any) -> None:
    from django.core.management import call_command

    with transaction.atomic():
        audit.record("retention.swept", conversations=3)
    call_command("seal_audit")
    assert "sealed 1 rows in 1 batches" in capsys.readouterr().out
