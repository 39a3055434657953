"""The field policies in force, cached per process and invalidated through the shared cache.

Every ingest needs the policies, and they change rarely: each process keeps the last table it
read with the version it read it at, and asks the shared cache (Redis) for the current version,
one round trip instead of a query. ``policies_changed`` (called by every policy change, in the
transaction's on-commit) gives the table a new version. Nothing that matters lives in Redis: when
the version key is gone (a flush, a restart), a new one is drawn and every process reads again.
"""

from __future__ import annotations

import threading
import uuid

from django.core.cache import cache

from ..models import FieldPolicy, ToolLink
from .project import Policies, Rule

_VERSION_KEY = "conversations:field-policies:version"
_local = threading.local()


def _version() -> str:
    version = cache.get(_VERSION_KEY)
    if version is None:
        cache.add(_VERSION_KEY, uuid.uuid4().hex, timeout=None)
        version = cache.get(_VERSION_KEY)
    return str(version)


def field_policies(*, fresh: bool = False) -> Policies:
    """The policies in force; ``fresh`` reads the table whatever the cache says (a
    re-projection job must apply the very latest table)."""
    version = _version()
    cached = getattr(_local, "policies", None)
    if not fresh and cached is not None and cached[0] == version:
        return cached[1]
    policies = Policies(
        Rule(p.tool_name, p.block_type, p.side, p.path, p.storage_class)
        for p in FieldPolicy.objects.all()
    )
    _local.policies = (version, policies)
    return policies


def tool_links() -> dict[str, str]:
    return dict(ToolLink.objects.values_list("tool_name", "url_template"))


def policies_changed() -> None:
    """Every process reads the policies again on its next use."""
    cache.set(_VERSION_KEY, uuid.uuid4().hex, timeout=None)
    _local.policies = None
