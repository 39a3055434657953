"""``manage.py redact``: standard input, redacted line by line, to try detectors and settings.

    echo "card 4111 1111 1111 1111, mail a@example.com" | manage.py redact --show-findings
    manage.py redact --detectors card,email < transcript.txt

Each line is redacted as it is read and written (and flushed) at once, so the command can be
used interactively; ``--show-findings`` writes ``line:start-end kind`` to standard error.
One thing spans lines: a PEM private key. From a ``-----BEGIN ... PRIVATE KEY-----`` line to
its ``-----END`` line, every line is withheld whole (the pipeline withholds the whole block when
it is given as one string; here it arrives a line at a time).
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from conversations.projection.redaction import (
    Finding,
    UnknownDetectorError,
    apply_findings,
    check_detectors,
    enabled_detectors,
    find,
    redact,
)

_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----")


class Command(BaseCommand):
    help = "Redact standard input line by line with the configured detectors (or --detectors)."
    stealth_options = ("stdin",)  # call_command("redact", stdin=io.StringIO(...))

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--detectors",
            help="comma-separated detector names, instead of settings.REDACTION_DETECTORS "
            "(an empty setting means all of them)",
        )
        parser.add_argument(
            "--show-findings",
            action="store_true",
            help="write each finding to standard error as line:start-end kind",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        names = self._detectors(options.get("detectors"))
        stdin: TextIO = options.get("stdin") or sys.stdin
        show = options.get("show_findings", False)
        in_key = False  # between a PEM private key's BEGIN and END lines
        for number, line in enumerate(stdin, start=1):
            text = line.rstrip("\r\n")
            ending = line[len(text) :]
            if in_key:
                in_key = _PEM_END.search(text) is None
                findings = [Finding("secret", 0, len(text), "PRIVATE KEY")] if text else []
                redacted = apply_findings(text, findings)
            else:
                findings = find(text, detectors=names) if show else []
                redacted = redact(text, detectors=names)
                in_key = (
                    "secret" in names
                    and _PEM_BEGIN.search(text) is not None
                    and _PEM_END.search(text) is None
                )
            for f in findings if show else ():
                self.stderr.write(f"{number}:{f.start}-{f.end} {f.kind}")
            self.stdout.write(redacted, ending=ending)
            self.stdout.flush()

    def _detectors(self, option: str | None) -> tuple[str, ...]:
        try:
            if option is None:
                return enabled_detectors()
            names = check_detectors(option.split(","))
        except (UnknownDetectorError, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from None
        if not names:
            raise CommandError("--detectors: give at least one detector name")
        return names
