"""The field policies in force, cached per process and invalidated through the shared cache.

Every ingest needs the policies, and they change rarely: each process keeps the last table it
read with the version it read it at, and asks the shared cache (Redis) for the current version,
one round trip instead of a query. ``policies_changed`` (called by every policy change, in the
transaction's on-commit) gives the table a new version. Nothing that matters lives in Redis: when
the version key is gone (a flush, a restart), a new one is drawn and every process reads again;
while Redis cannot be read at all, every use reads the table.
"""

from __future__ import annotations

import contextlib
import threading
import uuid

from django.core.cache import cache

from ..cache_errors import CACHE_ERRORS
from ..models import FieldPolicy, ToolLink
from .project import Policies, Rule

_VERSION_KEY = "conversations:field-policies:version"
_local = threading.local()


def _version() -> str | None:
    """The table's version in the shared cache; None when the cache cannot be read (Redis down:
    the caller reads the table, the cache being an optimisation, never a dependency)."""
    try:
        version = cache.get(_VERSION_KEY)
        if version is None:
            cache.add(_VERSION_KEY, uuid.uuid4().hex, timeout=None)
            version = cache.get(_VERSION_KEY)
    except CACHE_ERRORS:
        return None
    return None if version is None else str(version)


def field_policies(*, fresh: bool = False) -> Policies:
    """The policies in force; ``fresh`` reads the table whatever the cache says (a
    re-projection job must apply the very latest table), as does a process that cannot read
    the version (the table may have changed unseen)."""
    version = _version()
    cached = getattr(_local, "policies", None)
    if not fresh and version is not None and cached is not None and cached[0] == version:
        return cached[1]
    policies = Policies(
        Rule(p.tool_name, p.block_type, p.side, p.path, p.storage_class)
        for p in FieldPolicy.objects.all()
    )
    _local.policies = None if version is None else (version, policies)
    return policies


def tool_links() -> dict[str, str]:
    return dict(ToolLink.objects.values_list("tool_name", "url_template"))


def policies_changed() -> None:
    """Every process reads the policies again on its next use. With the cache down, the version
    is deleted when it comes back (``CACHE_ERRORS``: nothing to do meanwhile, as every process
    reads the table while it cannot read the version)."""
    _local.policies = None
    with contextlib.suppress(*CACHE_ERRORS):
        cache.set(_VERSION_KEY, uuid.uuid4().hex, timeout=None)
