"""Random JSON at any position of a sample document, for the formats' fuzz tests: every path into
the document, and a copy of it with one path's value replaced (or deleted)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

# Small JSON values of every type, the random value a fuzz test puts at a path.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (object keys and array indices), depth first, ``prefix`` (the
    value itself) first."""
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += paths(child, (*prefix, i))
    return out


def replaced(value: Any, path: tuple[Any, ...], new: Any, *, delete: bool = False) -> Any:
    """A copy of ``value`` with ``new`` at ``path`` (``delete``: with the member or element at
    ``path`` removed); ``new`` itself for the empty path."""
    if not path:
        return new
    value = copy.deepcopy(value)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return value
