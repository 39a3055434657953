"""``manage.py seal_audit``: seal the committed audit rows now (what the ``audit-seal`` beat entry
does every few seconds; audit/sealer.py)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.sealer import BATCH_SIZE, seal_pending


class Command(BaseCommand):
    help = "Seal the audit rows committed since the last seal, and sign the batches."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch-size", type=int, default=BATCH_SIZE, help="rows per signed batch"
        )

    def handle(self, *args: Any, batch_size: int, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        report = seal_pending(batch_size=batch_size)
        if report.busy:
            self.stdout.write(
                f"sealed {report.rows} rows in {report.batches} batches; another sealer is "
                "running and will seal the rest"
            )
            return
        self.stdout.write(f"sealed {report.rows} rows in {report.batches} batches")
