"""The writes of live conversations: a chunk in, an exchange closed. Neither touches the
database: a live stream is shown, never stored (the exchange's own POST stores it, as for an
exchange never seen live, so replay stays byte-identical)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from ..formats.base import FormatError
from ..keystore.keys import KeyDestroyed, data_key_for
from ..models import Conversation, Exchange
from . import state
from .body import ChunkInput
from .filters import Event, Filter, filter_for

# Early chunks one exchange may hold while it waits for a gap to fill.
MAX_HELD = 256
# The tail's last characters kept in the small state: enough to see an event's end (a blank
# line, at most four characters) cut across two chunks.
END_CHARS = 8


class LiveRefused(Exception):
    def __init__(
        self, detail: str, *, code: str, field: str, status: int, at: str | None = None
    ) -> None:
        super().__init__(detail)
        self.detail, self.code, self.field, self.status = detail, code, field, status
        self.at = at or f"$.{field}"


@dataclass(frozen=True, slots=True)
class ChunkResult:
    status: str  # "published", "held", "duplicate", "closed"
    next_seq: int
    events: int


def _new(fmt: str) -> dict[str, Any]:
    return {
        "format": fmt,
        "next": 0,
        "held": [],
        "public": None,
        "secret": None,
        "tail": 0,
        "early": 0,
    }


def _data_key(conversation_id: int, begun: state.Begun) -> bytes:
    """The conversation's data key: kept in process only while the exchange's state is in Redis
    (an erasure forgets that state, so the chunk after it reads the key, and finds it destroyed:
    ``KeyDestroyed``)."""
    if begun.raw is not None:
        kept = state.key_kept(conversation_id)
        if kept is not None:
            return kept
    data_key = data_key_for(conversation_id)
    state.key_keep(conversation_id, data_key)
    return data_key


class _Exchange:
    """One exchange under its lock: the small state, the filter, and what the chunk changes in
    the tail and the early chunks (``state.Extras``), read from Redis only when needed."""

    def __init__(self, h: str, data_key: bytes, st: dict[str, Any], now: float) -> None:
        self.h, self.data_key, self.st, self.now = h, data_key, st, now
        secret = st["secret"] or {}
        self.end: str = secret.get("end", "")
        self.filter = filter_for(
            st["format"],
            {"public": st["public"], "secret": {"tail": "", "pending": secret.get("pending", {})}},
        )
        if self.filter.public["t0"] is None:
            self.filter.public["t0"] = now
        self.extras = state.Extras()
        self.appended: list[str] = []
        self.tail: str | None = None  # the whole tail, once read (or replaced)

    def _tail_text(self) -> str:
        if self.tail is None:
            return state.tail_read(self.h, self.data_key) + "".join(self.appended)
        return self.tail

    def feed(self, chunk: str, *, own: bool) -> list[Event]:
        """One chunk in ``seq`` order: appended to the tail unless it completes an event, then
        the tail read once and the filter run over it (``own``: the chunk sent now, refused
        when unreadable; else a held one, which ends the stream with an error event)."""
        f = self.filter
        if f.public["finished"]:
            return []  # nothing after the end is read (nor kept)
        head = self.end + chunk
        if not f.ends_event(head):
            if self.tail is None:
                self.appended.append(chunk)
            else:
                self.tail += chunk
            self.end = head[-END_CHARS:]
            return []
        f.secret["tail"] = self._tail_text()
        events = _feed_own(f, chunk, self.now) if own else _feed_held(f, chunk, self.now)
        self.tail = f.secret["tail"]
        self.appended = []
        f.secret["tail"] = ""
        self.end = self.tail[-END_CHARS:]
        return events

    def close(self) -> list[Event]:
        f = self.filter
        f.secret["tail"] = self._tail_text()
        try:
            events = f.close(now=self.now)
        except FormatError as exc:  # the last event, without its blank line, too deep
            f.error(exc.code)
            events = f.take()
        self.tail, self.appended, f.secret["tail"] = "", [], ""
        self.end = ""
        return events

    def size(self) -> int:
        """The characters this exchange keeps in Redis once the chunk is written."""
        tail = (
            self.st["tail"] + sum(map(len, self.appended)) if self.tail is None else len(self.tail)
        )
        return tail + self.st["early"] + len(json.dumps(self.filter.secret["pending"]))

    def sealed_state(self) -> dict[str, Any]:
        """The small state to write, and the tail's change in ``extras``."""
        if self.tail is not None:
            self.extras.mode, self.extras.seg = "r", self.tail
            self.st["tail"] = len(self.tail)
        elif self.appended:
            self.extras.mode, self.extras.seg = "a", "".join(self.appended)
            self.st["tail"] += len(self.extras.seg)
        self.st["public"] = self.filter.public
        self.st["secret"] = {"pending": self.filter.secret["pending"], "end": self.end}
        return self.st


def _feed_own(f: Filter, chunk: str, now: float) -> list[Event]:
    """The chunk sent now, through the filter: one the decoder cannot read (``too_deep``) is
    refused, 400, and nothing of it is kept (the same ``seq`` may be sent again)."""
    try:
        return f.feed(chunk, now=now)
    except FormatError as exc:
        raise LiveRefused(exc.detail, code=exc.code, field="chunk", status=400) from None


def _feed_held(f: Filter, chunk: str, now: float) -> list[Event]:
    """A chunk held earlier (accepted then, its sender gone): one the decoder cannot read ends
    the stream with an ``error`` event rather than failing the chunk that filled the gap."""
    try:
        return f.feed(chunk, now=now)
    except FormatError as exc:
        f.error(exc.code)
        return f.take()


def _check_size(x: _Exchange) -> None:
    limit = settings.LIVE_MAX_STATE_CHARS
    if x.size() > limit:
        raise LiveRefused(
            f"this exchange would keep more than {limit} characters of stream not yet read "
            "(LIVE_MAX_STATE_CHARS); nothing of this chunk was kept",
            code="state_too_large",
            field="chunk",
            status=413,
        )


def live_chunk_ingest(
    *, conversation_id: int, data: ChunkInput, now: float | None = None
) -> ChunkResult:
    """Read one chunk of a live exchange: in ``seq`` order (an early one is held, encrypted,
    until the gap fills; a repeated one is a no-op), through the format's filter; its visible
    events published on the conversation's channel. Two Redis round trips (``state.begin``:
    the closed mark, the lock, the state; ``state.commit``: the writes, the publish, the
    unlock), a third when the chunk completes an event cut across chunks (the tail) or fills a
    gap (the early chunks). Refused, nothing kept: a state over ``LIVE_MAX_STATE_CHARS`` (413),
    a new exchange past ``LIVE_MAX_OPEN_EXCHANGES`` open in its conversation (429)."""
    h = state.exchange_hash(conversation_id, data.exchange)
    try:
        begun = state.begin(h)
    except state.LockTimeout:
        raise _busy() from None
    if begun.closed:
        return ChunkResult("closed", 0, 0)
    committed = False
    try:
        data_key = _data_key(conversation_id, begun)
        now = time.time() if now is None else now
        st = _new(data.format) if begun.raw is None else state.unseal(h, data_key, begun.raw)
        st.setdefault("tail", 0)
        st.setdefault("early", 0)
        if data.seq < st["next"] or data.seq in st["held"]:
            return ChunkResult("duplicate", st["next"], 0)
        x = _Exchange(h, data_key, st, now)
        if data.seq > st["next"]:
            if len(st["held"]) >= MAX_HELD:
                raise LiveRefused(
                    f"more than {MAX_HELD} chunks wait for seq {st['next']}",
                    code="gap_too_long",
                    field="seq",
                    status=409,
                )
            st["held"].append(data.seq)
            st["early"] += len(data.chunk)
            x.extras.set[str(data.seq)] = data.chunk
            _check_size(x)
            kept = state.commit(conversation_id, begun, h, data_key, x.sealed_state(), [], x.extras)
            committed = True
            if kept is None:
                return ChunkResult("closed", 0, 0)
            return ChunkResult("held", st["next"], 0)
        events = x.feed(data.chunk, own=True)
        st["next"] += 1
        ready: list[int] = []
        while st["next"] + len(ready) in st["held"]:
            ready.append(st["next"] + len(ready))
        for seq, chunk in zip(ready, state.early_read(h, data_key, ready), strict=True):
            st["held"].remove(seq)
            st["early"] -= len(chunk)
            x.extras.delete.append(str(seq))
            events += x.feed(chunk, own=False)
            st["next"] += 1
        _check_size(x)
        published = state.commit(
            conversation_id, begun, h, data_key, x.sealed_state(), events, x.extras
        )
        committed = True
    except state.LockLost:
        raise _busy() from None
    except state.TooManyOpen:
        committed = True  # (the commit released the lock)
        raise LiveRefused(
            f"this conversation has {settings.LIVE_MAX_OPEN_EXCHANGES} exchanges streaming "
            "already (LIVE_MAX_OPEN_EXCHANGES); close one with its POST first",
            code="too_many_exchanges",
            field="exchange",
            status=429,
        ) from None
    finally:
        if not committed:  # (the commit releases the lock)
            state.release(begun, h)
    if published is None:  # closed or erased while this chunk was read: nothing written
        return ChunkResult("closed", 0, 0)
    return ChunkResult("published", st["next"], len(published))


def _busy() -> LiveRefused:
    return LiveRefused(
        "another chunk of this exchange held it too long; nothing of this one was kept, send it "
        "again",
        code="busy",
        field="exchange",
        status=409,
    )


def live_exchange_close(
    *, conversation_id: int, exchange: str, now: float | None = None
) -> dict[str, Any] | None:
    """Close a live exchange (its POST arrived): held chunks are read in order past any gap,
    held text leaves, a ``closed`` event ends it; the same round trips as a chunk. The
    filter's public summary (time to first visible text, thinking seconds), or None when it was
    never seen live (or was erased, or its lock stayed held: the stored exchange is what
    counts, so the close never fails its POST)."""
    h = state.exchange_hash(conversation_id, exchange)
    now = time.time() if now is None else now
    try:
        begun = state.begin(h)
    except state.LockTimeout:
        state.mark_closed(conversation_id, h)
        return None
    if begun.closed:
        return None
    committed = False
    try:
        if begun.raw is None:
            return None
        try:
            data_key = _data_key(conversation_id, begun)
        except KeyDestroyed:  # erased meanwhile: nothing to read, nothing to show
            return None
        st = state.unseal(h, data_key, begun.raw)
        st.setdefault("tail", 0)
        st.setdefault("early", 0)
        x = _Exchange(h, data_key, st, now)
        held = sorted(st["held"])
        events: list[Event] = []
        for chunk in state.early_read(h, data_key, held):
            events += x.feed(chunk, own=False)
        events += x.close()
        events.append({"type": "closed"})
        st["held"], st["early"] = [], 0
        x.extras.delete = [str(q) for q in held]
        published = state.commit(
            conversation_id, begun, h, data_key, x.sealed_state(), events, x.extras
        )
        committed = True
    except (state.LockLost, state.TooManyOpen):
        return None
    finally:
        if not committed:  # (the commit releases the lock)
            state.release(begun, h)
        state.mark_closed(conversation_id, h)
    if published is None:  # erased or gone idle while it was read: nothing was published
        return None
    f = x.filter
    return {
        "first_text_seconds": f.public["first_text"],
        "thinking_seconds": f.public["thinking_seconds"],
    }


@transaction.atomic
def exchange_live_timings_record(*, exchange_id: int, summary: dict[str, Any]) -> int:
    """Keep what was seen live on the stored exchange: time to the first visible text and how
    long the model thought (``live_exchange_close``'s summary). Metadata of the watch, never of
    the exchange's content: replay and projection do not read it."""

    def ms(seconds: Any) -> int | None:
        return None if seconds is None else max(0, round(float(seconds) * 1000))

    return Exchange.objects.filter(pk=exchange_id).update(
        live_first_text_ms=ms(summary.get("first_text_seconds")),
        live_thinking_ms=ms(summary.get("thinking_seconds")),
    )


def live_conversations_held() -> set[int]:
    """The conversations Redis holds live state of (an event log, a counter, open exchanges or a
    place in "Live now"): one SCAN over the live keys, for the retention clock's sweep."""
    r = state.client()
    names = [n for part in ("log", "n", "open") for n in r.scan_iter(state.key(part, "*"), 1000)]
    members: Any = r.zrange(state.key("now"), 0, -1)
    tails = [*(n.rsplit(b":", 1)[1] for n in names), *members]
    return {int(t) for t in tails if t.isdigit()}


def live_exchange_finish(conversation: str, exchange: str, *, exchange_id: int) -> None:
    """The exchange's POST arrived (``live_exchange``): its live stream closes, and the stored
    exchange keeps what was seen live (time to first text, thinking time)."""
    row = Conversation.objects.filter(external_id=conversation).values_list("pk", flat=True).first()
    if row is None:
        return
    summary = live_exchange_close(conversation_id=row, exchange=exchange)
    if summary is not None:
        exchange_live_timings_record(exchange_id=exchange_id, summary=summary)
