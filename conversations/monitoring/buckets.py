"""Fixed log-scale buckets: the histograms every rollup keeps (pure, no database).

Bucket 0 holds zero; bucket k >= 1 holds the values v with ``floor(2 * log2(v)) == k - 1``, so each
bucket spans a factor of sqrt(2) (about 41 %). Percentiles read from a histogram are the upper
edge of the bucket holding the rank: never below the exact percentile, at most one bucket above.
The edges never change (a rollup written last year adds to one written today); ``SIZE`` covers
every value a 32-bit column holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

SIZE = 64


def bucket(value: int) -> int:
    """The bucket of a non-negative value."""
    if value <= 0:
        return 0
    # Exact for powers of two (bit_length), then the half step by comparing squares.
    k = value.bit_length() - 1  # 2^k <= value < 2^(k+1)
    half = 2 * k + (1 if value * value >= 2 ** (2 * k + 1) else 0)
    return min(half + 1, SIZE - 1)


def upper(index: int) -> int:
    """The largest value bucket ``index`` holds."""
    if index <= 0:
        return 0
    # bucket k holds [ceil(2^((k-1)/2)), ceil(2^(k/2)) - 1]
    return max(math.ceil(2 ** (index / 2)) - 1, 1)


def lower(index: int) -> int:
    """The smallest value bucket ``index`` holds."""
    if index <= 0:
        return 0
    return upper(index - 1) + 1


def empty() -> list[int]:
    return [0] * SIZE


def percentile(hist: Sequence[int], q: float) -> int | None:
    """The q-th percentile (0 < q <= 100) of the values counted in ``hist``: the upper edge of the
    bucket holding the nearest rank. None for an empty histogram."""
    total = sum(hist)
    if total == 0:
        return None
    rank = max(1, math.ceil(q / 100 * total))
    seen = 0
    for index, count in enumerate(hist):
        seen += count
        if seen >= rank:
            return upper(index)
    return upper(len(hist) - 1)


def exact_percentile(values: Sequence[int], q: float) -> int | None:
    """The nearest-rank percentile of the values themselves (what the buckets approximate)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def add(into: list[int], other: Sequence[int]) -> None:
    for i, n in enumerate(other):
        into[i] += n
