"""Real Celery workers and beats as subprocesses over Redis, against the test databases, and the
world they erase: shared by the clock's end-to-end test and the crash test.

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

import ctypes
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import connections
from rest_framework.test import APIClient

from conversations.models import Conversation, Message
from conversations.services import service_token_create
from retention import registry
from retention.models import Receipt
from retention.services import receipt_verify
from tests.conftest import database_url, raw_of
from tests.factories import post_exchange

BASE_DIR = Path(__file__).resolve().parents[2]
INTERVAL = 2  # CLOCK_INTERVAL_SECONDS of the subprocesses
PRIVATE_REDIS_DB = 13
POLL_SECONDS = 60  # the longest any wait below may take (a give-up bound, not a measure: a Celery
# worker and beat starting on two loaded cores once took over 30 s to their first tick in CI)

SUBJECT = "cus-E2E-SUBJECT-3c9d"
CONVERSATIONS = ["conv-E2E-ONE-8a1f", "conv-E2E-TWO-d07e"]
TEXTS = ["MARK-E2E-VISIBLE-5e62", "MARK-E2E-VISIBLE-b9c4"]
OTHER = ("cus-E2E-OTHER-41aa", "conv-E2E-OTHER-f2d3", "MARK-E2E-OTHER-07b8")

TICK = r"Task retention\.tasks\.retention_tick\[(?P<id>[0-9a-f-]+)\]"
RECEIVED = re.compile(TICK + r" received")
SUCCEEDED = re.compile(TICK + r" succeeded")
SENT = re.compile(r"Sending due task retention-tick")


# --- The subprocesses -------------------------------------------------------------------------


def private_redis_url() -> str:
    parts = urlsplit(settings.REDIS_URL)
    return urlunsplit(parts._replace(path=f"/{PRIVATE_REDIS_DB}"))


def clock_env() -> dict[str, str]:
    for alias in ("default", "keys"):
        connections[alias].ensure_connection()
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "DATABASE_URL": database_url("default"),
        "KEYS_DATABASE_URL": database_url("keys"),
        "REDIS_URL": private_redis_url(),
        "CLOCK_INTERVAL_SECONDS": str(INTERVAL),
        "FIELD_ENCRYPTION_KEYS": ",".join(settings.FIELD_ENCRYPTION_KEYS),
        "SECRET_KEY": settings.SECRET_KEY,
        "PYTHONUNBUFFERED": "1",
    }


def _die_with_parent() -> None:
    """In the child: be killed when the test process dies (Linux), so an interrupted test run
    leaves no worker or beat behind holding the test database."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@dataclass
class Proc:
    name: str
    log: Path
    popen: subprocess.Popen[bytes]
    out: IO[bytes]
    killed: bool = False

    def text(self) -> str:
        return self.log.read_text(errors="replace")


@dataclass
class Clock:
    """The worker and beat processes of one test; stopped (and their logs printed, which pytest
    shows when the test fails) at teardown."""

    tmp: Path
    env: dict[str, str] = field(default_factory=clock_env)
    procs: list[Proc] = field(default_factory=list)

    def _start(self, name: str, *args: str, env: dict[str, str] | None = None) -> Proc:
        log = self.tmp / f"{name}.log"
        out = log.open("wb")
        popen = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "console", *args, "--loglevel=INFO"],
            cwd=BASE_DIR,
            env={**self.env, **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
        proc = Proc(name, log, popen, out)
        self.procs.append(proc)
        return proc

    def worker(
        self, name: str = "worker", *, include: str = "", env: dict[str, str] | None = None
    ) -> Proc:
        """A worker (solo pool: the task runs in this very process); ``include``: a module it
        imports at start-up, with ``env`` added to its environment."""
        return self._start(
            name,
            "worker",
            *(["--include", include] if include else []),
            "--pool=solo",
            "--concurrency=1",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "-Q",
            "celery",
            "--hostname",
            f"e2e-{name}@%h",
            env=env,
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

    def kill(self, proc: Proc) -> None:
        """SIGKILL: no cleanup, no acknowledgement, its database sessions cut."""
        proc.killed = True
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(timeout=15)

    def alive(self) -> None:
        for proc in self.procs:
            if proc.killed:
                continue
            code = proc.popen.poll()
            assert code is None, f"{proc.name} exited with {code}:\n{proc.text()}"


def ticks(proc: Proc) -> tuple[list[str], set[str]]:
    """The ticks the worker received (in order) and those that succeeded."""
    text = proc.text()
    return [m["id"] for m in RECEIVED.finditer(text)], {m["id"] for m in SUCCEEDED.finditer(text)}


def wait_for(what: str, condition: Callable[[], bool], clock: Clock) -> None:
    deadline = time.monotonic() + POLL_SECONDS
    while not condition():
        clock.alive()
        assert time.monotonic() < deadline, f"timed out after {POLL_SECONDS}s waiting for {what}"
        time.sleep(0.1)


# --- Data -------------------------------------------------------------------------------------


def ingest_world(
    subject: str = SUBJECT,
    conversations: Sequence[str] = CONVERSATIONS,
    texts: Sequence[str] = TEXTS,
    other: tuple[str, str, str] = OTHER,
) -> None:
    """The subject's conversations (two exchanges each, with planted texts) and another
    subject's one (customer, conversation, text), through the API."""
    _, token = service_token_create(name="chat")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    for conversation, text in zip(conversations, texts, strict=True):
        post_exchange(api, conversation=conversation, customer=subject, text=text)
        post_exchange(api, conversation=conversation, customer=subject, text=text + "-again")
    post_exchange(api, conversation=other[1], customer=other[0], text=other[2])


def assert_receipt_counts(receipt: Receipt, existed: dict[str, int]) -> None:
    """The receipt is signed and verified, and counts what existed of the subject (``existed``:
    rows per registered model, counted by the test before the erasure)."""
    assert receipt_verify(receipt)  # the worker signed it with the same key
    assert receipt.verification["ok"] is True, receipt.verification
    assert receipt.conversations == len(CONVERSATIONS)
    assert receipt.keys_destroyed == len(CONVERSATIONS)
    assert receipt.counts["keys"] == {registry.KEYS.label: existed[registry.KEYS.label]}
    assert receipt.counts["main"] == {
        entry.label: existed[entry.label] for entry in registry.ERASED if existed[entry.label]
    }


def table_of(entry: registry.Entry) -> str:
    return f"{'keys' if entry.store == 'keys' else 'default'}.{entry.model._meta.db_table}"


def assert_other_subject_intact(dump: str) -> None:
    for value in OTHER:
        assert value in dump, value
    other = Conversation.objects.get(external_id=OTHER[1])
    assert other.customer_external_id == OTHER[0]
    messages = list(Message.objects.filter(conversation=other))
    assert messages
    assert any(OTHER[2] in raw_of(message) for message in messages)  # its key still decrypts
