"""The witness: the audit chain's heads, written outside its database.

Seals and digests prove that the rows in the database have not been altered, reordered or
removed *in the middle*; someone who owns the database can still cut the end of the log (the last
rows with their seals and digests) or empty it, and what is left verifies. So each digest the
sealer commits is also appended, as one JSON line, to ``AUDIT_WITNESS``:

- a file path (the default, ``var/audit-witness.log``): opened in append mode, one ``write`` and
  an ``fsync`` per head. Ship it off the host (docs/operations.md: a log shipper, or a host whose
  file system makes it append-only) so the database's owner cannot rewrite both;
- an ``http(s)://`` URL: each head is POSTed as JSON (an off-host collector that only appends);
  ``verify_audit --witness FILE`` then reads a copy of what it collected;
- empty: no witness (the log is then only as safe as its database).

A line names the database it belongs to (its name), the digest's id, positions and hash. Several
databases (development, tests) may share one file: each reads only its own lines.

``verify_audit`` walks the database's digests beside the witness's heads (both in digest order)
and fails, naming what is missing, when a witnessed digest is absent or differs, when the chain
ends before the last witnessed head (its tail was cut), or when it is empty while the witness
names heads (it was emptied). A head that could not be written (disk full, sink down) is logged;
sealing goes on, and the next digest's head witnesses the chain up to it.
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings

__all__ = ["Head", "WitnessCheck", "witness_append", "witness_heads"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class Head:
    digest: int
    first_position: int
    last_position: int
    hash: str


def _is_url(destination: str) -> bool:
    return destination.startswith(("http://", "https://"))


def witness_append(*, database: str, digest: dict[str, Any], own_hash: str) -> bool:
    """Append one digest head to ``AUDIT_WITNESS`` (after its transaction committed); False,
    logged, when it could not be written."""
    destination = settings.AUDIT_WITNESS
    if not destination:
        return False
    line = {
        "database": database,
        "digest": digest["id"],
        "first_position": digest["first_position"],
        "last_position": digest["last_position"],
        "hash": own_hash,
        "sealed_at": digest["sealed_at"].isoformat(),
    }
    text = json.dumps(line, sort_keys=True, separators=(",", ":"))
    try:
        if _is_url(destination):
            with httpx.Client(
                timeout=settings.AUDIT_WITNESS_TIMEOUT_SECONDS, follow_redirects=False
            ) as client:
                client.post(
                    destination, content=text, headers={"Content-Type": "application/json"}
                ).raise_for_status()
        else:
            path = Path(destination)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            try:
                os.write(fd, (text + "\n").encode())
                os.fsync(fd)
            finally:
                os.close(fd)
    except (OSError, httpx.HTTPError) as exc:
        log.warning("audit witness: digest %s not witnessed (%s)", digest["id"], exc)
        return False
    return True


# Heads are appended after their batch commits, outside the sealer's lock, so two sealers (a
# doubled beat) may append theirs in the other order: lines are put back in digest order within
# this many.
REORDER_WINDOW = 64


def witness_heads(*, database: str, source: str | None = None) -> Iterator[Head]:
    """The heads a witness file holds for ``database``, in digest order. ``source``: a file
    (default: ``AUDIT_WITNESS`` when it is one). Nothing when there is no file to read."""
    buffer: list[tuple[int, Head]] = []
    for head in _lines(database, source):
        heapq.heappush(buffer, (head.digest, head))
        if len(buffer) > REORDER_WINDOW:
            yield heapq.heappop(buffer)[1]
    while buffer:
        yield heapq.heappop(buffer)[1]


_HEX64 = re.compile(r"[0-9a-f]{64}")
# A position or a digest id is a bigint of the audit tables.
_BIGINT_MAX = 2**63 - 1


def _whole(line: dict[str, Any], key: str, least: int) -> int:
    value = line.get(key)
    # bool is an int to Python, and 1e400 or 1.0 is a float: neither is a witness's number.
    if type(value) is not int or not least <= value <= _BIGINT_MAX:
        raise ValueError(f"{key!r} is not a whole number from {least} to {_BIGINT_MAX}")
    return value


def parse_head(raw: str) -> tuple[str, Head]:
    """One witness line: the database it names and its head. ``ValueError`` saying what is wrong
    with it (never another exception, whatever the line holds)."""
    try:
        line = json.loads(raw, parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError("it is nested too deep to be a witness head") from None
    except ValueError as exc:  # JSONDecodeError, and NaN or Infinity refused
        raise ValueError(f"it is not JSON ({exc})") from None
    if not isinstance(line, dict):
        raise ValueError("it is not a JSON object")
    database = line.get("database")
    if not isinstance(database, str) or not database:
        raise ValueError("'database' is not a name")
    head = Head(
        digest=_whole(line, "digest", 1),
        first_position=_whole(line, "first_position", 0),
        last_position=_whole(line, "last_position", 0),
        hash=line["hash"] if isinstance(line.get("hash"), str) else "",
    )
    if not _HEX64.fullmatch(head.hash):
        raise ValueError("'hash' is not 64 hexadecimal digits")
    if head.first_position > head.last_position:
        raise ValueError("'first_position' is after 'last_position'")
    return database, head


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _lines(database: str, source: str | None) -> Iterator[Head]:
    """Every line is checked, whichever database it names: a witness that cannot be read whole
    is named, line by line, never half-read."""
    source = source if source is not None else settings.AUDIT_WITNESS
    if not source or _is_url(source):
        return
    path = Path(source)
    if not path.is_file():
        return
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, 1):
            try:
                text = raw.decode("utf-8")
                if not text.strip():
                    continue
                named, head = parse_head(text)
            except ValueError as exc:  # UnicodeDecodeError is one
                reason = "it is not UTF-8" if isinstance(exc, UnicodeDecodeError) else exc
                raise ValueError(f"{path}: line {number} is not a witness head: {reason}") from None
            if named == database:
                yield head


class WitnessCheck:
    """The database's digests, seen in order, against the witness's heads."""

    def __init__(self, heads: Iterator[Head]) -> None:
        self._heads = heads
        self._next: Head | None = next(heads, None)
        self.witnessed = 0
        self.last_seen: tuple[int, int] | None = None  # the chain's last digest and position

    def see(self, digest_id: int, digest_hash: str, last_position: int) -> list[str]:
        """One database digest; the problems it shows (witnessed heads skipped, or a differing
        one)."""
        problems = []
        while self._next is not None and self._next.digest < digest_id:
            head = self._next
            problems.append(
                f"witnessed digest {head.digest} (positions {head.first_position}.."
                f"{head.last_position}, hash {head.hash}) is missing from the database"
            )
            self._next = next(self._heads, None)
        if self._next is not None and self._next.digest == digest_id:
            head = self._next
            if (head.hash, head.last_position) != (digest_hash, last_position):
                problems.append(
                    f"digest {digest_id} differs from its witnessed head (witness: position "
                    f"{head.last_position}, hash {head.hash}; database: position "
                    f"{last_position}, hash {digest_hash}): the chain was rewritten"
                )
            self.witnessed += 1
            self._next = next(self._heads, None)
        self.last_seen = (digest_id, last_position)
        return problems

    def finish(self) -> list[str]:
        """The witnessed heads after the database's last digest: the tail was cut."""
        rest = []
        while self._next is not None:
            rest.append(self._next)
            self._next = next(self._heads, None)
        if not rest:
            return []
        last = rest[-1]
        if self.last_seen is None:
            return [
                f"the audit log is empty but its witness names {len(rest)} digest head(s), the "
                f"last digest {last.digest} at position {last.last_position}: the log was "
                "emptied"
            ]
        digest_id, position = self.last_seen
        return [
            f"the audit chain ends at digest {digest_id} (position {position}) before the last "
            f"witnessed head, digest {last.digest} at position {last.last_position}: "
            f"{len(rest)} witnessed digest(s) are missing (the log's tail was cut)"
        ]
