"""Fixtures of other rooms the operations tests use: the real Celery beat of the retention tests
(a private Redis database, a flushed queue) and the console's world."""

from tests.console.conftest import world
from tests.retention.conftest import clock, private_redis

__all__ = ["clock", "private_redis", "world"]
