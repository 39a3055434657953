"""Other database sessions for the concurrency tests: a thread with its own Django connections,
driven one step at a time, so a test can hold a transaction open in one session while another
session works."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

from django.db import connections, transaction

STEP_SECONDS = 15  # a step that takes longer is blocked (on a lock): the test fails


class Session:
    def __init__(self, name: str, *, using: str = "default") -> None:
        self.name = name
        self.using = using
        self._inbox: queue.Queue[Callable[[], Any] | None] = queue.Queue()
        self._outbox: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._atomic: Any = None
        self.open = False  # a transaction is open in this session
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            while (step := self._inbox.get()) is not None:
                try:
                    self._outbox.put((True, step()))
                except BaseException as exc:  # handed to the test's thread
                    self._outbox.put((False, exc))
        finally:
            connections.close_all()

    def run(self, step: Callable[[], Any], *, timeout: float = STEP_SECONDS) -> Any:
        """Run ``step`` in this session and return its result; raise what it raised, or
        ``queue.Empty`` when it did not finish within ``timeout`` seconds."""
        self._inbox.put(step)
        ok, value = self._outbox.get(timeout=timeout)
        if not ok:
            raise value
        return value

    def begin(self) -> None:
        def step() -> None:
            self._atomic = transaction.atomic(using=self.using)
            self._atomic.__enter__()
            self.open = True

        self.run(step)

    def commit(self) -> None:
        self.open = False
        self.run(lambda: self._atomic.__exit__(None, None, None))

    def rollback(self) -> None:
        self.open = False

        def step() -> None:
            transaction.set_rollback(True, using=self.using)
            self._atomic.__exit__(None, None, None)

        self.run(step)

    def sql(self, statement: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        def step() -> list[tuple[Any, ...]]:
            with connections[self.using].cursor() as cursor:
                cursor.execute(statement, params or [])
                return list(cursor.fetchall()) if cursor.description else []

        return self.run(step)

    def close(self) -> None:
        if self.open:
            with contextlib.suppress(Exception):  # the session is going away either way
                self.rollback()
        self._inbox.put(None)
        self._thread.join(timeout=STEP_SECONDS)
