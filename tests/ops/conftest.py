"""The real Celery beat of the retention tests (a private Redis database, a flushed queue)."""

from tests.retention.conftest import clock, private_redis

__all__ = ["clock", "private_redis"]
