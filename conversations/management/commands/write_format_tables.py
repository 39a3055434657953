"""``manage.py write_format_tables [--check]``: the tables other languages read, written from the
format registry (``conversations/formats/tables.py``): the browser filter's format table and the
two clients' capture tables. Run it after adding or changing a format; ``--check`` writes
nothing and fails naming each file that is not what the registry gives (the test suite runs it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from conversations.formats.tables import TABLES


class Command(BaseCommand):
    help = (
        "Write the browser filter's format table and the clients' capture tables from the "
        "format registry (--check: only compare, and fail on a difference)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check",
            action="store_true",
            help="write nothing; exit non-zero naming every table that differs",
        )

    def handle(self, *args: Any, check: bool = False, **options: Any) -> None:
        root = Path(settings.BASE_DIR)
        stale = []
        for relative, write in TABLES.items():
            path = root / relative
            text = write().encode("utf-8")
            current = path.read_bytes() if path.is_file() else None
            if current == text:
                continue
            stale.append(relative)
            if not check:
                path.write_bytes(text)
                self.stdout.write(f"wrote {relative}")
        if check and stale:
            raise CommandError(
                "not what the format registry gives (run manage.py write_format_tables): "
                + ", ".join(stale)
            )
        if not stale:
            self.stdout.write("every table is what the format registry gives")
