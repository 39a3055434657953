"""``manage.py verify_audit``: check the audit log's hash chain (audit/verify.py).

Prints the number of rows verified and the head (last id and hash) and exits 0; or names the
first broken row and what is wrong with it, and exits 1.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from audit.models import AuditEvent
from audit.verify import verify_chain

# Below this many rows the walk takes a moment and a progress bar is noise.
PROGRESS_MIN_ROWS = 10_000


class Command(BaseCommand):
    help = "Verify the audit log's hash chain; exits non-zero naming the first broken row."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument(
            "--chunk-size", type=int, default=2000, help="rows fetched per round trip"
        )

    def handle(self, *args: Any, no_progress: bool, chunk_size: int, **options: Any) -> None:
        if chunk_size < 1:
            raise CommandError("--chunk-size must be at least 1")
        total = 0 if no_progress else AuditEvent.objects.count()
        bar = tqdm(
            total=total,
            unit="rows",
            desc="verify_audit",
            disable=no_progress or total < PROGRESS_MIN_ROWS,
            file=sys.stderr,
        )
        try:
            report = verify_chain(chunk_size=chunk_size, progress=bar.update)
        finally:
            bar.close()
        if not report.ok:
            raise CommandError(
                f"audit chain broken at row {report.broken_id}: {report.problem} "
                f"({report.verified} rows before it verified)"
            )
        head = f"; head: row {report.head_id}, hash {report.head_hash}" if report.verified else ""
        self.stdout.write(f"verified {report.verified} audit rows{head}")
