"""The verifier: read the chain, not the clock.

One pass over the seals in position order (joined to their rows) and the digests in order, in
constant memory (server-side cursors, read in chunks, in one snapshot). What each check catches:

- a row whose values no longer hash to its seal's ``event_hash``: **altered**;
- a seal whose row is gone: **removed** (a sealed row deleted behind the trigger's back);
- a seal whose ``prev_hash`` is not the hash of the seal before it, or a gap in the positions:
  seals **removed, inserted or reordered** (e.g. two rows swapped in the order);
- a seal whose own hash does not match its values: the seal was **altered**;
- a digest whose hash or HMAC signature does not match, whose ``prev_hash`` is not the previous
  digest's hash, whose positions do not follow the previous digest's, or whose
  ``last_seal_hash`` is not the hash of the seal it ends on: a **broken digest** (forged,
  removed or rewritten); seals after the last digest are unsigned;
- a digest head the witness outside the database holds (witness.py) that the database lacks or
  holds differently, a chain that ends before the last witnessed head (its tail was cut), or an
  empty log while the witness names heads (it was emptied): **witness**;
- a committed row left unsealed for longer than ``AUDIT_UNSEALED_GRACE_INTERVALS`` sealer
  intervals (the sealer is not running, or a transaction has been open that long), and an
  unsealed row behind the frontier (it was skipped, or inserted with a forged ``xid``).

Every problem found is reported (up to ``max_problems``), each naming the row or digest.
Rewriting the whole chain with recomputed hashes needs the digest key; without it, the first
rewritten digest's signature fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connections, router, transaction

from .hashing import (
    DIGEST_FIELDS,
    EVENT_FIELDS,
    GENESIS,
    digest_hash,
    digest_signature_valid,
    event_hash,
    seal_hash,
)
from .models import DIGEST_TABLE, SEAL_TABLE, TABLE, AuditEvent, AuditSeal
from .witness import WitnessCheck, witness_heads

__all__ = ["ChainReport", "Problem", "verify_chain"]

_SEALS_SQL = (
    "SELECT s.position, s.event_id, s.event_hash, s.prev_hash, s.hash, s.digest_id, "  # noqa: S608
    + ", ".join(f"e.{name}" for name in EVENT_FIELDS)
    + f" FROM {SEAL_TABLE} s LEFT JOIN {TABLE} e ON e.id = s.event_id ORDER BY s.position"
)
_DIGESTS_SQL = (
    f"SELECT {', '.join(DIGEST_FIELDS)}, hash, signature "  # noqa: S608
    f"FROM {DIGEST_TABLE} ORDER BY id"
)
# Rows without a seal: behind the frontier (skipped, or forged), and after it (waiting).
_NO_SEAL = f"NOT EXISTS (SELECT 1 FROM {SEAL_TABLE} s WHERE s.event_id = e.id)"  # noqa: S608
_BEHIND_SQL = (
    f"SELECT e.id FROM {TABLE} e WHERE (e.xid, e.id) <= (%s, %s) AND {_NO_SEAL} "  # noqa: S608
    "ORDER BY e.id LIMIT %s"
)
_WAITING_SQL = (
    "SELECT count(*), count(*) FILTER (WHERE e.at < %s), "  # noqa: S608
    "min(e.id) FILTER (WHERE e.at < %s), min(e.at) "
    f"FROM {TABLE} e WHERE (e.xid, e.id) > (%s, %s) AND {_NO_SEAL}"
)


@dataclass(frozen=True)
class Problem:
    # altered | removed | reordered | seal_altered | digest | unsigned | unsealed | witness
    kind: str
    text: str
    event_id: int | None = None
    position: int | None = None
    digest_id: int | None = None


@dataclass
class ChainReport:
    verified: int = 0  # sealed rows whose values and links check out
    digests: int = 0  # digests whose hash, links and signature check out
    head_position: int = 0
    head_hash: str = GENESIS
    unsealed: int = 0  # committed rows not yet sealed (within the grace period: normal)
    witnessed: int = 0  # digests found as the witness holds them
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


class _Stop(Exception):
    pass


def verify_chain(
    *,
    chunk_size: int = 2000,
    progress: Callable[[int], object] | None = None,
    max_problems: int = 20,
    now: datetime | None = None,
    witness: str | None = None,
) -> ChainReport:
    """Check seals, rows and digests, and the digests against the witness (``witness``: a file
    of heads; default: ``AUDIT_WITNESS`` when it is a file); ``progress(n)`` is called with the
    seals read since the last call."""
    alias = router.db_for_read(AuditEvent) or "default"
    report = ChainReport()
    database = connections[alias].settings_dict["NAME"]
    # In a transaction, server-side cursors stream from one snapshot; outside one (autocommit)
    # Django declares them WITH HOLD, which makes the server materialise the whole result first.
    with transaction.atomic(using=alias):
        walk = _Walk(
            report, max_problems, WitnessCheck(witness_heads(database=database, source=witness))
        )
        try:
            walk.seals(_stream(alias, _SEALS_SQL, chunk_size, "verify_seals"), progress)
            walk.digests(_stream(alias, _DIGESTS_SQL, chunk_size, "verify_digests"))
            report.witnessed = walk.witness.witnessed
            walk.unsealed(alias, now)
        except _Stop:
            pass
    return report


def _stream(alias: str, sql: str, chunk_size: int, name: str) -> Iterator[tuple[Any, ...]]:
    connection = connections[alias]
    connection.ensure_connection()
    with connection.connection.cursor(name=name) as cursor:
        cursor.itersize = chunk_size
        cursor.execute(sql)
        yield from cursor


class _Walk:
    def __init__(self, report: ChainReport, max_problems: int, witness: WitnessCheck) -> None:
        self.report = report
        self.witness = witness
        self.max_problems = max_problems
        self.frontier: tuple[int, int] = (-1, -1)

    def problem(self, kind: str, text: str, **where: int | None) -> None:
        self.report.problems.append(Problem(kind, text, **where))
        if len(self.report.problems) >= self.max_problems:
            raise _Stop

    def seals(
        self, rows: Iterator[tuple[Any, ...]], progress: Callable[[int], object] | None
    ) -> None:
        expected_prev, expected_position, pending = GENESIS, 1, 0
        for values in rows:
            position, event_id, stored_event_hash, prev, stored, _digest = values[:6]
            event = dict(zip(EVENT_FIELDS, values[6:], strict=True))
            where = {"position": position, "event_id": event_id}
            if position != expected_position:
                self.problem(
                    "reordered",
                    f"positions {expected_position}..{position - 1} are missing before row "
                    f"{event_id}: seals were removed",
                    **where,
                )
            if prev != expected_prev:
                self.problem(
                    "reordered",
                    f"broken link at position {position} (row {event_id}): its prev_hash is not "
                    "the hash of the seal before it; seals were removed, inserted or reordered",
                    **where,
                )
            if seal_hash(position=position, event_hash=stored_event_hash, prev_hash=prev) != stored:
                self.problem(
                    "seal_altered", f"the seal at position {position} was altered", **where
                )
            ok = True
            if event["id"] is None:
                ok = False
                self.problem(
                    "removed",
                    f"row {event_id} (sealed at position {position}) was removed",
                    **where,
                )
            elif event_hash(event) != stored_event_hash:
                ok = False
                self.problem(
                    "altered",
                    f"row {event_id} (sealed at position {position}) was altered: its values no "
                    "longer hash to its seal",
                    **where,
                )
            if ok:
                self.report.verified += 1
                self.frontier = max(self.frontier, (event["xid"], event["id"]))
            self.report.head_position, self.report.head_hash = position, stored
            expected_prev, expected_position = stored, position + 1
            pending += 1
            if progress is not None and pending >= 2000:
                progress(pending)
                pending = 0
        if progress is not None and pending:
            progress(pending)

    def digests(self, rows: Iterator[tuple[Any, ...]]) -> None:
        # The seal a digest ends on is looked up by position (the primary key), so that the seal
        # walk above keeps constant memory.
        expected_prev, expected_first = GENESIS, 1
        for values in rows:
            digest = dict(zip(DIGEST_FIELDS, values[: len(DIGEST_FIELDS)], strict=True))
            stored, signature = values[len(DIGEST_FIELDS) :]
            where = {"digest_id": digest["id"]}
            name = f"digest {digest['id']} (positions {digest['first_position']}.."
            name += f"{digest['last_position']})"
            if digest["prev_hash"] != expected_prev:
                self.problem(
                    "digest",
                    f"{name}: its prev_hash is not the previous digest's hash; a digest was "
                    "removed, inserted or rewritten",
                    **where,
                )
            if digest["first_position"] != expected_first:
                self.problem(
                    "digest",
                    f"{name}: does not follow the previous digest (expected position "
                    f"{expected_first})",
                    **where,
                )
            if digest["last_position"] - digest["first_position"] + 1 != digest["rows"]:
                self.problem("digest", f"{name}: its row count does not match", **where)
            if digest_hash(digest) != stored:
                self.problem("digest", f"{name}: its hash does not match its values", **where)
            elif not digest_signature_valid(stored, signature):
                self.problem("digest", f"{name}: its signature is not valid (forged)", **where)
            else:
                at_end = (
                    AuditSeal.objects.filter(position=digest["last_position"])
                    .values_list("hash", flat=True)
                    .first()
                )
                if at_end != digest["last_seal_hash"]:
                    self.problem(
                        "digest",
                        f"{name}: the seal it ends on is not the one it signed",
                        **where,
                    )
                else:
                    self.report.digests += 1
            for text in self.witness.see(digest["id"], stored, digest["last_position"]):
                self.problem("witness", text, **where)
            expected_prev, expected_first = stored, digest["last_position"] + 1
        for text in self.witness.finish():
            self.problem("witness", text)
        if self.report.head_position >= expected_first:
            self.problem(
                "unsigned",
                f"positions {expected_first}..{self.report.head_position} are not covered by a "
                "signed digest",
                position=expected_first,
            )

    def unsealed(self, alias: str, now: datetime | None) -> None:
        grace = timedelta(
            seconds=settings.AUDIT_SEAL_INTERVAL_SECONDS * settings.AUDIT_UNSEALED_GRACE_INTERVALS
        )
        with connections[alias].cursor() as cursor:
            cursor.execute(_BEHIND_SQL, [*self.frontier, self.max_problems])
            for (event_id,) in cursor.fetchall():
                self.report.unsealed += 1
                self.problem(
                    "unsealed",
                    f"row {event_id} is not sealed though later rows are: it was skipped, "
                    "or inserted behind the sealer's back",
                    event_id=event_id,
                )
            cursor.execute("SELECT clock_timestamp()")
            cutoff = (now or cursor.fetchone()[0]) - grace
            cursor.execute(_WAITING_SQL, [cutoff, cutoff, *self.frontier])
            waiting, late, oldest_id, oldest_at = cursor.fetchone()
        self.report.unsealed += waiting
        if late:
            self.problem(
                "unsealed",
                f"{late} row(s) unsealed for longer than {int(grace.total_seconds())} s (the "
                f"oldest: row {oldest_id}, written {oldest_at.isoformat()}); is the sealer "
                "running, or has a transaction been open that long?",
                event_id=oldest_id,
            )
