"""Delivery: a ``Console`` posts captured exchanges from a background thread.

The chat path only appends to a bounded in-memory queue (``submit``: a lock and a list
append). The thread turns each capture into its ``POST /api/v1/exchanges`` body and posts it
with an ``Idempotency-Key`` (the capture's key, the same on every attempt, so a retry of a
request the console did store stores nothing twice).

Order is kept: exchanges of a conversation must reach the console in the order they were made
(each request's history is matched against what is stored). So the thread posts strictly in
order; once one exchange is spooled, every later one goes behind it in the spool until the spool
has drained.

Outcomes of one post:
- 2xx: sent.
- 400, 409, 410, 413 and other 4xx: rejected, never retried (the console stored nothing and
  never will; the error is logged with its field and JSON path).
- no answer (refused, timed out, cut), 401/403/404 (a wrong token or URL: spooled until an
  operator fixes it), 408, 429, 502, 503, 504: the console is unreachable for now: retried with
  exponential backoff and jitter, then spooled; the spool head is retried until it goes through.
- another 5xx: the console's readiness is asked (``GET /readyz``): not ready (a dependency down,
  e.g. Redis or the database), it is the console's failure: as above, not counted; ready, it is
  this exchange's: as above, but counted against the exchange: after ``max_attempts`` such
  answers it is dropped, so one exchange the console cannot take does not hold back all that
  follow.

How to extend: a new outcome is a branch of ``_classify``; a new counter a field of ``Counters``.
"""

from __future__ import annotations

import atexit
import enum
import http.client
import logging
import os
import random
import threading
import time
import weakref
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path

from ._capture import Capture, Unsendable
from ._forward import Forwarder
from ._spool import Entry, Spool
from ._wire import Wire

log = logging.getLogger("console_client")

EXCHANGES_PATH = "/api/v1/exchanges"
READY_PATH = "/readyz"


@dataclass(frozen=True)
class Counters:
    """What happened to the provider calls of a console, since the process started.

    captured: calls queued for the console; sent: accepted by it; retried: posts repeated after a
    failure; spooled: exchanges written to the on-disk spool; dropped: exchanges lost (queue or
    spool full, or refused with a 5xx ``max_attempts`` times); rejected: refused by the console
    with a 4xx (nothing stored); uncaptured: provider calls made outside ``conversation()``;
    cancelled: streams closed or broken before their end (posted with what arrived); skipped:
    calls not posted (the provider answered an error, a body that is not UTF-8); live_sent and
    live_dropped: stream chunks forwarded live (``live=True``) and accepted, or lost (best
    effort: a full queue, the console down or refusing).
    """

    captured: int = 0
    sent: int = 0
    retried: int = 0
    spooled: int = 0
    dropped: int = 0
    rejected: int = 0
    uncaptured: int = 0
    cancelled: int = 0
    skipped: int = 0
    live_sent: int = 0
    live_dropped: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class Outcome(enum.Enum):
    SENT = "sent"
    REJECTED = "rejected"
    UNREACHABLE = "unreachable"  # retry; not the exchange's fault
    FAILED = "failed"  # retry; counted against the exchange


@dataclass(frozen=True)
class Options:
    timeout: float = 5.0
    connect_timeout: float = 2.0
    queue_size: int = 1000
    spool_dir: Path | None = None
    spool_max_files: int = 10_000
    spool_max_bytes: int = 256 * 1024 * 1024
    max_attempts: int = 20
    retries_before_spool: int = 2
    backoff: float = 0.25
    backoff_max: float = 30.0
    exit_timeout: float = 2.0
    live: bool = False  # forward streams chunk by chunk as they arrive (_forward.py)
    live_queue_size: int = 10_000


def default_spool_dir(url: str) -> Path:
    import hashlib

    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return Path(cache) / "console-client" / digest


class Console:
    """One console (URL and service token) and the delivery of its exchanges."""

    def __init__(self, url: str, token: str, options: Options) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.options = options
        self._counts = dict.fromkeys(Counters().as_dict(), 0)
        self._warned_uncaptured = False
        self._reset()
        _live.add(self)

    def _reset(self) -> None:
        """Fresh state for this process (also in a forked child: threads do not survive fork)."""
        self._cond = threading.Condition()
        self._queue: deque[Capture] = deque()
        self._busy = False  # an entry is being posted (or retried) outside the lock
        self._stopping = False
        self._wake = False
        self._closed = False
        self._spool: Spool | None = None
        self._spool_failed = False
        self._spool_checked = False
        self._spool_lock = threading.RLock()
        self._failures = 0  # consecutive failed posts: the backoff exponent
        self._retry_at = 0.0  # no post before this (time.monotonic)
        self._http: Wire | None = None
        self._forwarder: Forwarder | None = None
        self._thread = threading.Thread(
            target=self._run, name="console-client-delivery", daemon=True
        )
        self._thread.start()

    # --- The chat path -------------------------------------------------------------------

    def submit(self, capture: Capture) -> None:
        """Queue a finished capture (never blocks, never raises to the caller)."""
        with self._cond:
            if capture.cancelled:
                self._counts["cancelled"] += 1
            if self._closed or len(self._queue) >= self.options.queue_size:
                self._counts["dropped"] += 1
                why = "closed" if self._closed else f"full ({self.options.queue_size})"
                log.warning(
                    "console_client: dropped an exchange of conversation %s: the queue is %s",
                    capture.conversation.id,
                    why,
                )
                return
            self._counts["captured"] += 1
            self._queue.append(capture)
            self._cond.notify_all()

    def uncaptured(self) -> None:
        with self._cond:
            self._counts["uncaptured"] += 1
            first = not self._warned_uncaptured
            self._warned_uncaptured = True
        (log.warning if first else log.debug)(
            "console_client: a provider call outside console_client.conversation() is not "
            "captured (counted as uncaptured)"
        )

    def skipped(self, why: str) -> None:
        with self._cond:
            self._counts["skipped"] += 1
        log.info("console_client: a provider call is not posted: %s", why)

    def live_chunk(self, capture: Capture, data: bytes) -> None:
        """Forward one chunk of a live stream (never blocks, never raises)."""
        forwarder = self._forwarder
        if forwarder is None:
            with self._cond:
                if self._closed:
                    return
                if self._forwarder is None:
                    self._forwarder = Forwarder(
                        self.url,
                        self.token,
                        timeout=self.options.timeout,
                        connect_timeout=self.options.connect_timeout,
                        queue_size=self.options.live_queue_size,
                        count=self._count,
                    )
                forwarder = self._forwarder
        forwarder.chunk(capture, data)

    def live_done(self, capture: Capture) -> None:
        if self._forwarder is not None:
            self._forwarder.done(capture)

    def _count(self, name: str) -> None:
        with self._cond:
            self._counts[name] += 1

    # --- Callers' controls ---------------------------------------------------------------

    def counters(self) -> Counters:
        with self._cond:
            return Counters(**self._counts)

    def pending(self) -> int:
        """Exchanges not yet delivered: queued, being posted, or spooled."""
        with self._cond:
            spooled = len(self._spool) if self._spool is not None else 0
            return len(self._queue) + int(self._busy) + spooled

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until everything queued or spooled is delivered (or given up), at most
        ``timeout`` seconds. A console that is down is tried once more right away. On time out,
        what is still queued in memory is written to the spool (a later process delivers it).
        True when nothing is left."""
        with self._cond:
            self._wake = True
            self._cond.notify_all()
            done = self._cond.wait_for(self._idle, timeout)
        if not done:
            self._spill()
        return done

    def close(self, timeout: float | None = 10.0) -> bool:
        """Flush, then stop the thread. Later submissions are dropped (counted)."""
        done = self.flush(timeout)
        with self._cond:
            self._stopping = True
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=max(self.options.timeout, 1.0) + 1.0)
        with self._spool_lock:
            if self._spool is not None:
                self._spool.close()
        if self._http is not None:
            self._http.close()
        if self._forwarder is not None:
            self._forwarder.close(timeout)
        return done

    def _idle(self) -> bool:
        if self._queue or self._busy:
            return False
        if self._spool is None:
            # Not opened yet: the thread opens it first thing (an earlier run may have left
            # exchanges in it); idle only once it has looked.
            return self._spool_failed or self._spool_checked
        return len(self._spool) == 0

    # --- The delivery thread -------------------------------------------------------------

    def _run(self) -> None:
        self._open_spool()
        while True:
            try:
                if not self._step():
                    return
            except Exception:  # never die: log, wait a little, go on
                log.exception("console_client: delivery error")
                time.sleep(1.0)

    def _spooled(self) -> bool:
        return self._spool is not None and len(self._spool) > 0

    def _step(self) -> bool:
        """One unit of work; False when the thread should end."""
        with self._cond:
            self._cond.wait_for(
                lambda: self._stopping or self._wake or self._queue or self._spooled(),
                timeout=1.0,
            )
            if self._stopping:
                return False
            if self._wake:
                self._wake = False
                self._retry_at = 0.0
            spooled = self._spooled()
            if not self._queue and not spooled:
                return True
            # Calls come faster than one connection posts them: rather than let the queue
            # fill up and drop, move it to the spool (a file write is much quicker than a post)
            # and post from there, in the same order.
            backlog = self._backlogged()
            self._busy = True
        try:
            if spooled or backlog:
                self._spill()  # keep order: what is queued goes behind the spool
                self._post_spool_head()
            else:
                self._post_queue_head()
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
        return True

    def _backlogged(self) -> bool:
        """The queue is over half full and there is a spool to move it to."""
        return len(self._queue) > self.options.queue_size // 2 and self._spool is not None

    def _wait_for_retry(self, *, spill: bool) -> bool:
        """Sleep until the backoff allows a post; False if woken to stop. A flush wakes it.
        With ``spill``, exchanges queued meanwhile go to the spool as they come, so a long
        outage does not fill the in-memory queue; without, a backlog ends the wait (False:
        the exchange in hand goes to the spool first, then the queue behind it)."""
        while True:
            with self._cond:
                if self._stopping or (not spill and self._backlogged()):
                    return False
                if self._wake:
                    self._wake = False
                    self._retry_at = 0.0
                remaining = self._retry_at - time.monotonic()
                if remaining <= 0:
                    return True
                if not (spill and self._queue):
                    self._cond.wait(remaining)
                    continue
            self._spill()

    def _post_queue_head(self) -> None:
        with self._cond:
            capture = self._queue.popleft()
        forwarder = self._forwarder
        if capture.live_seq and forwarder is not None:
            # Its live chunks first: the exchange closes the live stream on the console, and a
            # chunk arriving after it would never be shown. Bounded: a slow console delays the
            # record by one timeout at most.
            forwarder.wait(capture.live_mark, self.options.timeout)
        entry = self._entry(capture)
        if entry is None:
            return
        for attempt in range(self.options.retries_before_spool + 1):
            if attempt:
                if not self._wait_for_retry(spill=False):
                    break
                with self._cond:
                    self._counts["retried"] += 1
            outcome = self._post(entry, cancelled=capture.cancelled)
            if outcome in (Outcome.SENT, Outcome.REJECTED):
                return
            if outcome is Outcome.FAILED:
                entry.attempts += 1
        self._to_spool(entry)

    def _post_spool_head(self) -> None:
        if not self._wait_for_retry(spill=True):
            return
        with self._spool_lock:
            assert self._spool is not None
            entry = self._spool.head()
        if entry is None:
            return
        if entry.attempts or self._failures:
            with self._cond:
                self._counts["retried"] += 1
        outcome = self._post(entry, cancelled=False)
        with self._spool_lock:
            assert self._spool is not None
            if outcome in (Outcome.SENT, Outcome.REJECTED):
                self._spool.remove(entry)
            elif outcome is Outcome.FAILED:
                entry.attempts += 1
                if entry.attempts >= self.options.max_attempts:
                    self._spool.remove(entry)
                    self._drop(entry, f"the console answered 5xx {entry.attempts} times")
                else:
                    self._spool.update(entry)

    def _entry(self, capture: Capture) -> Entry | None:
        try:
            body = capture.body()
        except Unsendable as exc:
            self.skipped(f"conversation {capture.conversation.id}: {exc}")
            return None
        return Entry(key=capture.key, conversation=capture.conversation.id, body=body)

    # --- Posting -------------------------------------------------------------------------

    def _wire(self) -> Wire:
        if self._http is None:
            self._http = Wire(
                self.url, timeout=self.options.timeout, connect_timeout=self.options.connect_timeout
            )
        return self._http

    def _post(self, entry: Entry, *, cancelled: bool) -> Outcome:
        try:
            response = self._wire().request(
                "POST",
                EXCHANGES_PATH,
                body=entry.body,
                headers={
                    "Authorization": f"Bearer {self.token}",
                    "Content-Type": "application/json",
                    "Idempotency-Key": entry.key,
                    "User-Agent": "console-client/0.1",
                },
            )
        except (OSError, http.client.HTTPException) as exc:
            return self._failed(Outcome.UNREACHABLE, f"{type(exc).__name__}: {exc}", None)
        except Exception as exc:  # anything else: kept and retried, never lost here
            log.exception("console_client: posting to %s failed", self.url)
            return self._failed(Outcome.UNREACHABLE, f"{type(exc).__name__}: {exc}", None)
        status = response.status
        if 200 <= status < 300:
            with self._cond:
                self._counts["sent"] += 1
                self._failures = 0
                self._retry_at = 0.0
            return Outcome.SENT
        text = response.text[:500]
        retry_after = _retry_after(response.headers.get("retry-after"))
        if status in (401, 403, 404, 405):
            log.error(
                "console_client: %s%s answered %s (check the URL and the service token); "
                "exchanges are kept in the spool: %s",
                self.url,
                EXCHANGES_PATH,
                status,
                text,
            )
            return self._failed(Outcome.UNREACHABLE, f"status {status}", retry_after)
        if status in (408, 429, 502, 503, 504):
            return self._failed(Outcome.UNREACHABLE, f"status {status}", retry_after)
        if status >= 500:
            if not self._console_ready():
                # The console itself is unwell (a dependency down: Redis, the database), not
                # this exchange: retried without using up its attempts, as when unreachable.
                return self._failed(Outcome.UNREACHABLE, f"status {status}", retry_after)
            return self._failed(Outcome.FAILED, f"status {status}: {text}", retry_after)
        with self._cond:
            self._counts["rejected"] += 1
            self._failures = 0
        note = " (a stream cancelled before its end)" if cancelled else ""
        log.warning(
            "console_client: the console refused an exchange of conversation %s with %s%s: %s",
            entry.conversation,
            status,
            note,
            text,
        )
        return Outcome.REJECTED

    def _console_ready(self) -> bool:
        """Whether the console says it is ready (``GET /readyz`` answers 200): a 5xx then is
        this exchange's, and counts against it; otherwise (503, no answer) it is the console's
        and does not. A console without ``/readyz`` (404) cannot tell: counted, as before."""
        try:
            response = self._wire().request(
                "GET", READY_PATH, body=None, headers={"User-Agent": "console-client/0.1"}
            )
        except Exception:  # no answer: not ready
            return False
        return response.status in (200, 404)

    def _failed(self, outcome: Outcome, why: str, retry_after: float | None) -> Outcome:
        with self._cond:
            self._failures += 1
            ceiling = min(self.options.backoff_max, self.options.backoff * 2**self._failures)
            # Equal jitter: at least half the ceiling, so a crowd of clients spreads out
            # without any of them hammering a console that just came back.
            delay = ceiling / 2 + random.uniform(0, ceiling / 2)
            if retry_after is not None:
                delay = max(delay, min(retry_after, self.options.backoff_max))
            self._retry_at = time.monotonic() + delay
            failures = self._failures
        (log.warning if failures == 1 else log.debug)(
            "console_client: could not post to %s (%s); retrying in %.1f s", self.url, why, delay
        )
        return outcome

    # --- The spool -----------------------------------------------------------------------

    def _open_spool(self) -> None:
        base = self.options.spool_dir or default_spool_dir(self.url)
        with self._spool_lock:
            try:
                spool = Spool(
                    Path(base),
                    max_files=self.options.spool_max_files,
                    max_bytes=self.options.spool_max_bytes,
                    dropped=self._drop,
                )
            except OSError as exc:
                self._spool_failed = True
                log.error(
                    "console_client: no spool at %s (%s): exchanges the console cannot take "
                    "now are dropped",
                    base,
                    exc,
                )
            else:
                if len(spool):
                    log.info(
                        "console_client: %d exchange(s) left in the spool %s by an earlier run",
                        len(spool),
                        spool.dir,
                    )
                with self._cond:
                    self._spool = spool
        with self._cond:
            self._spool_checked = True
            self._cond.notify_all()

    def _to_spool(self, entry: Entry) -> None:
        with self._spool_lock:
            if self._spool is None:
                self._drop(entry, "there is no spool")
                return
            try:
                self._spool.append(entry)
            except OSError as exc:
                self._drop(entry, f"the spool cannot be written: {exc}")
                return
        with self._cond:
            if entry.path is not None:
                self._counts["spooled"] += 1

    def _spill(self) -> None:
        """Move everything queued in memory to the spool's tail, in order."""
        while True:
            with self._cond:
                if not self._queue:
                    return
                capture = self._queue.popleft()
            entry = self._entry(capture)
            if entry is not None:
                self._to_spool(entry)

    def _drop(self, entry: Entry, why: str) -> None:
        with self._cond:
            self._counts["dropped"] += 1
        log.warning(
            "console_client: dropped exchange %s of conversation %s: %s",
            entry.key,
            entry.conversation or "?",
            why,
        )


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: the backoff applies


# Every Console of this process: flushed at exit, reset in a forked child.
_live: weakref.WeakSet[Console] = weakref.WeakSet()


def _flush_at_exit() -> None:
    for console in list(_live):
        try:
            console.flush(console.options.exit_timeout)
        except Exception:
            log.exception("console_client: flush at exit")


def _after_fork_in_child() -> None:
    for console in list(_live):
        if not console._closed:
            console._reset()


atexit.register(_flush_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
