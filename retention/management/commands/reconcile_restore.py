"""``manage.py reconcile_restore [--dry-run]``: after restoring the main and keys databases from
backups, erase again what was erased after the main backup was taken (docs/operations.md,
"Restoring"). Run it before the console takes traffic again."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from retention.backups import restore_reconcile


class Command(BaseCommand):
    help = (
        "After a restore: erase the conversations whose data key the restored keys backup no "
        "longer holds (erased after the main backup was taken)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="count, erase nothing")

    def handle(self, *args: Any, dry_run: bool, **options: Any) -> None:
        keyless, rows = restore_reconcile(dry_run=dry_run)
        if dry_run:
            self.stdout.write(f"would erase {len(keyless)} conversation(s) without a data key")
        else:
            self.stdout.write(
                f"erased {len(keyless)} conversation(s) without a data key ({rows} rows)"
            )
