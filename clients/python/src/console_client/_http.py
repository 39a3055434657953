"""The SDK's HTTP library: ``httpx2`` (anthropic >= 1.0, openai >= 3.0) or ``httpx`` (older).

The two have the same API under different import names, and their objects do not mix (an SDK
built on httpx2 refuses an httpx transport). So a transport wrapping an SDK client's own is built
from that client's library (``library_of``). The client's own requests to the console do not use
either (``_wire.py``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

NAMES = ("httpx2", "httpx")


def library_of(http_client: Any) -> ModuleType | None:
    """The library an ``httpx2.Client``/``httpx.Client`` (or async one) comes from, else None."""
    for cls in type(http_client).__mro__:
        root = getattr(cls, "__module__", "").partition(".")[0]
        if root in NAMES and cls.__name__ in ("Client", "AsyncClient"):
            return importlib.import_module(root)
    return None
