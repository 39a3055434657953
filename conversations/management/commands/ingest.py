"""Bulk ingest: one ``POST /api/v1/exchanges`` body per line (JSONL).

Every line is checked exactly as the API checks a body; a bad line is reported with its line
number, field and JSON path, and skipped (nothing of it is stored). Good lines are written in
batches (``conversations.writer``: one transaction and one COPY per table per batch).
"""

from __future__ import annotations

import sys
from typing import Any, BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from conversations.api.errors import ApiError
from conversations.api.parsers import decode_json_body
from conversations.formats import FormatError
from conversations.planning import ExchangeInput, exchange_input, exchange_parse
from conversations.writer import ingest_batch


class Command(BaseCommand):
    help = (
        "Ingest a JSONL file of exchanges (one POST /api/v1/exchanges body per line; - for stdin)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="path of the JSONL file, or - for standard input")
        parser.add_argument(
            "--batch-size", type=int, default=2000, help="exchanges per transaction"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(
        self, *args: Any, file: str, batch_size: int, no_progress: bool, **options: Any
    ) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        if file == "-":
            self._run(sys.stdin.buffer, None, batch_size, no_progress)
            return
        try:
            handle = open(file, "rb")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from None
        with handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(0)
            self._run(handle, size, batch_size, no_progress)

    def _run(self, handle: BinaryIO, size: int | None, batch_size: int, no_progress: bool) -> None:
        bar = tqdm(
            total=size,
            unit="B",
            unit_scale=True,
            desc="ingest",
            disable=no_progress,
            file=sys.stderr,
        )
        batch: list[Any] = []
        totals = {"exchanges": 0, "messages": 0, "blocks": 0, "bad": 0}
        for number, line in enumerate(handle, start=1):
            bar.update(len(line))
            if not line.strip():
                continue
            item = self._check(number, line)
            if item is None:
                totals["bad"] += 1
                continue
            batch.append(item)
            if len(batch) >= batch_size:
                self._flush(batch, totals)
                batch = []
        if batch:
            self._flush(batch, totals)
        bar.close()
        self.stdout.write(
            f"ingested {totals['exchanges']} exchanges: {totals['messages']} messages, "
            f"{totals['blocks']} blocks; {totals['bad']} line(s) refused"
        )
        if totals["bad"]:
            raise CommandError(
                f"{totals['bad']} line(s) refused (see above); the others were stored"
            )

    def _check(self, number: int, line: bytes) -> tuple[int, ExchangeInput, Any] | None:
        try:
            data = exchange_input(decode_json_body(line.rstrip(b"\r\n")))
            return number, data, exchange_parse(data)
        except ApiError as exc:
            self._refuse(number, exc.error, exc.field, exc.at, exc.message)
        except FormatError as exc:
            self._refuse(number, exc.code, exc.field, exc.at, exc.detail)
        return None

    def _refuse(
        self, number: int, code: str, field: str | None, at: str | None, detail: str
    ) -> None:
        self.stderr.write(f"line {number}: {code}: {field or 'body'} at {at or '$'}: {detail}")

    def _flush(self, batch: list[Any], totals: dict[str, int]) -> None:
        result = ingest_batch(batch)
        totals["exchanges"] += result.exchanges
        totals["messages"] += result.messages
        totals["blocks"] += result.blocks
        for number, conflict in result.rejected:
            totals["bad"] += 1
            self._refuse(number, conflict.code, conflict.field, None, conflict.detail)
