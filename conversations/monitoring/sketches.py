"""Quantiles with a stated relative error: DDSketch bins (pure, no database).

A sketch counts values in the bins of DDSketch's logarithmic mapping (the ``ddsketch`` package,
``LogarithmicMapping(ALPHA)``): bin ``k`` holds the values in ``(gamma^(k-1), gamma^k]`` with
``gamma = (1 + ALPHA) / (1 - ALPHA)``, and its representative value is within ``ALPHA`` of every
value it holds. So a quantile read from a sketch is within ``ALPHA`` (0.5 %) of the exact one of
the same rank, however many values were counted, where fixed buckets (``buckets.py``) are off by
up to a bucket's width. Reported as a whole number (tokens, milliseconds), it is within ``BOUND``
(1 %): ``ALPHA`` plus half a unit, which is at most another ``ALPHA`` from 100 up; below 100 a
bin holds one whole number, so the quantile is exact.

A sketch is mergeable: it is only counts per bin, so two sketches add bin by bin (the rollups'
upsert does it in PostgreSQL: ``signal_sketch_add``; readers sum the bins of every shard and
hour), and an erased exchange is taken out exactly by subtracting its bin. Stored as JSON:
``{"z": zeros, "<bin>": count, ...}``, bins with a count of zero left out. ``ALPHA`` is part of
the stored form: changing it needs ``rollups_rebuild``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from ddsketch.mapping import LogarithmicMapping

ALPHA = 0.005
BOUND = 2 * ALPHA  # the relative error of a quantile reported as a whole number
ZERO = "z"
_MAPPING = LogarithmicMapping(ALPHA)

Bins = dict[str, int]


def key(value: float) -> str:
    """The bin of a non-negative value (zero, and anything below 1, in ``ZERO``: the values
    counted are whole tokens and milliseconds)."""
    if value < 1:
        return ZERO
    return str(_MAPPING.key(value))


def value(bin_key: str) -> float:
    """The representative value of a bin (within ``ALPHA`` of every value it holds)."""
    if bin_key == ZERO:
        return 0.0
    return float(_MAPPING.value(int(bin_key)))


def add(into: Bins, other: Mapping[str, int], sign: int = 1) -> None:
    """Add (``sign`` -1: take away) ``other``'s counts to ``into``, dropping bins left empty."""
    for k, n in other.items():
        total = into.get(k, 0) + sign * int(n)
        if total:
            into[k] = total
        else:
            into.pop(k, None)


def count_one(into: Bins, value: int, sign: int = 1) -> None:
    """Count one value in (``sign`` -1: out of) ``into``, in place."""
    k = key(value)
    n = into.get(k, 0) + sign
    if n:
        into[k] = n
    else:
        del into[k]


def of(values: Iterable[int | float]) -> Bins:
    """The sketch of some values."""
    out: Bins = {}
    for v in values:
        k = key(v)
        out[k] = out.get(k, 0) + 1
    return out


def _order(bin_key: str) -> float:
    return -math.inf if bin_key == ZERO else int(bin_key)


def quantile(bins: Mapping[str, int], q: float) -> int | None:
    """The q-th percentile (0 < q <= 100) of the values counted, nearest rank (the rank
    ``buckets.exact_percentile`` reads), as the whole number nearest the bin's representative
    value: within ``BOUND`` of the exact value (exact below 100, where a bin is narrower than
    one). None for an empty sketch."""
    total = sum(n for n in bins.values() if n > 0)
    if total <= 0:
        return None
    rank = max(1, math.ceil(q / 100 * total))
    seen = 0
    ordered = sorted((k for k, n in bins.items() if n > 0), key=_order)
    for k in ordered:
        seen += bins[k]
        if seen >= rank:
            return round(value(k))
    return round(value(ordered[-1]))


def count(bins: Mapping[str, int]) -> int:
    return sum(bins.values())
