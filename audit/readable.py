"""Audit rows as people read them: details as "key: value" pairs instead of a Python dict.

Details are small structured facts (registry.py), so this only spells them out: keys with
spaces, lists joined, booleans as yes/no, nested objects one level deep. Used by the audit log
page and its exports; pure, no query.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _key(key: str) -> str:
    return key.replace("_", " ")


def value_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(v) for v in value) if value else "none"
    if isinstance(value, Mapping):
        return "; ".join(f"{_key(str(k))} {value_text(v)}" for k, v in value.items()) or "none"
    return str(value)


def details_pairs(details: Any) -> list[tuple[str, str]]:
    """``{"page": "list", "filters": []}`` → ``[("page", "list"), ("filters", "none")]``."""
    if not isinstance(details, Mapping):
        return [("details", value_text(details))] if details not in (None, "") else []
    return [(_key(str(k)), value_text(v)) for k, v in details.items()]


def details_text(details: Any) -> str:
    """One line: "page: list · filters: none"."""
    return " · ".join(f"{k}: {v}" for k, v in details_pairs(details))
