"""Fixtures of other rooms the operations tests use: the real Celery beat of the retention tests
(a private Redis database, a flushed queue), the console's world, the live streams' prefix."""

from tests.console.conftest import world
from tests.live.conftest import live_prefix
from tests.retention.conftest import clock, private_redis

__all__ = ["clock", "live_prefix", "private_redis", "world"]
