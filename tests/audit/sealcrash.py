"""Imported by a Celery worker of the sealer's crash test (``celery worker --include``): the
sealer pauses in the middle of a batch (its seals inserted, its digest not yet, nothing
committed), writes ``sealing`` to the file ``CRASH_MARKER`` and sleeps there, for the test to
SIGKILL the worker at exactly that point."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from celery.signals import worker_ready


@worker_ready.connect
def _install(**_: Any) -> None:
    from audit import sealer

    original = sealer.digest_signature

    def pause_then_sign(hash_: str, key: bytes | None = None) -> str:
        Path(os.environ["CRASH_MARKER"]).write_text("sealing")
        while True:  # until SIGKILL
            time.sleep(60)
        return original(hash_, key)  # never reached

    sealer.digest_signature = pause_then_sign  # type: ignore[assignment]
