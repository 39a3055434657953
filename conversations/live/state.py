"""One live exchange's state in Redis, its ordering by ``seq``, and the conversation's events.

Keys (``LIVE_KEY_PREFIX``, then):

- ``x:<h>``: the exchange's state, ``h`` a hash of the conversation and the backend's exchange key.
  A JSON object: ``public`` (the filter's types, classes, counts and times), ``next`` (the next
  ``seq`` to read), ``held`` (the ``seq`` numbers that arrived early) and ``sealed``: the filter's
  text (SSE not yet framed, visible text held back) and the early chunks, AES-GCM encrypted with
  the conversation's data key (``keystore``), so nothing unredacted is in Redis in the clear and
  an erased conversation's held text is unreadable with its key. Expires ``LIVE_IDLE_SECONDS``
  after the last chunk: that is the idle close.
- ``closed:<h>``: an exchange closed by its POST (late chunks are no-ops), a day.
- ``lock:<h>``: one chunk of an exchange at a time, across web processes.
- ``log:<pk>`` (a list of the last ``LIVE_EVENTS_KEPT`` events, for ``Last-Event-ID``),
  ``n:<pk>`` (the event counter), channel ``c:<pk>`` (pub/sub): the conversation's events, only
  the filter's visible events, so only redacted text.
- ``now`` (a sorted set: conversation pk by last activity) and ``open:<pk>`` (its open exchanges):
  the "Live now" list.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
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


def channel(conversation_id: int) -> str:
    return key("c", conversation_id)


def exchange_hash(conversation_id: int, exchange: str) -> str:
    return hashlib.sha256(f"{conversation_id}\x00{exchange}".encode()).hexdigest()[:32]


def _aad(h: str) -> bytes:
    return f"live|exchange={h}".encode()


@contextmanager
def locked(h: str) -> Iterator[None]:
    with client().lock(key("lock", h), timeout=10, blocking_timeout=10):
        yield


def load(h: str, data_key: bytes) -> dict[str, Any] | None:
    raw: Any = client().get(key("x", h))
    if raw is None:
        return None
    state: dict[str, Any] = json.loads(raw)
    sealed = base64.b64decode(state.pop("sealed"))
    state["secret"] = json.loads(crypto.decrypt(data_key, sealed, _aad(h)))
    return state


def save(h: str, data_key: bytes, state: dict[str, Any]) -> None:
    secret = json.dumps(state["secret"], ensure_ascii=False).encode()
    stored = {k: v for k, v in state.items() if k != "secret"}
    stored["sealed"] = base64.b64encode(crypto.encrypt(data_key, secret, _aad(h))).decode()
    client().set(key("x", h), json.dumps(stored), ex=settings.LIVE_IDLE_SECONDS)


def is_closed(h: str) -> bool:
    return bool(client().exists(key("closed", h)))


def mark_closed(conversation_id: int, h: str) -> None:
    r = client()
    with r.pipeline() as p:
        p.delete(key("x", h))
        p.set(key("closed", h), 1, ex=86400)
        p.srem(key("open", conversation_id), h)
        p.execute()
    if not r.scard(key("open", conversation_id)):
        r.zrem(key("now"), conversation_id)


def publish(conversation_id: int, h: str, events: Iterable[Event]) -> list[Event]:
    """Give each event its id (the conversation's counter) and the exchange, keep it in the log
    and publish it: one round trip for the counter, one for the rest."""
    events = list(events)
    r = client()
    now = time.time()
    if not events:
        with r.pipeline(transaction=False) as p:
            p.zadd(key("now"), {str(conversation_id): now})
            p.sadd(key("open", conversation_id), h)
            p.expire(key("open", conversation_id), settings.LIVE_IDLE_SECONDS)
            p.execute()
        return []
    last: Any = r.incrby(key("n", conversation_id), len(events))
    first = last - len(events) + 1
    out = [{"id": first + i, "exchange": h[:12], **e} for i, e in enumerate(events)]
    log = key("log", conversation_id)
    with r.pipeline(transaction=True) as p:
        for e in out:
            text = json.dumps(e, ensure_ascii=False)
            p.rpush(log, text)
            p.publish(channel(conversation_id), text)
        p.ltrim(log, -settings.LIVE_EVENTS_KEPT, -1)
        p.expire(log, settings.LIVE_IDLE_SECONDS * 10)
        p.expire(key("n", conversation_id), 86400)
        p.zadd(key("now"), {str(conversation_id): now})
        p.sadd(key("open", conversation_id), h)
        p.expire(key("open", conversation_id), settings.LIVE_IDLE_SECONDS)
        p.execute()
    return out


def forget(conversation_id: int) -> int:
    """Everything Redis holds of a conversation's live streams, gone: its open exchanges'
    states, its event log and counter, its place in "Live now". The erase path calls it: the
    held text was unreadable once the data key went, but the log of redacted visible text would
    otherwise linger until it expires. Returns the keys removed."""
    r = client()
    opened: Any = r.smembers(key("open", conversation_id))
    names = [key("x", h.decode() if isinstance(h, bytes) else h) for h in opened]
    names += [key("open", conversation_id), key("log", conversation_id), key("n", conversation_id)]
    with r.pipeline(transaction=True) as p:
        p.delete(*names)
        p.zrem(key("now"), str(conversation_id))
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
