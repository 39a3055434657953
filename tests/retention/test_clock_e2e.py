"""The clock end to end: a real Celery worker and a real beat, separate processes over Redis (not
eager mode), against the test databases.

A customer's deletion request completes within two ticks of the beat; the receipt counts what
existed; a pg_dump of the main database holds nothing of the subject afterwards while another
subject's data is intact. Two beats at once (and two workers) still execute the request once.

The subprocesses get the test databases' URLs, a Redis database of their own (the test's
REDIS_URL with database 13, flushed before and after: the broker queue and the cache the worker
scans), CLOCK_INTERVAL_SECONDS=2 and the test process's SECRET_KEY and FIELD_ENCRYPTION_KEYS (so
the keyed hashes, the audit chain and the receipt HMAC agree). The settings do not read a task
queue from the environment, so beat and worker use Celery's default queue, "celery", of that
private Redis database.

Ticks are counted from the worker's log ("Task retention.tasks.retention_tick[id] received" /
"... succeeded"): a tick writes nothing to the database unless there is work.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.conf import settings
from django.db import connections
from django.test import override_settings
from rest_framework.test import APIClient

from audit.models import AuditEvent
from conversations.models import Conversation, Message
from conversations.services import service_token_create
from retention import registry
from retention.models import DeletionRequest, Receipt
from retention.services import deletion_request_submit, receipt_verify
from tests.conftest import raw_of, table_counts
from tests.dumps import pg_dump, redis_dump
from tests.retention.helpers import ingest

pytestmark = pytest.mark.slow

BASE_DIR = Path(__file__).resolve().parents[2]
INTERVAL = 2  # CLOCK_INTERVAL_SECONDS of the subprocesses
PRIVATE_REDIS_DB = 13
POLL_SECONDS = 30  # the longest any wait below may take

SUBJECT = "cus-E2E-SUBJECT-3c9d"
CONVERSATIONS = ["conv-E2E-ONE-8a1f", "conv-E2E-TWO-d07e"]
TEXTS = ["MARK-E2E-VISIBLE-5e62", "MARK-E2E-VISIBLE-b9c4"]
OTHER = ("cus-E2E-OTHER-41aa", "conv-E2E-OTHER-f2d3", "MARK-E2E-OTHER-07b8")

TICK = r"Task retention\.tasks\.retention_tick\[(?P<id>[0-9a-f-]+)\]"
RECEIVED = re.compile(TICK + r" received")
SUCCEEDED = re.compile(TICK + r" succeeded")
SENT = re.compile(r"Sending due task retention-tick")


# --- The subprocesses -------------------------------------------------------------------------


def _url(alias: str) -> str:
    """A DATABASE_URL for the subprocess: TCP, or a Unix socket directory (embedded server).
    (As in tests/audit/test_verify.py.)"""
    params = connections[alias].get_connection_params()
    host = str(params.get("host") or "")
    port = params.get("port") or 5432
    user = params.get("user") or ""
    password = params.get("password") or ""
    if host.startswith("/") or not host:
        socket = host or "/var/run/postgresql"
        return f"postgres://{user}:{password}@/{params['dbname']}?host={socket}&port={port}"
    return f"postgres://{user}:{password}@{host}:{port}/{params['dbname']}"


def _private_redis_url() -> str:
    parts = urlsplit(settings.REDIS_URL)
    return urlunsplit(parts._replace(path=f"/{PRIVATE_REDIS_DB}"))


def _env() -> dict[str, str]:
    for alias in ("default", "keys"):
        connections[alias].ensure_connection()
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "DATABASE_URL": _url("default"),
        "KEYS_DATABASE_URL": _url("keys"),
        "REDIS_URL": _private_redis_url(),
        "CLOCK_INTERVAL_SECONDS": str(INTERVAL),
        "FIELD_ENCRYPTION_KEYS": ",".join(settings.FIELD_ENCRYPTION_KEYS),
        "SECRET_KEY": settings.SECRET_KEY,
        "PYTHONUNBUFFERED": "1",
    }


@dataclass
class Proc:
    name: str
    log: Path
    popen: subprocess.Popen[bytes]
    out: IO[bytes]

    def text(self) -> str:
        return self.log.read_text(errors="replace")


@dataclass
class Clock:
    """The worker and beat processes of one test; stopped (and their logs printed, which pytest
    shows when the test fails) at teardown."""

    tmp: Path
    env: dict[str, str] = field(default_factory=_env)
    procs: list[Proc] = field(default_factory=list)

    def _start(self, name: str, *args: str) -> Proc:
        log = self.tmp / f"{name}.log"
        out = log.open("wb")
        popen = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "console", *args, "--loglevel=INFO"],
            cwd=BASE_DIR,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        proc = Proc(name, log, popen, out)
        self.procs.append(proc)
        return proc

    def worker(self, name: str = "worker") -> Proc:
        return self._start(
            name,
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "-Q",
            "celery",
            "--hostname",
            f"e2e-{name}@%h",
        )

    def beat(self, name: str = "beat") -> Proc:
        return self._start(name, "beat", "--schedule", str(self.tmp / f"{name}-schedule"))

    def stop(self) -> None:
        for proc in self.procs:
            if proc.popen.poll() is None:
                proc.popen.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.popen.kill()
                proc.popen.wait(timeout=15)
            proc.out.close()
        for proc in self.procs:
            print(f"===== {proc.name} (exit {proc.popen.returncode}) =====")
            print(proc.text())

    def alive(self) -> None:
        for proc in self.procs:
            code = proc.popen.poll()
            assert code is None, f"{proc.name} exited with {code}:\n{proc.text()}"


def _ticks(proc: Proc) -> tuple[list[str], set[str]]:
    """The ticks the worker received (in order) and those that succeeded."""
    text = proc.text()
    return [m["id"] for m in RECEIVED.finditer(text)], {m["id"] for m in SUCCEEDED.finditer(text)}


def _wait(what: str, condition: Callable[[], bool], clock: Clock) -> None:
    deadline = time.monotonic() + POLL_SECONDS
    while not condition():
        clock.alive()
        assert time.monotonic() < deadline, f"timed out after {POLL_SECONDS}s waiting for {what}"
        time.sleep(0.1)


@pytest.fixture
def private_redis() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(_private_redis_url())
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
def clock(tmp_path: Path, private_redis: redis.Redis) -> Iterator[Clock]:
    clock = Clock(tmp_path)
    try:
        yield clock
    finally:
        clock.stop()


# --- Data -------------------------------------------------------------------------------------


def _ingest_world() -> None:
    _, token = service_token_create(name="chat")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    for conversation, text in zip(CONVERSATIONS, TEXTS, strict=True):
        ingest(api, conversation, SUBJECT, text)
        ingest(api, conversation, SUBJECT, text + "-again")
    ingest(api, OTHER[1], OTHER[0], OTHER[2])


def _table(entry: registry.Entry) -> str:
    return f"{'keys' if entry.store == 'keys' else 'default'}.{entry.model._meta.db_table}"


def _assert_other_subject_intact(dump: str) -> None:
    for value in OTHER:
        assert value in dump, value
    other = Conversation.objects.get(external_id=OTHER[1])
    assert other.customer_external_id == OTHER[0]
    messages = list(Message.objects.filter(conversation=other))
    assert messages
    assert any(OTHER[2] in raw_of(message) for message in messages)  # its key still decrypts


# --- Tests ------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_a_request_completes_within_two_ticks_of_the_real_clock(
    transactional_db: Any, clock: Clock, private_redis: redis.Redis
) -> None:
    _ingest_world()
    ids = sorted(
        Conversation.objects.filter(customer_external_id=SUBJECT).values_list("pk", flat=True)
    )
    assert len(ids) == len(CONVERSATIONS)
    # What exists of the subject, per registered model, counted here (not by the code under test).
    existed = {entry.label: entry.rows(ids).count() for entry in registry.ALL}
    assert existed["conversations.message"] >= 4 and existed["conversations.datakey"] == 2
    tables_before = table_counts()
    before = pg_dump()
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS, *OTHER):
        assert value in before  # else the dump below would prove nothing

    worker = clock.worker()
    clock.beat()
    # The clock is running: the worker is up and has finished a tick (with nothing to do).
    _wait("the worker's first tick", lambda: bool(_ticks(worker)[1]), clock)

    received_before, _ = _ticks(worker)
    started = time.monotonic()
    request = deletion_request_submit(customer=SUBJECT, reason="erasure request (e2e)")

    # Poll: the log is read before the status, so "the second tick after submission had
    # succeeded and the request was still not completed" is never a false alarm.
    deadline = started + POLL_SECONDS
    while True:
        received, succeeded = _ticks(worker)
        status = DeletionRequest.objects.values_list("status", flat=True).get(pk=request.pk)
        after = [t for t in received if t not in received_before]
        if status == DeletionRequest.Status.COMPLETED:
            break
        assert status in ("pending", "running"), status
        assert not (len(after) >= 2 and after[1] in succeeded), (
            f"two ticks after submission succeeded ({after[:2]}), request still {status}"
        )
        clock.alive()
        assert time.monotonic() < deadline, f"not completed after {POLL_SECONDS}s ({status})"
        time.sleep(0.05)
    elapsed = time.monotonic() - started
    print(f"completed {elapsed:.2f}s after submission; ticks received since: {len(after)}")
    assert len(after) <= 2
    # The same bound in time (a tick every INTERVAL seconds, plus the tick's own work).
    assert elapsed <= 2 * INTERVAL + 3

    request.refresh_from_db()
    assert request.attempts == 1
    assert request.subject == "" and request.conversation_external_ids == []
    receipt = Receipt.objects.get(request=request)
    assert receipt_verify(receipt)  # the worker signed it with the same key
    assert receipt.verification["ok"] is True, receipt.verification
    assert receipt.conversations == len(CONVERSATIONS)
    assert receipt.keys_destroyed == len(CONVERSATIONS)
    # The receipt counts what existed: per model, and as measured by the tables themselves.
    assert receipt.counts["keys"] == {registry.KEYS.label: existed[registry.KEYS.label]}
    assert receipt.counts["main"] == {
        entry.label: existed[entry.label] for entry in registry.ERASED if existed[entry.label]
    }
    tables_after = table_counts()
    for entry in registry.ALL:
        removed = tables_before[_table(entry)] - tables_after[_table(entry)]
        assert removed == existed[entry.label], entry.label
    assert AuditEvent.objects.filter(code="deletion.executed", details__request=request.pk).count()
    assert not Conversation.objects.filter(pk__in=ids).exists()

    dump = pg_dump()
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS):
        assert value not in dump, value
    _assert_other_subject_intact(dump)
    # Nor in the clock's Redis (broker queue and cache): every key and value, decoded.
    with override_settings(REDIS_URL=_private_redis_url()):
        keys = redis_dump()
    assert "_kombu.binding.celery" in keys  # the broker of the clock was this database
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS):
        assert value not in keys, value


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_two_beats_at_once_still_execute_the_request_once(
    transactional_db: Any, clock: Clock
) -> None:
    _ingest_world()
    workers = [clock.worker("worker-a"), clock.worker("worker-b")]
    beats = [clock.beat("beat-a"), clock.beat("beat-b")]
    _wait(
        "both beats to send a tick and a worker to finish one",
        lambda: all(SENT.search(b.text()) for b in beats) and any(_ticks(w)[1] for w in workers),
        clock,
    )

    request = deletion_request_submit(customer=SUBJECT, reason="erasure request (two beats)")
    _wait(
        "the request to complete",
        lambda: DeletionRequest.objects.get(pk=request.pk).status == "completed",
        clock,
    )
    # Let both beats tick a few more times, then look again: nothing happened twice.
    done: set[str] = set().union(*(_ticks(w)[1] for w in workers))
    _wait(
        "four more ticks",
        lambda: len(set().union(*(_ticks(w)[1] for w in workers)) - done) >= 4,
        clock,
    )

    request.refresh_from_db()
    assert request.status == "completed"
    assert request.attempts == 1
    assert Receipt.objects.filter(request=request).count() == 1
    assert Receipt.objects.count() == 1
    executed = AuditEvent.objects.filter(code="deletion.executed")
    assert executed.count() == 1
    assert executed.get().details["request"] == request.pk
    receipt = Receipt.objects.get()
    assert receipt.conversations == len(CONVERSATIONS)
    assert receipt.keys_destroyed == len(CONVERSATIONS)
    assert not Conversation.objects.filter(customer_external_id=SUBJECT).exists()
    _assert_other_subject_intact(pg_dump())
    sent = [len(SENT.findall(b.text())) for b in beats]
    ran = [len(_ticks(w)[1]) for w in workers]
    print(f"ticks sent per beat: {sent}; ticks run per worker: {ran}")
    assert all(n >= 2 for n in sent)
