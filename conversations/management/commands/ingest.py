"""Bulk ingest: one ``POST /api/v1/exchanges`` body per line (JSONL).

Every line is checked exactly as the API checks a body; a bad line is reported with its line
number, field and JSON path, and skipped (nothing of it is stored). Good lines are written in
batches (``conversations.ingest.pipeline``: one transaction and one COPY per table per batch).

``--workers N``: N processes parse and write at once, each on its own database connections. Each
conversation goes to one worker (by a hash of its id), so its exchanges are stored in file order,
as with one process; different conversations are independent. This process reads the file,
routes the lines and reports; bad lines are reported in line order at the end.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue
import sys
import traceback
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections
from tqdm import tqdm

from conversations.api.errors import ApiError
from conversations.api.parsers import decode_json_body
from conversations.formats import FormatError
from conversations.ingest.body import ExchangeInput, exchange_input
from conversations.ingest.parse import exchange_parse
from conversations.ingest.pipeline import ingest_batch

CHUNK_LINES = 256  # lines sent to a worker at a time
INBOX_CHUNKS = 8  # chunks a worker may have waiting


@dataclass(frozen=True)
class Refusal:
    line: int
    code: str
    field: str | None
    at: str | None
    detail: str

    def __str__(self) -> str:
        where = f"{self.field or 'body'} at {self.at or '$'}"
        return f"line {self.line}: {self.code}: {where}: {self.detail}"


Item = tuple[int, ExchangeInput, Any]


def check_line(number: int, line: bytes) -> Item | Refusal:
    """The line parsed as the API would parse it, or why it is refused."""
    try:
        data = exchange_input(decode_json_body(line.rstrip(b"\r\n")))
        return number, data, exchange_parse(data)
    except ApiError as exc:
        return Refusal(number, exc.error, exc.field, exc.at, exc.message)
    except FormatError as exc:
        return Refusal(number, exc.code, exc.field, exc.at, exc.detail)


class Totals:
    def __init__(self) -> None:
        self.exchanges = self.messages = self.blocks = 0
        self.refused: list[Refusal] = []

    def add(self, other: Totals) -> None:
        self.exchanges += other.exchanges
        self.messages += other.messages
        self.blocks += other.blocks
        self.refused.extend(other.refused)


def ingest_lines(
    lines: Iterable[tuple[int, bytes]],
    batch_size: int,
    totals: Totals,
    on_commit: Callable[[int], object] | None = None,
) -> None:
    """Check and store the lines in batches, adding to ``totals``; ``on_commit(exchanges)``
    after each batch is committed."""
    batch: list[Item] = []

    def flush() -> None:
        result = ingest_batch(batch)
        if on_commit is not None:
            on_commit(result.exchanges)
        totals.exchanges += result.exchanges
        totals.messages += result.messages
        totals.blocks += result.blocks
        totals.refused.extend(
            Refusal(number, c.code, c.field, None, c.detail) for number, c in result.rejected
        )
        batch.clear()

    for number, line in lines:
        checked = check_line(number, line)
        if isinstance(checked, Refusal):
            totals.refused.append(checked)
            continue
        batch.append(checked)
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()


def _worker(inbox: Any, outbox: Any, batch_size: int) -> None:
    """A worker process: the chunks of its inbox until None, then its totals (or its failure).
    Each committed batch is reported (``stored``), so a failure can say what was kept."""
    totals = Totals()

    def chunks() -> Iterator[tuple[int, bytes]]:
        while (chunk := inbox.get()) is not None:
            yield from chunk

    try:
        ingest_lines(chunks(), batch_size, totals, lambda n: outbox.put(("stored", n)))
    except Exception:
        outbox.put(("failed", traceback.format_exc()))
        raise
    finally:
        connections.close_all()
    outbox.put(("done", totals))


class _WorkerFailed(Exception):
    pass


class _Workers:
    """The forked workers of ``--workers N``: an inbox each (bounded: reading waits for them),
    one outbox for their reports."""

    def __init__(self, n: int, batch_size: int) -> None:
        context = multiprocessing.get_context("fork")
        # A forked child must not share this process's database connections.
        connections.close_all()
        self.inboxes = [context.Queue(maxsize=INBOX_CHUNKS) for _ in range(n)]
        self.outbox = context.Queue()
        self.procs = [
            context.Process(target=_worker, args=(inbox, self.outbox, batch_size), daemon=True)
            for inbox in self.inboxes
        ]
        for proc in self.procs:
            proc.start()
        self.stored = 0  # exchanges committed so far, as the workers reported them
        self.finished = 0
        self.totals = Totals()

    def send(self, index: int, chunk: list[tuple[int, bytes]] | None) -> None:
        while True:
            try:
                self.inboxes[index].put(chunk, timeout=0.5)
                return
            except queue.Full:
                self.poll()  # a worker that failed or died must not leave us waiting

    def poll(self, timeout: float = 0) -> None:
        """Take the reports waiting in the outbox; ``_WorkerFailed`` when a worker failed."""
        while True:
            try:
                kind, value = (
                    self.outbox.get(timeout=timeout) if timeout else self.outbox.get_nowait()
                )
            except queue.Empty:
                break
            timeout = 0
            if kind == "stored":
                self.stored += value
            elif kind == "done":
                self.totals.add(value)
                self.finished += 1
            else:
                raise _WorkerFailed(value)
        dead = [p for p in self.procs if p.exitcode not in (None, 0)]
        if dead:
            raise _WorkerFailed(f"a worker stopped with exit code {dead[0].exitcode}")

    def wait(self) -> None:
        while self.finished < len(self.procs):
            self.poll(timeout=0.5)

    def stop(self) -> None:
        # Chunks still in a pipe nobody will read must not hold this process at exit.
        for q in (*self.inboxes, self.outbox):
            q.cancel_join_thread()
            q.close()
        for proc in self.procs:
            if proc.is_alive():
                proc.terminate()
            proc.join(timeout=10)


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Parsing allocates many short-lived objects, and the cyclic garbage collector would run
    thousands of times (about 7% of the ingest): collect less often while the command runs (and
    in the workers it forks), as before afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(100_000, 50, 1000)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _route(line: bytes, number: int, workers: int) -> int:
    """The worker of a line: by its conversation id (so a conversation stays in one worker and in
    file order); a line that names none goes anywhere, its worker refuses it."""
    try:
        body = decode_json_body(line.rstrip(b"\r\n"))
    except ApiError:
        return number % workers
    conversation = body.get("conversation") if isinstance(body, dict) else None
    if not isinstance(conversation, str):
        return number % workers
    return zlib.crc32(conversation.encode("utf-8", "surrogatepass")) % workers


class Command(BaseCommand):
    help = (
        "Ingest a JSONL file of exchanges (one POST /api/v1/exchanges body per line; - for stdin)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="path of the JSONL file, or - for standard input")
        parser.add_argument(
            "--batch-size", type=int, default=2000, help="exchanges per transaction"
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=1,
            help="processes parsing and writing at once (a conversation stays in one); default 1",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(
        self,
        *args: Any,
        file: str,
        batch_size: int,
        workers: int,
        no_progress: bool,
        **options: Any,
    ) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        if not 1 <= workers <= 64:
            raise CommandError("--workers must be 1 to 64")
        if file == "-":
            totals = self._run(sys.stdin.buffer, None, batch_size, workers, no_progress)
        else:
            try:
                handle = open(file, "rb")  # noqa: SIM115 (closed below)
            except OSError as exc:
                raise CommandError(f"cannot read {file}: {exc.strerror}") from None
            with handle:
                handle.seek(0, 2)
                size = handle.tell()
                handle.seek(0)
                totals = self._run(handle, size, batch_size, workers, no_progress)
        for refusal in sorted(totals.refused, key=lambda r: r.line):
            self.stderr.write(str(refusal))
        self.stdout.write(
            f"ingested {totals.exchanges} exchanges: {totals.messages} messages, "
            f"{totals.blocks} blocks; {len(totals.refused)} line(s) refused"
        )
        if totals.refused:
            raise CommandError(
                f"{len(totals.refused)} line(s) refused (see above); the others were stored"
            )

    def _run(
        self, handle: BinaryIO, size: int | None, batch_size: int, workers: int, no_progress: bool
    ) -> Totals:
        bar = tqdm(
            total=size,
            unit="B",
            unit_scale=True,
            desc="ingest",
            disable=no_progress,
            file=sys.stderr,
        )

        def lines() -> Iterator[tuple[int, bytes]]:
            for number, line in enumerate(handle, start=1):
                bar.update(len(line))
                if line.strip():
                    yield number, line

        totals = Totals()
        try:
            with _fewer_collections():
                if workers == 1:
                    ingest_lines(lines(), batch_size, totals)
                else:
                    self._parallel(lines(), batch_size, workers, totals)
        finally:
            bar.close()
        return totals

    def _parallel(
        self, lines: Iterator[tuple[int, bytes]], batch_size: int, n: int, totals: Totals
    ) -> None:
        workers = _Workers(n, batch_size)
        try:
            pending: list[list[tuple[int, bytes]]] = [[] for _ in range(n)]
            for number, line in lines:
                index = _route(line, number, n)
                pending[index].append((number, line))
                if len(pending[index]) >= CHUNK_LINES:
                    workers.send(index, pending[index])
                    pending[index] = []
            for index in range(n):
                if pending[index]:
                    workers.send(index, pending[index])
                workers.send(index, None)
            workers.wait()
        except _WorkerFailed as exc:
            raise CommandError(
                f"an ingest worker failed; {workers.stored} exchanges were stored before (by "
                f"several workers: not the file up to one line), the rest was not:\n{exc}"
            ) from None
        finally:
            workers.stop()
        totals.add(workers.totals)
