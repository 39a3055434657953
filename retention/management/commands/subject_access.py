"""``manage.py subject_access CUSTOMER [--conversation ID] --format json|md --purpose TEXT
[--package DIR] [--include-reasoning]``: the subject access report of a customer (or of one of
their conversations), printed; with ``--package``, the package the data subject receives written
into DIR (docs/subject-access.md). Audited, with the purpose, the system as the actor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from retention.access import (
    FORMATS,
    RENDERERS,
    AccessRefused,
    subject_access_read,
    write_package,
)


class Command(BaseCommand):
    help = "Print what the console holds about a customer; optionally write their package."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("customer", help="the chat backend's customer id")
        parser.add_argument("--conversation", default=None, help="one conversation (its id)")
        parser.add_argument("--format", choices=FORMATS, default="md", dest="fmt")
        parser.add_argument("--purpose", default="", help="why the report is asked (required)")
        parser.add_argument("--package", default=None, help="write the package into this directory")
        parser.add_argument(
            "--include-reasoning",
            action="store_true",
            help="put the model's reasoning text into the package (recorded with the purpose)",
        )

    def handle(
        self,
        *args: Any,
        customer: str,
        conversation: str | None,
        fmt: str,
        purpose: str,
        package: str | None,
        include_reasoning: bool,
        **options: Any,
    ) -> None:
        if include_reasoning and not package:
            raise CommandError("--include-reasoning needs --package (reasoning goes only there)")
        directory = None
        if package is not None:
            directory = Path(package)
            if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
                raise CommandError(f"--package: {package} exists and is not an empty directory")
        try:
            report = subject_access_read(
                user=None,
                customer=customer,
                conversation=conversation,
                purpose=purpose,
                fmt=fmt,
                package=directory is not None,
                include_reasoning=include_reasoning,
            )
        except AccessRefused as exc:
            raise CommandError(
                f"--{exc.field}: {exc.detail}" if exc.field != "customer" else exc.detail
            ) from None
        if directory is not None:
            try:
                written = write_package(report, directory)
            except OSError as exc:
                raise CommandError(f"--package: {exc}") from None
            self.stderr.write(f"package: {len(written)} files in {directory}")
        self.stdout.write(RENDERERS[fmt](report), ending="")
