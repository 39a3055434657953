"""A fixed-window counter in the shared cache (Redis): the share page's rate limit.

``cache.add`` starts a window (a no-op if one runs), ``cache.incr`` counts atomically in Redis,
so every process of every host counts into one number. The key names the window and a hash of
what is limited (a client address, a link), never the value itself. Nothing that matters lives
there: a flush only resets the windows.
"""

from __future__ import annotations

import hashlib
import time

from django.core.cache import cache


def hit(scope: str, who: str, *, limit: int, window: int) -> bool:
    """Count one request; False once ``limit`` requests came in this ``window`` seconds."""
    slot = int(time.time()) // window
    digest = hashlib.sha256(who.encode("utf-8")).hexdigest()[:32]
    key = f"ratelimit:{scope}:{slot}:{digest}"
    cache.add(key, 0, timeout=window + 1)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=window + 1)
        count = 1
    return count <= limit
