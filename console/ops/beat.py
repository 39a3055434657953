"""The beat's heartbeat: the Celery beat writes the time into Redis as it ticks, and ``/readyz``
reads how old it is. Without a beat nothing periodic runs (the retention clock, the sealer, the
signals), so a missing or stale heartbeat is a readiness failure (``READY_BEAT_MAX_AGE_SECONDS``).

``HeartbeatScheduler`` is Celery's default persistent scheduler plus the heartbeat, named by
``CELERY_BEAT_SCHEDULER`` in console/settings.py, so ``celery -A console beat`` uses it as is.
A heartbeat that cannot be written (Redis down) is logged and the beat goes on.
"""

from __future__ import annotations

import logging
import time
from functools import cache
from typing import Any, cast

import redis
from celery.beat import PersistentScheduler
from django.conf import settings

logger = logging.getLogger(__name__)

# The beat ticks at least every few seconds (the sealer's entry); a write per tick at most this
# often.
WRITE_EVERY_SECONDS = 5.0
# Kept a day: an old heartbeat says how long the beat has been gone.
KEPT_SECONDS = 24 * 60 * 60


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)


def client() -> redis.Redis:
    return _client(settings.REDIS_URL)


def heartbeat_key() -> str:
    return f"{settings.OPS_KEY_PREFIX}:beat-heartbeat"


def heartbeat_write(at: float | None = None) -> None:
    client().set(heartbeat_key(), repr(time.time() if at is None else at), ex=KEPT_SECONDS)


def heartbeat_age() -> float | None:
    """Seconds since the beat's last heartbeat; None when there is none. Raises RedisError."""
    value = client().get(heartbeat_key())
    if value is None:
        return None
    return max(0.0, time.time() - float(cast(bytes, value)))


class HeartbeatScheduler(PersistentScheduler):
    _last_beat = 0.0

    def tick(self, *args: Any, **kwargs: Any) -> float:
        interval: float = super().tick(*args, **kwargs)
        now = time.monotonic()
        if now - self._last_beat >= WRITE_EVERY_SECONDS:
            try:
                heartbeat_write()
                self._last_beat = now
            except redis.RedisError:
                logger.warning("the beat's heartbeat could not be written", exc_info=True)
        return min(interval, WRITE_EVERY_SECONDS)
