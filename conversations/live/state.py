"""One live exchange's state in Redis, its ordering by ``seq``, and the conversation's events.

Keys (``LIVE_KEY_PREFIX``, then):

- ``x:<h>``: the exchange's state, ``h`` a hash of the conversation and the backend's exchange key.
  A JSON object: ``public`` (the filter's types, classes, counts and times), ``next`` (the next
  ``seq`` to read), ``held`` (the ``seq`` numbers that arrived early), ``tail`` and ``early`` (the
  characters in ``t:<h>`` and ``e:<h>``) and ``sealed``: the filter's held-back visible text and
  the tail's last characters, AES-GCM encrypted with
  the conversation's data key (``keystore``), so nothing unredacted is in Redis in the clear and
  an erased conversation's held text is unreadable with its key. Expires ``LIVE_IDLE_SECONDS``
  after the last chunk: that is the idle close.
- ``t:<h>``: the raw SSE text of the exchange not yet framed into events (a list of segments,
  each sealed like ``sealed``): a chunk that completes no event appends one; one that completes
  an event reads them and leaves one (what follows the event). ``e:<h>``: the chunks that came
  early, sealed, by ``seq``. So a chunk costs what it adds, never a rewrite of all it follows.
- ``closed:<h>``: an exchange closed by its POST (late chunks are no-ops), a day.
- ``lock:<h>``: one chunk of an exchange at a time, across web processes.
- ``log:<pk>`` (a list of the last ``LIVE_EVENTS_KEPT`` events, for ``Last-Event-ID``),
  ``n:<pk>`` (the event counter), channel ``c:<pk>`` (pub/sub): the conversation's events, only
  the filter's visible events, so only redacted text. A counter starts at the time in
  milliseconds x 1000 (``_COMMIT``), so ids keep rising across a Redis restart that lost it:
  a viewer resuming with ``Last-Event-ID`` misses nothing published after the restart (ids stay
  below 2^53: JavaScript reads them exactly).
- ``now`` (a sorted set: conversation pk by last activity) and ``open:<pk>`` (its open exchanges):
  the "Live now" list; channel ``c:now`` says when one joins or leaves it (``hub.watch_now``).

A chunk, and the close of an exchange, cost two round trips, each one Lua script: ``begin``
(the closed mark, the lock, the state) and ``commit`` (the state, the counter, the log, the
publish, "Live now", the unlock; the ids assigned in Redis). ``commit`` writes nothing when its
lock expired meanwhile, or when the state it read was deleted meanwhile (closed, idle, or an
erasure's ``forget``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import redis
from django.conf import settings

from ..keystore import crypto

Event = dict[str, Any]


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url)


def client() -> redis.Redis:
    return _client(settings.REDIS_URL)


def key(*parts: object) -> str:
    return ":".join([settings.LIVE_KEY_PREFIX, *map(str, parts)])


def channel(conversation_id: int | str) -> str:  # "now": told when "Live now" changes
    return key("c", conversation_id)


def exchange_hash(conversation_id: int, exchange: str) -> str:
    return hashlib.sha256(f"{conversation_id}\x00{exchange}".encode()).hexdigest()[:32]


def _aad(h: str) -> bytes:
    return f"live|exchange={h}".encode()


LOCK_SECONDS = 10
LOCK_WAIT_SECONDS = 10.0

# One chunk's reads: the closed mark, the lock, the state, in one round trip.
# KEYS: closed:<h>, lock:<h>, x:<h>; ARGV: the lock's token, its life in ms.
_BEGIN = """
if redis.call('EXISTS', KEYS[1]) == 1 then return {'closed'} end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'locked'} end
local raw = redis.call('GET', KEYS[3])
if raw then return {'ok', raw} end
return {'ok'}
"""

# One chunk's writes, with the lock's release, in one round trip: nothing is written when the
# lock is no longer this chunk's, or when the state it read is gone meanwhile (closed, expired,
# or forgotten by an erasure: a chunk read before must not bring it back), and nothing when the
# exchange is new and its conversation has ``cap`` exchanges open already.
# KEYS: lock:<h>, x:<h>, n:<pk>, log:<pk>, now, open:<pk>, channel c:<pk>, t:<h>, e:<h>,
#       "Live now"'s channel (told when the conversation joins "now")
# ARGV: token, had state (1/0), state, idle seconds, events kept, now, pk, h, exchange label,
#       extras (JSON: the tail's "mode" "a" or "r" and its sealed "seg", the early chunks to
#       "set" and to "del", the open exchanges' "cap" and the keys' "prefix"), then each event's
#       JSON without its opening brace.
_COMMIT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'lost'} end
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
  return {'gone'}
end
local extra = cjson.decode(ARGV[10])
if ARGV[2] == '0' then
  local open = 0
  for _, h in ipairs(redis.call('SMEMBERS', KEYS[6])) do
    if h ~= ARGV[8] and redis.call('EXISTS', extra['prefix'] .. ':x:' .. h) == 1 then
      open = open + 1
    end
  end
  if open >= tonumber(extra['cap']) then
    redis.call('DEL', KEYS[1])
    return {'full', tostring(open)}
  end
end
local idle = tonumber(ARGV[4])
redis.call('SET', KEYS[2], ARGV[3], 'EX', idle)
if extra['mode'] == 'r' then redis.call('DEL', KEYS[8]) end
if extra['seg'] ~= '' then redis.call('RPUSH', KEYS[8], extra['seg']) end
redis.call('EXPIRE', KEYS[8], idle)
for seq, sealed in pairs(extra['set']) do redis.call('HSET', KEYS[9], seq, sealed) end
for _, seq in ipairs(extra['del']) do redis.call('HDEL', KEYS[9], seq) end
redis.call('EXPIRE', KEYS[9], idle)
local n = #ARGV - 10
local first = 0
if n > 0 then
  if redis.call('EXISTS', KEYS[3]) == 0 then
    -- A new counter (first event, or Redis lost it: a restart without persistence, its
    -- expiry) starts at the time in ms x 1000: above every id it gave before, so a viewer
    -- resuming with an older Last-Event-ID gets every event published since.
    redis.call('SET', KEYS[3], string.format('%d', math.floor(tonumber(ARGV[6]) * 1000) * 1000))
  end
  local last = redis.call('INCRBY', KEYS[3], n)
  first = last - n + 1
  local head = ', "exchange": "' .. ARGV[9] .. '", '
  for i = 1, n do
    local text = '{"id": ' .. string.format('%d', first + i - 1) .. head .. ARGV[10 + i]
    redis.call('RPUSH', KEYS[4], text)
    redis.call('PUBLISH', KEYS[7], text)
  end
  redis.call('LTRIM', KEYS[4], -tonumber(ARGV[5]), -1)
  redis.call('EXPIRE', KEYS[4], idle * 10)
  redis.call('EXPIRE', KEYS[3], 86400)
end
if redis.call('ZADD', KEYS[5], ARGV[6], ARGV[7]) == 1 then
  redis.call('PUBLISH', KEYS[10], '{"id": 0, "type": "now"}')
end
redis.call('SADD', KEYS[6], ARGV[8])
redis.call('EXPIRE', KEYS[6], idle)
redis.call('DEL', KEYS[1])
return {'ok', first}
"""

# KEYS: lock:<h>; ARGV: token.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@cache
def _script(url: str, text: str) -> Any:
    return _client(url).register_script(text)


def _run(text: str, keys: list[str], args: list[Any]) -> Any:
    return _script(settings.REDIS_URL, text)(keys=keys, args=args)


class LockTimeout(Exception):
    """Another chunk of the exchange held its lock for longer than ``LOCK_WAIT_SECONDS``."""


class LockLost(Exception):
    """The chunk outlived its lock (``LOCK_SECONDS``): it wrote nothing."""


class TooManyOpen(Exception):
    """A new exchange of a conversation that has ``LIVE_MAX_OPEN_EXCHANGES`` open: it wrote
    nothing."""


@dataclass(slots=True)
class Extras:
    """What a chunk writes beside the exchange's small state: the raw SSE text not yet framed
    (the tail: a list of sealed segments, appended to, or replaced once an event completes) and
    the chunks that came early (a hash by ``seq``), so that a chunk costs what it adds."""

    mode: str = ""  # "a": append ``seg``; "r": replace the tail by ``seg`` ("" for none)
    seg: str = ""  # the segment's text, sealed at commit
    set: dict[str, str] = field(default_factory=dict)  # seq -> early chunk, sealed at commit
    delete: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Begun:
    """A chunk's start: ``closed`` (a no-op), or the exchange locked for it (``token``) with its
    raw state (None for a new exchange)."""

    closed: bool
    token: str = ""
    raw: bytes | None = None


def begin(h: str) -> Begun:
    """The closed mark, the lock and the state of an exchange, in one round trip (the lock
    retried every 2 ms while another chunk holds it, for up to ``LOCK_WAIT_SECONDS``)."""
    token = secrets.token_hex(16)
    keys = [key("closed", h), key("lock", h), key("x", h)]
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        out: Any = _run(_BEGIN, keys, [token, LOCK_SECONDS * 1000])
        if out[0] == b"closed":
            return Begun(closed=True)
        if out[0] == b"ok":
            return Begun(closed=False, token=token, raw=out[1] if len(out) > 1 else None)
        if time.monotonic() > deadline:
            raise LockTimeout(h)
        time.sleep(0.002)


def unseal(h: str, data_key: bytes, raw: bytes) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(raw)
    sealed = base64.b64decode(state.pop("sealed"))
    state["secret"] = json.loads(crypto.decrypt(data_key, sealed, _aad(h)))
    return state


def _sealed(h: str, data_key: bytes, state: dict[str, Any]) -> str:
    # ASCII escapes: the held text may end in half a surrogate pair (an emoji whose halves came
    # in two deltas of two chunks), which UTF-8 cannot hold and JSON escapes can.
    secret = json.dumps(state["secret"]).encode()
    stored = {k: v for k, v in state.items() if k != "secret"}
    stored["sealed"] = base64.b64encode(crypto.encrypt(data_key, secret, _aad(h))).decode()
    return json.dumps(stored)


def _seal(h: str, data_key: bytes, text: str, part: str) -> str:
    aad = _aad(h) + f"|{part}".encode()
    # ASCII escapes (json): a text may end in half a surrogate pair (see ``_sealed``).
    return base64.b64encode(crypto.encrypt(data_key, json.dumps(text).encode(), aad)).decode()


def _open(h: str, data_key: bytes, sealed: bytes, part: str) -> str:
    aad = _aad(h) + f"|{part}".encode()
    text: str = json.loads(crypto.decrypt(data_key, base64.b64decode(sealed), aad))
    return text


def tail_read(h: str, data_key: bytes) -> str:
    """The exchange's raw SSE text not yet framed: its segments, in order (under its lock)."""
    segments: Any = client().lrange(key("t", h), 0, -1)
    return "".join(_open(h, data_key, s, "tail") for s in segments)


def early_read(h: str, data_key: bytes, seqs: list[int]) -> list[str]:
    """The early chunks ``seqs``, in that order (under the exchange's lock)."""
    if not seqs:
        return []
    sealed: Any = client().hmget(key("e", h), [str(s) for s in seqs])
    return [
        _open(h, data_key, s, f"early={q}") if s else "" for q, s in zip(seqs, sealed, strict=True)
    ]


def commit(
    conversation_id: int,
    begun: Begun,
    h: str,
    data_key: bytes,
    state: dict[str, Any],
    events: Iterable[Event],
    extras: Extras | None = None,
) -> list[Event] | None:
    """Save the state (and ``extras``: the tail, the early chunks), give each event its id (the
    conversation's counter) and the exchange, keep it in the log, publish it, mark the
    conversation live, release the lock: one round trip, one script. The events as published;
    None when the state read was gone meanwhile (nothing written). Raises ``LockLost`` when the
    lock expired under the chunk, ``TooManyOpen`` when a new exchange finds
    ``LIVE_MAX_OPEN_EXCHANGES`` of its conversation open."""
    extras = extras or Extras()
    label = h[:12]
    events = [{k: v for k, v in e.items() if k not in ("id", "exchange")} for e in events]
    bodies = [json.dumps(e, ensure_ascii=False) for e in events]
    keys = [
        key("lock", h),
        key("x", h),
        key("n", conversation_id),
        key("log", conversation_id),
        key("now"),
        key("open", conversation_id),
        channel(conversation_id),
        key("t", h),
        key("e", h),
        channel("now"),
    ]
    extra = {
        "mode": extras.mode,
        "seg": _seal(h, data_key, extras.seg, "tail") if extras.seg else "",
        "set": {q: _seal(h, data_key, c, f"early={q}") for q, c in extras.set.items()},
        "del": extras.delete,
        "cap": settings.LIVE_MAX_OPEN_EXCHANGES,
        "prefix": settings.LIVE_KEY_PREFIX,
    }
    args: list[Any] = [
        begun.token,
        1 if begun.raw is not None else 0,
        _sealed(h, data_key, state),
        settings.LIVE_IDLE_SECONDS,
        settings.LIVE_EVENTS_KEPT,
        repr(time.time()),
        str(conversation_id),
        h,
        label,
        json.dumps(extra),
        *(b[1:] for b in bodies),
    ]
    out: Any = _run(_COMMIT, keys, args)
    if out[0] == b"lost":
        raise LockLost(h)
    if out[0] == b"gone":
        return None
    if out[0] == b"full":
        raise TooManyOpen(int(out[1]))
    first = int(out[1])
    return [{"id": first + i, "exchange": label, **e} for i, e in enumerate(events)]


def release(begun: Begun, h: str) -> None:
    _run(_RELEASE, [key("lock", h)], [begun.token])


# The unwrapped data keys of conversations with a live exchange in flight, in this process, so a
# chunk does not read its key from the keys database each time (``services.live_chunk_ingest``
# uses one only for an exchange whose state it found in Redis; an erasure's ``forget`` deletes
# that state, so the chunk after it reads the key again, and finds it destroyed).
KEYS_KEPT = 1024
_keys: dict[int, tuple[bytes, float]] = {}
_keys_lock = threading.Lock()


def key_kept(conversation_id: int) -> bytes | None:
    with _keys_lock:
        kept = _keys.get(conversation_id)
    if kept is None or kept[1] < time.monotonic():
        return None
    return kept[0]


def key_keep(conversation_id: int, data_key: bytes) -> None:
    """Keep ``data_key`` for ``LIVE_IDLE_SECONDS`` (the life of an idle exchange's state)."""
    with _keys_lock:
        _keys.pop(conversation_id, None)
        _keys[conversation_id] = (data_key, time.monotonic() + settings.LIVE_IDLE_SECONDS)
        while len(_keys) > KEYS_KEPT:
            del _keys[next(iter(_keys))]


def key_drop(conversation_id: int) -> None:
    with _keys_lock:
        _keys.pop(conversation_id, None)


def mark_closed(conversation_id: int, h: str) -> None:
    r = client()
    with r.pipeline() as p:
        p.delete(key("x", h), key("t", h), key("e", h))
        p.set(key("closed", h), 1, ex=86400)
        p.srem(key("open", conversation_id), h)
        p.execute()
    if not r.scard(key("open", conversation_id)) and r.zrem(key("now"), conversation_id):
        r.publish(channel("now"), '{"id": 0, "type": "now"}')


def forget(conversation_id: int) -> int:
    """Everything Redis holds of a conversation's live streams, gone: its open exchanges'
    states, its event log and counter, its place in "Live now". The erase path calls it: the
    held text was unreadable once the data key went, but the log of redacted visible text would
    otherwise linger until it expires. Returns the keys removed."""
    key_drop(conversation_id)
    r = client()
    opened: Any = r.smembers(key("open", conversation_id))
    hashes = [h.decode() if isinstance(h, bytes) else h for h in opened]
    names = [key(part, h) for h in hashes for part in ("x", "t", "e")]
    names += [key("open", conversation_id), key("log", conversation_id), key("n", conversation_id)]
    with r.pipeline(transaction=True) as p:
        p.delete(*names)
        p.zrem(key("now"), str(conversation_id))
        p.publish(channel("now"), '{"id": 0, "type": "now"}')
        removed: Any = p.execute()[0]
    return int(removed)


def events_after(conversation_id: int, last_id: int) -> list[Event]:
    """The kept events of a conversation with an id above ``last_id`` (a reconnect)."""
    out = []
    kept: Any = client().lrange(key("log", conversation_id), 0, -1)
    for raw in kept:
        event = json.loads(raw)
        if event["id"] > last_id:
            out.append(event)
    return out


def live_now(limit: int = 500) -> list[int]:
    """Conversations with an exchange in flight (a chunk within ``LIVE_IDLE_SECONDS``), newest
    first."""
    r = client()
    since = time.time() - settings.LIVE_IDLE_SECONDS
    r.zremrangebyscore(key("now"), "-inf", since)
    return [int(m) for m in r.zrevrangebyscore(key("now"), "+inf", since, start=0, num=limit)]
