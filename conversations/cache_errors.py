"""What a read or write of the shared cache (Redis) raises when Redis cannot answer: the
callers that treat the cache as an optimisation catch these and go to the database (the field
policies' version, the list page's choices, the live close of an exchange's POST). Nothing that
matters lives in Redis, so its outage must not fail an ingest or a page."""

from __future__ import annotations

import redis

CACHE_ERRORS: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
