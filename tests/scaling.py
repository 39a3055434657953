"""How a cost grows with its input, measured in one run (no time bound: a ratio).

``growth(work, small, large)`` is the CPU time of ``work(large)`` over that of ``work(small)``,
each the fastest of a few runs, with the garbage collector off while they run: for inputs ten
times apart, linear work gives about 10, quadratic about 100. Tests assert a wide band around the
linear figure, so a loaded machine (another process's CPU does not count in this process's CPU
time) does not fail them, and a quadratic slip does.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _cost(work: Callable[[T], object], value: T, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        work(value)
        best = min(best, time.process_time() - started)
    return best


def growth(work: Callable[[T], object], small: T, large: T, *, repeat: int = 3) -> float:
    enabled = gc.isenabled()
    gc.disable()
    try:
        work(small)  # warm caches (compiled regexes, imports) before anything is measured
        return _cost(work, large, repeat) / max(_cost(work, small, repeat), 1e-6)
    finally:
        if enabled:
            gc.enable()
