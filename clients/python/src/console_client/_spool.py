"""The on-disk spool: exchanges waiting for a console that is unreachable, oldest first.

One file per exchange, named by a sequence number (so a directory listing is the order), written
to a temporary name and renamed (a crash leaves no half file). A file holds one JSON header line
(``key``, ``conversation``, ``attempts``) and then the exchange's body bytes, exactly as they
will be posted. The spool is bounded in files and bytes: making room drops the oldest exchanges,
each one counted and logged.

Several processes may spool under one directory (the workers of one gunicorn): each takes the
first ``slot-N`` sub-directory it can lock (``flock``), so no two deliver the same files, and a
process started later on the same slot delivers what an earlier one left.
"""

from __future__ import annotations

import json
import logging
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # Windows: one process per spool directory
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("console_client")

SUFFIX = ".exchange"
MAX_SLOTS = 64


@dataclass
class Entry:
    """An exchange ready to post: its body, its Idempotency-Key, and failed answers so far."""

    key: str
    conversation: str
    body: bytes
    attempts: int = 0
    path: Path | None = None  # where it is spooled, if it is


class SpoolError(OSError):
    pass


class Spool:
    def __init__(
        self,
        base: Path,
        *,
        max_files: int,
        max_bytes: int,
        dropped: Callable[[Entry, str], None],
    ) -> None:
        self.base = base
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._dropped = dropped
        self._lock_file: IO[Any] | None = None
        self.dir = self._take_slot()
        self._files: deque[tuple[Path, int]] = deque()
        self._bytes = 0
        for path in sorted(self.dir.glob("*" + SUFFIX)):
            size = path.stat().st_size
            self._files.append((path, size))
            self._bytes += size
        self._next = int(self._files[-1][0].name.split("-", 1)[0]) + 1 if self._files else 0
        for stale in self.dir.glob("*.tmp"):
            stale.unlink(missing_ok=True)

    def _take_slot(self) -> Path:
        self.base.mkdir(parents=True, exist_ok=True)
        if fcntl is None:
            slot = self.base / "slot-0"
            slot.mkdir(exist_ok=True)
            return slot
        for n in range(MAX_SLOTS):
            slot = self.base / f"slot-{n}"
            slot.mkdir(exist_ok=True)
            handle = (slot / ".lock").open("a")
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            self._lock_file = handle
            return slot
        raise SpoolError(f"all {MAX_SLOTS} spool slots under {self.base} are taken")

    def __len__(self) -> int:
        return len(self._files)

    @property
    def size(self) -> int:
        return self._bytes

    def append(self, entry: Entry) -> None:
        """Write ``entry`` at the tail, dropping the oldest entries to stay within bounds."""
        header = json.dumps(
            {"key": entry.key, "conversation": entry.conversation, "attempts": entry.attempts}
        ).encode("utf-8")
        data = header + b"\n" + entry.body
        if len(data) > self.max_bytes:
            self._dropped(entry, f"it is larger than the spool ({self.max_bytes} bytes)")
            return
        while self._files and (
            len(self._files) + 1 > self.max_files or self._bytes + len(data) > self.max_bytes
        ):
            oldest = self.head()
            if oldest is None:
                break
            self.remove(oldest)
            self._dropped(
                oldest,
                f"the spool is full ({self.max_files} files, {self.max_bytes} bytes): "
                "the oldest exchange makes room",
            )
        path = self.dir / f"{self._next:020d}-{entry.key}{SUFFIX}"
        self._next += 1
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as out:
            out.write(data)
        os.replace(tmp, path)
        entry.path = path
        self._files.append((path, len(data)))
        self._bytes += len(data)

    def head(self) -> Entry | None:
        """The oldest entry, None when empty. An unreadable file is dropped (and counted)."""
        while self._files:
            path, _ = self._files[0]
            try:
                data = path.read_bytes()
                header_line, _, body = data.partition(b"\n")
                header = json.loads(header_line)
                return Entry(
                    key=str(header["key"]),
                    conversation=str(header.get("conversation", "")),
                    body=body,
                    attempts=int(header.get("attempts", 0)),
                    path=path,
                )
            except (OSError, ValueError, KeyError, TypeError) as exc:
                self._forget(path)
                path.unlink(missing_ok=True)
                log.error("console_client: dropped an unreadable spool file %s: %s", path, exc)
                self._dropped(Entry(key=path.name, conversation="", body=b""), "unreadable")
        return None

    def update(self, entry: Entry) -> None:
        """Rewrite a spooled entry's header (its attempts), in place of its file."""
        assert entry.path is not None
        header = json.dumps(
            {"key": entry.key, "conversation": entry.conversation, "attempts": entry.attempts}
        ).encode("utf-8")
        tmp = entry.path.with_suffix(".tmp")
        with tmp.open("wb") as out:
            out.write(header + b"\n" + entry.body)
        os.replace(tmp, entry.path)

    def remove(self, entry: Entry) -> None:
        if entry.path is None:
            return
        self._forget(entry.path)
        entry.path.unlink(missing_ok=True)
        entry.path = None

    def _forget(self, path: Path) -> None:
        for i, (p, size) in enumerate(self._files):
            if p == path:
                del self._files[i]
                self._bytes -= size
                return

    def close(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None
