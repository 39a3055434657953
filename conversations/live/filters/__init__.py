"""The inbound filters: the engine (``base.py``, shared by every format) and each format's live
filter, read from the format registry (``formats/<name>/live.py``): a format registered is a
format that can be watched live."""

from __future__ import annotations

from typing import Any

from ...formats import formats, get
from ...formats.live import LiveFilter
from .base import Event, Filter

# Format name -> its live filter, for every registered format.
FILTERS: dict[str, LiveFilter] = {f.name: f.live for f in formats()}


def filter_for(fmt: str, state: dict[str, Any] | None = None) -> Filter:
    found = get(fmt)
    return Filter(found.live, state, inline=found.profile.inline)


__all__ = ["FILTERS", "Event", "Filter", "filter_for"]
