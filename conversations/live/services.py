"""The writes of live conversations: a chunk in, an exchange closed. Neither touches the
database: a live stream is shown, never stored (the exchange's own POST stores it, as for an
exchange never seen live, so replay stays byte-identical)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from ..formats.base import FormatError
from ..keystore.keys import KeyDestroyed, data_key_for
from ..models import Exchange
from . import state
from .body import ChunkInput
from .filters import Event, Filter, filter_for

# Early chunks one exchange may hold while it waits for a gap to fill.
MAX_HELD = 256


class LiveRefused(Exception):
    def __init__(
        self, detail: str, *, code: str, field: str, status: int, at: str | None = None
    ) -> None:
        super().__init__(detail)
        self.detail, self.code, self.field, self.status = detail, code, field, status
        self.at = at or f"$.{field}"


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


@dataclass(frozen=True, slots=True)
class ChunkResult:
    status: str  # "published", "held", "duplicate", "closed"
    next_seq: int
    events: int


def _new(fmt: str) -> dict[str, Any]:
    return {"format": fmt, "next": 0, "held": [], "public": None, "secret": None}


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


def live_chunk_ingest(
    *, conversation_id: int, data: ChunkInput, now: float | None = None
) -> ChunkResult:
    """Read one chunk of a live exchange: in ``seq`` order (an early one is held, encrypted,
    until the gap fills; a repeated one is a no-op), through the format's filter; its visible
    events published on the conversation's channel. Two Redis round trips (``state.begin``:
    the closed mark, the lock, the state; ``state.commit``: the writes, the publish, the
    unlock)."""
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
        if data.seq < st["next"] or data.seq in st["held"]:
            return ChunkResult("duplicate", st["next"], 0)
        secret = st["secret"] or {"tail": "", "pending": {}}
        early: dict[str, str] = secret.setdefault("early", {})
        if data.seq > st["next"]:
            if len(st["held"]) >= MAX_HELD:
                raise LiveRefused(
                    f"more than {MAX_HELD} chunks wait for seq {st['next']}",
                    code="gap_too_long",
                    field="seq",
                    status=409,
                )
            early[str(data.seq)] = data.chunk
            st["held"].append(data.seq)
            st["secret"] = secret
            kept = state.commit(conversation_id, begun, h, data_key, st, [])
            committed = True
            if kept is None:
                return ChunkResult("closed", 0, 0)
            return ChunkResult("held", st["next"], 0)
        f = filter_for(st["format"], {"public": st["public"], "secret": secret})
        events = _feed_own(f, data.chunk, now)
        st["next"] += 1
        while st["next"] in st["held"]:
            st["held"].remove(st["next"])
            events += _feed_held(f, early.pop(str(st["next"])), now)
            st["next"] += 1
        st["public"], st["secret"] = f.public, f.secret
        published = state.commit(conversation_id, begun, h, data_key, st, events)
        committed = True
    except state.LockLost:
        raise _busy() from None
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
    held text leaves, a ``closed`` event ends it; the same two round trips as a chunk. The
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
        secret = st["secret"] or {"tail": "", "pending": {}}
        early = secret.get("early", {})
        f = filter_for(st["format"], {"public": st["public"], "secret": secret})
        events: list[Event] = []
        for seq in sorted(st["held"]):
            events += _feed_held(f, early.pop(str(seq)), now)
        try:
            events += f.close(now=now)
        except FormatError as exc:  # the last event, without its blank line, too deep
            f.error(exc.code)
            events += f.take()
        events.append({"type": "closed"})
        st["held"], st["public"], st["secret"] = [], f.public, f.secret
        published = state.commit(conversation_id, begun, h, data_key, st, events)
        committed = True
    except state.LockLost:
        return None
    finally:
        if not committed:  # (the commit releases the lock)
            state.release(begun, h)
        state.mark_closed(conversation_id, h)
    if published is None:  # erased or gone idle while it was read: nothing was published
        return None
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
