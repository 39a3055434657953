"""Fixtures of the retention tests: a private Redis database and the real clock's processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.retention.clock import Clock, private_redis_url


@pytest.fixture
def private_redis() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(private_redis_url())
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
def clock(tmp_path: Path, private_redis: redis.Redis) -> Iterator[Clock]:
    clock = Clock(tmp_path)
    try:
        yield clock
    finally:
        clock.stop()
