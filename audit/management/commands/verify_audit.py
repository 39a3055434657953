"""``manage.py verify_audit``: check the audit log's rows, seals and digests (audit/verify.py).

Prints what was verified and the head of the chain and exits 0; or lists every problem found
(an altered, removed or reordered row, a broken or forged digest, rows unsealed for too long,
a digest head the witness holds and the database lacks: audit/witness.py),
each naming its row, position or digest, and exits 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from audit.models import AuditSeal
from audit.verify import verify_chain

# Below this many rows the walk takes a moment and a progress bar is noise.
PROGRESS_MIN_ROWS = 10_000


class Command(BaseCommand):
    help = (
        "Verify the audit log (rows against their seals, the seal chain, the signed digests, "
        "rows left unsealed); exits non-zero naming each problem."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument(
            "--chunk-size", type=int, default=2000, help="rows fetched per round trip"
        )
        parser.add_argument(
            "--max-problems", type=int, default=20, help="stop after this many problems"
        )
        parser.add_argument(
            "--witness",
            default=None,
            help="a file of witnessed digest heads (default: AUDIT_WITNESS when it is a file; "
            "a copy fetched from the off-host sink when it is a URL)",
        )

    def handle(
        self,
        *args: Any,
        no_progress: bool,
        chunk_size: int,
        max_problems: int,
        witness: str | None = None,
        **options: Any,
    ) -> None:
        if witness is not None and not Path(witness).is_file():
            raise CommandError(f"--witness: {witness} is not a readable file")
        if chunk_size < 1:
            raise CommandError("--chunk-size must be at least 1")
        if max_problems < 1:
            raise CommandError("--max-problems must be at least 1")
        total = 0 if no_progress else AuditSeal.objects.count()
        bar = tqdm(
            total=total,
            unit="rows",
            desc="verify_audit",
            disable=no_progress or total < PROGRESS_MIN_ROWS,
            file=sys.stderr,
        )
        try:
            report = verify_chain(
                chunk_size=chunk_size,
                progress=bar.update,
                max_problems=max_problems,
                witness=witness,
            )
        except ValueError as exc:  # an unreadable witness line
            raise CommandError(f"the audit witness cannot be read: {exc}") from None
        finally:
            bar.close()
        if not report.ok:
            lines = "\n".join(f"  - {p.text}" for p in report.problems)
            raise CommandError(
                f"the audit log does not verify: {len(report.problems)} problem(s)\n{lines}\n"
                f"({report.verified} sealed rows and {report.digests} digests checked out)"
            )
        head = (
            f"; head: position {report.head_position}, hash {report.head_hash}"
            if report.verified
            else ""
        )
        waiting = f"; {report.unsealed} recent rows not sealed yet" if report.unsealed else ""
        seen = f"; {report.witnessed} digests as witnessed" if report.witnessed else ""
        self.stdout.write(
            f"verified {report.verified} audit rows and {report.digests} digests"
            f"{head}{waiting}{seen}"
        )
