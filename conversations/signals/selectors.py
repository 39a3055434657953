"""Rollups summed: over shards, hours and whatever the reader groups by (one query)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from . import buckets
from .models import Rollup
from .rollups import ARRAYS, SUMS

_TABLE = Rollup._meta.db_table
_GROUPS = {"queue", "served_model", "requested_model", "hour"}


@dataclass
class Sums:
    """Summed rollup columns of one group."""

    group: dict[str, Any]
    sums: dict[str, int]
    arrays: dict[str, list[int]]

    def __getitem__(self, key: str) -> int:
        return self.sums[key]

    def rate(self, part: str, whole: str = "exchanges") -> float:
        return self.sums[part] / self.sums[whole] if self.sums[whole] else 0.0

    def pct(self, hist: str, q: float) -> int | None:
        return buckets.percentile(self.arrays[hist], q)


def rollups_summed(
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    queue: str | None = None,
    queues: list[str] | None = None,
    snapshot: str | None = None,
    requested: str | None = None,
    group_by: tuple[str, ...] = (),
) -> list[Sums]:
    """The rollups matching the filters, summed per group (``group_by`` of ``_GROUPS``)."""
    assert set(group_by) <= _GROUPS
    where: list[str] = ["true"]
    params: list[Any] = []
    if since is not None:
        where.append("hour >= %s")
        params.append(since)
    if until is not None:
        where.append("hour < %s")
        params.append(until)
    if queue is not None:
        where.append("queue = %s")
        params.append(queue)
    if queues is not None:
        where.append("queue = ANY(%s)")
        params.append(queues)
    if snapshot is not None:
        where.append("served_model = %s")
        params.append(snapshot)
    if requested is not None:
        where.append("requested_model = %s")
        params.append(requested)
    cols = [*group_by, *(f"sum({c})" for c in SUMS), *(f"signal_sum({c})" for c in ARRAYS)]
    sql = f"SELECT {', '.join(cols)} FROM {_TABLE} WHERE {' AND '.join(where)}"  # noqa: S608
    if group_by:
        sql += f" GROUP BY {', '.join(group_by)} ORDER BY {', '.join(group_by)}"
    with connection.cursor() as cur:
        cur.execute(sql, params)
        rows = cur.fetchall()
    out = []
    n = len(group_by)
    for row in rows:
        sums = {c: int(v or 0) for c, v in zip(SUMS, row[n : n + len(SUMS)], strict=True)}
        if not group_by and not sums["exchanges"] and row[n + len(SUMS)] is None:
            continue
        arrays = {
            c: [int(x) for x in (v or [])] or [0] * buckets.SIZE
            for c, v in zip(ARRAYS, row[n + len(SUMS) :], strict=True)
        }
        out.append(Sums(dict(zip(group_by, row[:n], strict=True)), sums, arrays))
    return out
