"""Selectors of the signals: rollups summed over shards, hours and whatever the reader groups by
(three statements: the counts, the histograms, the sketches' bins). The pages' audited
selectors, which call these, are ``audited.py``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from ...models import Rollup
from .. import buckets, sketches
from ..facts import FINISHES
from ..rollups import ARRAYS, SKETCHES, SUMS
from ..sketches import Bins

_TABLE = Rollup._meta.db_table
_GROUPS = {"queue", "served_model", "requested_model", "hour"}


@dataclass
class Sums:
    """Summed rollup columns of one group."""

    group: dict[str, Any]
    sums: dict[str, int]
    arrays: dict[str, list[int]]
    sketches: dict[str, Bins]

    def __getitem__(self, key: str) -> int:
        return self.sums[key]

    def rate(self, part: str, whole: str = "exchanges") -> float:
        return self.sums[part] / self.sums[whole] if self.sums[whole] else 0.0

    def pct(self, name: str, q: float) -> int | None:
        """The q-th percentile of ``name`` (output, latency, tool_calls): from its sketch,
        within ``sketches.BOUND`` of exact."""
        return sketches.quantile(self.sketches[f"{name}_sketch"], q)

    @classmethod
    def merged(cls, groups: list[Sums]) -> Sums:
        """Several groups' sums as one (sketches merge bin by bin, like the counts)."""
        total = cls(
            {},
            dict.fromkeys(SUMS, 0),
            {c: [0] * (len(FINISHES) if c == "finishes" else buckets.SIZE) for c in ARRAYS},
            {c: {} for c in SKETCHES},
        )
        for g in groups:
            for k, v in g.sums.items():
                total.sums[k] += v
            for k, arr in g.arrays.items():
                buckets.add(total.arrays[k], arr)
            for k, bins in g.sketches.items():
                sketches.add(total.sketches[k], bins)
        return total


def rollups_summed(
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    queue: str | None = None,
    queues: list[str] | None = None,
    snapshot: str | None = None,
    requested: str | None = None,
    group_by: tuple[str, ...] = (),
    bins_of: tuple[str, ...] = SKETCHES,
) -> list[Sums]:
    """The rollups matching the filters, summed per group (``group_by`` of ``_GROUPS``); the
    sketches ``bins_of`` names are read (the others left empty: an alert on a share reads
    none)."""
    assert set(group_by) <= _GROUPS and set(bins_of) <= set(SKETCHES)
    filters: tuple[tuple[str, Any], ...] = (
        ("hour >= %s", since),
        ("hour < %s", until),
        ("queue = %s", queue),
        ("queue = ANY(%s)", queues),
        ("served_model = %s", snapshot),
        ("requested_model = %s", requested),
    )
    where = ["true", *(condition for condition, value in filters if value is not None)]
    params = [value for _, value in filters if value is not None]
    where_sql = " AND ".join(where)
    keys = ", ".join(group_by)
    # Two statements: the counts summed per group, then the histograms, element by element
    # (unnest WITH ORDINALITY: one pass, several times faster than an array-valued aggregate).
    sums_sql = (
        f"SELECT {keys + ', ' if keys else ''}{', '.join(f'sum({c})' for c in SUMS)} "  # noqa: S608
        f"FROM {_TABLE} WHERE {where_sql}" + (f" GROUP BY {keys} ORDER BY {keys}" if keys else "")
    )
    u = ", ".join(f"u{n}" for n in range(len(ARRAYS)))
    arrays_sql = (
        f"SELECT {keys + ', ' if keys else ''}u.i, {', '.join(f'sum(u{n})' for n in range(len(ARRAYS)))} "  # noqa: S608, E501
        f"FROM {_TABLE}, unnest({', '.join(ARRAYS)}) WITH ORDINALITY AS u({u}, i) "
        f"WHERE {where_sql} GROUP BY {keys + ', ' if keys else ''}u.i"
    )
    # The sketches' bins summed per group: one pass over each row's bins (jsonb_each_text).
    bins_sql = (
        f"SELECT {keys + ', ' if keys else ''}b.c, b.key, sum(b.value::bigint) "  # noqa: S608
        f"FROM {_TABLE}, LATERAL ("
        + " UNION ALL ".join(
            f"SELECT {SKETCHES.index(c)} AS c, key, value FROM jsonb_each_text({c})"  # noqa: S608
            for c in bins_of
        )
        + f") b WHERE {where_sql} GROUP BY {keys + ', ' if keys else ''}b.c, b.key"
    )
    with connection.cursor() as cur:
        cur.execute(sums_sql, params)
        rows = cur.fetchall()
        cur.execute(arrays_sql, params)
        cells = cur.fetchall()
        found = []
        if bins_of:
            cur.execute(bins_sql, params)
            found = cur.fetchall()
    n = len(group_by)
    arrays: dict[tuple[Any, ...], dict[str, list[int]]] = {}
    for cell in cells:
        key, index = tuple(cell[:n]), cell[n] - 1
        per = arrays.setdefault(
            key, {c: [0] * (len(FINISHES) if c == "finishes" else buckets.SIZE) for c in ARRAYS}
        )
        for c, v in zip(ARRAYS, cell[n + 1 :], strict=True):
            if v is not None and index < len(per[c]):
                per[c][index] = int(v)
    bins: dict[tuple[Any, ...], dict[str, Bins]] = {}
    for cell in found:
        key, column, count = tuple(cell[:n]), SKETCHES[cell[n]], int(cell[n + 2])
        if count:
            per_bins = bins.setdefault(key, {c: {} for c in SKETCHES})
            per_bins[column][cell[n + 1]] = count
    out = []
    for row in rows:
        sums = {c: int(v or 0) for c, v in zip(SUMS, row[n:], strict=True)}
        key = tuple(row[:n])
        if key not in arrays:
            continue  # no row matched (an aggregate without GROUP BY still returns one)
        group = dict(zip(group_by, key, strict=True))
        out.append(Sums(group, sums, arrays[key], bins.get(key, {c: {} for c in SKETCHES})))
    return out


def rollup_tokens_by_day(
    *, since: datetime, queues: list[str], zone: str
) -> list[tuple[Any, str, str, str, int, int, int, int]]:
    """The tokens of the rollups since ``since`` in ``queues``, per day (in time zone ``zone``),
    queue, snapshot and model asked for: (day, queue, served, requested, input, cache read,
    cache write, output). One statement over the rollups, never over the exchanges."""
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT (hour AT TIME ZONE %s)::date AS day, queue, served_model, requested_model, "  # noqa: S608
            "sum(input_tokens), sum(cache_read_tokens), sum(cache_write_tokens), "
            f"sum(output_tokens) FROM {_TABLE} WHERE hour >= %s AND queue = ANY(%s) "
            "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2",
            [zone, since, queues],
        )
        return [(*row[:4], *(int(v or 0) for v in row[4:])) for row in cur.fetchall()]
