"""One install at a time: tests that install what they need on first use (the AI SDK with npm,
old SDK releases with pip) run in several pytest-xdist workers at once, and two installers in one
folder break each other (npm's ENOTEMPTY). ``exclusive(path)`` holds an advisory file lock, so
the first worker installs and the others wait, then find the install done."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with lock_file.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
