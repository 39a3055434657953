"""Hourly rollups, kept as exchanges are stored and as they are erased.

One row per hour x queue x requested model x served snapshot (x shard) holds counts, token sums,
finish reasons, fixed log-scale histograms (``buckets.py``: the charts) and DDSketch bins
(``sketches.py``: the quantiles, within 0.5 % of exact), so the model page, the alerts and the
readiness report read percentiles from a few rows however many exchanges there are: both are
counts per bin, so they add across shards, hours and groups, and subtract exactly.

**How a rollup stays right.** Every number an exchange adds is computed by one function,
``contribution``, from columns of its ``Exchange`` row (the counts of ``facts.py`` are stored
there too). Ingest adds it (``rollups_add``: one ``INSERT ... ON CONFLICT DO UPDATE`` per batch,
at the end of the pipeline, in the batch's transaction). Erasure subtracts it, from the same
columns, in the erasing transaction, just before the rows go (``rollups_subtract``, called by
``retention.registry.erase_rows``). So at every commit the rollups equal the aggregate of the
exchanges stored: an erased conversation leaves nothing behind in them, not even a count.
Rollups hold no conversation id and no text. ``rollups_rebuild`` recomputes them from the rows.

Concurrent API ingests of one key would queue on one row lock: a batch adds to one of
``SHARDS`` rows of each key, by its first conversation's id (ingests of one conversation queue
on the conversation's lock anyway), and readers sum the shards. Erasure subtracts from a row the
key already has, so it never creates one; ``rollups_compact`` merges the shards of past hours.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction

from ..keystore.keys import decrypt_message
from ..models import Exchange, Message, Rollup
from . import buckets, sketches
from .facts import FINISHES, finish_kind
from .rewrites import EDITED, KINDS, classify, seen
from .sketches import Bins

if TYPE_CHECKING:
    from django.db.backends.utils import CursorWrapper

    from ..ingest.history import Planned

SHARDS = 8

SUMS = (
    "exchanges",
    "conversations",
    "truncated",
    "truncated_reasoning_tokens",
    "truncated_output_tokens",
    "refusals",
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
    "with_reasoning",
    "tool_calls",
    "repeated_tool_calls",
    "looping",
    "tool_results",
    "tool_errors",
    "rewritten",
    *(f"rewrite_{kind}" for kind in KINDS),
    "cache_lost_tokens",
    "thinking_dropped",
    "thinking_mismatch_allowed",
    "reasoning_estimated",
)
ARRAYS = ("finishes", "output_hist", "reasoning_hist", "latency_hist", "tool_calls_hist")
SKETCHES = ("output_sketch", "latency_sketch", "tool_calls_sketch")
_KEY = ("hour", "queue", "requested_model", "served_model", "shard")
_COLUMNS = (*_KEY, *SUMS, *ARRAYS, *SKETCHES)
_TABLE = Rollup._meta.db_table
_UPSERT = (
    f"INSERT INTO {_TABLE} AS r ({', '.join(_COLUMNS)}) VALUES {{values}} "  # noqa: S608
    f"ON CONFLICT ({', '.join(_KEY)}) DO UPDATE SET "
    + ", ".join(f"{c} = r.{c} + EXCLUDED.{c}" for c in SUMS)
    + ", "
    + ", ".join(f"{c} = signal_add(r.{c}, EXCLUDED.{c})" for c in ARRAYS)
    + ", "
    + ", ".join(f"{c} = signal_sketch_add(r.{c}, EXCLUDED.{c})" for c in SKETCHES)
)
_STORED_RAW = (
    "SELECT m.id, m.role, m.conversation_id, m.sequence, m.raw_ciphertext, e.format "  # noqa: S608
    f"FROM {Message._meta.db_table} m JOIN {Exchange._meta.db_table} e ON e.id = m.exchange_id "
    "WHERE m.id = ANY(%s)"
)
_ROW = (
    "(" + ", ".join(["%s"] * (len(_COLUMNS) - len(SKETCHES)) + ["%s::jsonb"] * len(SKETCHES)) + ")"
)

# The Exchange columns ``contribution`` reads (and the conversation's queue).
FIELDS = (
    "format",
    "started_at",
    "created_at",
    "requested_model",
    "response_model",
    "ordinal",
    "stop_reason",
    "truncated",
    "refusal",
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
    "latency_ms",
    "tool_call_count",
    "repeated_tool_calls",
    "tool_results",
    "tool_errors",
    "rewrite_kind",
    "cache_lost_tokens",
    "input_transformations",
    "reasoning_estimated",
)


@dataclass(slots=True)
class Delta:
    sums: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SUMS, 0))
    arrays: dict[str, list[int]] = field(
        default_factory=lambda: {
            a: [0] * (len(FINISHES) if a == "finishes" else buckets.SIZE) for a in ARRAYS
        }
    )
    sketches: dict[str, Bins] = field(default_factory=lambda: {c: {} for c in SKETCHES})

    def add(self, other: Delta, sign: int = 1) -> None:
        for k, v in other.sums.items():
            self.sums[k] += sign * v
        for k, arr in other.arrays.items():
            mine = self.arrays[k]
            for i, v in enumerate(arr):
                mine[i] += sign * v
        for k, bins in other.sketches.items():
            sketches.add(self.sketches[k], bins, sign)


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


Key = tuple[datetime, str, str, str, int]


def key_of(row: Mapping[str, Any], queue: str, shard: int) -> Key:
    moment = row["started_at"] or row["created_at"]
    return (
        hour_of(moment),
        queue,
        row["requested_model"] or "",
        row["response_model"] or "",
        shard,
    )


def contribution(row: Mapping[str, Any]) -> Delta:
    """What one exchange (its ``FIELDS``) adds to its rollup."""
    d = Delta()
    contribute(d, row)
    return d


def contribute(d: Delta, row: Mapping[str, Any], sign: int = 1) -> None:
    """Add (``sign`` -1: take away) one exchange's share to ``d``, in place: ingest runs this
    per exchange, so it touches only the cells the exchange changes."""
    s, a, sk = d.sums, d.arrays, d.sketches
    s["exchanges"] += sign
    if row["ordinal"] == 1:
        s["conversations"] += sign
    finish = finish_kind(
        row["format"], row["stop_reason"] or "", truncated=row["truncated"], refusal=row["refusal"]
    )
    a["finishes"][finish] += sign
    output = row["output_tokens"]
    reasoning = row["reasoning_tokens"]
    if row["truncated"]:
        s["truncated"] += sign
        s["truncated_reasoning_tokens"] += sign * (reasoning or 0)
        s["truncated_output_tokens"] += sign * (output or 0)
    if row["refusal"]:
        s["refusals"] += sign
    for kind in ("input_tokens", "cache_read_tokens", "cache_write_tokens"):
        if row[kind]:
            s[kind] += sign * row[kind]
    if output is not None:
        s["output_tokens"] += sign * output
        a["output_hist"][buckets.bucket(output)] += sign
        sketches.count_one(sk["output_sketch"], output, sign)
    if reasoning is not None:
        s["reasoning_tokens"] += sign * reasoning
        a["reasoning_hist"][buckets.bucket(reasoning)] += sign
        if reasoning:
            s["with_reasoning"] += sign
    if row["latency_ms"] is not None:
        a["latency_hist"][buckets.bucket(row["latency_ms"])] += sign
        sketches.count_one(sk["latency_sketch"], row["latency_ms"], sign)
    calls = row["tool_call_count"] or 0
    s["tool_calls"] += sign * calls
    a["tool_calls_hist"][buckets.bucket(calls)] += sign
    sketches.count_one(sk["tool_calls_sketch"], calls, sign)
    if row["repeated_tool_calls"]:
        s["repeated_tool_calls"] += sign * row["repeated_tool_calls"]
        s["looping"] += sign
    if row["tool_results"]:
        s["tool_results"] += sign * row["tool_results"]
    if row["tool_errors"]:
        s["tool_errors"] += sign * row["tool_errors"]
    kind = row["rewrite_kind"] or ""
    if kind:
        s["rewritten"] += sign * seen(kind)
        s[f"rewrite_{kind if kind in KINDS else EDITED}"] += sign
    if row["cache_lost_tokens"]:
        s["cache_lost_tokens"] += sign * row["cache_lost_tokens"]
    for entry in row["input_transformations"] or ():
        found = entry.get("type") if isinstance(entry, dict) else None
        if found in ("thinking_dropped", "thinking_mismatch_allowed"):
            s[found] += sign
    if row["reasoning_estimated"]:
        s["reasoning_estimated"] += sign


def _apply(cur: CursorWrapper, deltas: Mapping[Key, Delta]) -> None:
    if not deltas:
        return
    params: list[Any] = []
    for key in sorted(deltas):  # one order for every writer: no deadlock between batches
        d = deltas[key]
        params.extend(key)
        params.extend(d.sums[c] for c in SUMS)
        params.extend(d.arrays[c] for c in ARRAYS)
        params.extend(json.dumps(d.sketches[c]) for c in SKETCHES)
    cur.execute(_UPSERT.format(values=", ".join([_ROW] * len(deltas))), params)


def rollups_add(
    cur: CursorWrapper, planned: Sequence[Planned], values: Sequence[Mapping[str, Any]]
) -> None:
    """Add a stored batch to its rollups (``values``: each planned exchange's row values)."""
    if not planned:
        return
    # One shard for the whole batch (a bulk batch holds its locks to the end anyway; the API's
    # batches of one spread over the shards by conversation).
    shard = planned[0].conversation.pk % SHARDS
    deltas: dict[Key, Delta] = {}
    for p, row in zip(planned, values, strict=True):
        key = key_of(row, p.conversation.queue, shard)
        d = deltas.get(key)
        if d is None:
            d = deltas[key] = Delta()
        contribute(d, row)
    _apply(cur, deltas)


_ROW_FIELDS = (*FIELDS, "conversation__queue", "conversation_id")
_SHARD_OF = (
    f"SELECT DISTINCT ON (hour, queue, requested_model, served_model) "  # noqa: S608
    f"hour, queue, requested_model, served_model, shard FROM {_TABLE} "
    "WHERE (hour, queue, requested_model, served_model) IN "
    "(SELECT * FROM unnest(%s::timestamptz[], %s::text[], %s::text[], %s::text[])) "
    "ORDER BY hour, queue, requested_model, served_model, shard"
)


def _deltas_of(rows: Iterable[Mapping[str, Any]], sign: int = 1) -> dict[Key, Delta]:
    deltas: dict[Key, Delta] = {}
    for row in rows:
        key = key_of(row, row["conversation__queue"], 0)
        d = deltas.get(key)
        if d is None:
            d = deltas[key] = Delta()
        contribute(d, row, sign)
    return deltas


def rollups_subtract(*, conversation_ids: Sequence[int]) -> None:
    """Take these conversations' exchanges out of the rollups (the erase path calls it in its
    transaction, before the rows are deleted)."""
    rows = Exchange.objects.filter(conversation_id__in=list(conversation_ids)).values(*_ROW_FIELDS)
    deltas = _deltas_of(rows, -1)
    if not deltas:
        return
    with connection.cursor() as cur:
        # Into a row each key already has (its lowest shard): the sums are the same whichever
        # shard loses the share, and an erasure adds no row.
        keys = list(deltas)
        cur.execute(_SHARD_OF, [list(col) for col in zip(*(k[:4] for k in keys), strict=True)])
        shards = {tuple(r[:4]): r[4] for r in cur.fetchall()}
        _apply(cur, {(*k[:4], shards.get(k[:4], 0)): d for k, d in deltas.items()})


@transaction.atomic(durable=True)
def rollups_rebuild() -> int:
    """Recompute every rollup from the stored exchanges (after a restore, or to check them)."""
    Rollup.objects.all().delete()
    done = 0
    last = 0
    with connection.cursor() as cur:
        while True:
            chunk = list(
                Exchange.objects.filter(pk__gt=last)
                .order_by("pk")
                .values("pk", *_ROW_FIELDS)[:5000]
            )
            if not chunk:
                return done
            _apply(cur, _deltas_of(chunk))
            done += len(chunk)
            last = chunk[-1]["pk"]


# The keys to merge found first (cheap), then only their rows summed; the sketches' bins in one
# pass of their own (an aggregate merging jsonb row by row costs several times more).
_COMPACT_KEYS = (
    f" FROM {_TABLE} r JOIN (SELECT hour, queue, requested_model, served_model FROM {_TABLE} "  # noqa: S608
    "WHERE hour >= %s AND hour < %s GROUP BY 1, 2, 3, 4 HAVING count(*) > 1 OR min(shard) > 0) k "
    "USING (hour, queue, requested_model, served_model) "
)
_COMPACT_SELECT = (
    "SELECT r.hour, r.queue, r.requested_model, r.served_model, "
    + ", ".join(f"sum(r.{c})" for c in SUMS)
    + ", "
    + ", ".join(f"signal_sum(r.{c})" for c in ARRAYS)
    + _COMPACT_KEYS
    + "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
)
_COMPACT_BINS = (
    "SELECT r.hour, r.queue, r.requested_model, r.served_model, b.c, b.key, sum(b.value::bigint)"  # noqa: S608
    + _COMPACT_KEYS
    + ", LATERAL ("
    + " UNION ALL ".join(
        f"SELECT {n} AS c, key, value FROM jsonb_each_text(r.{c})"  # noqa: S608
        for n, c in enumerate(SKETCHES)
    )
    + ") b GROUP BY 1, 2, 3, 4, 5, 6"
)
_COMPACT_DELETE = (
    f"DELETE FROM {_TABLE} WHERE hour >= %s AND hour < %s "  # noqa: S608
    "AND (hour, queue, requested_model, served_model) IN "
    "(SELECT * FROM unnest(%s::timestamptz[], %s::text[], %s::text[], %s::text[]))"
)


@transaction.atomic
def rollups_compact(*, before: datetime, after: datetime) -> int:
    """Merge the shards of each hour in [after, before) into one row (shard 0): shards spread
    the locks of concurrent ingests, which only the current hours need; a reader of 30 days then
    sums a row per hour, not eight. Late exchanges (and erasures) of a compacted hour add to a
    shard row again, and the next compaction merges it. Returns the keys merged."""
    with connection.cursor() as cur:
        cur.execute(_COMPACT_SELECT, [after, before])
        merged = cur.fetchall()
        if not merged:
            return 0
        cur.execute(_COMPACT_BINS, [after, before])
        bins: dict[tuple[Any, ...], dict[str, Bins]] = {}
        for *key, column, k, n in cur.fetchall():
            if n:
                per = bins.setdefault(tuple(key), {c: {} for c in SKETCHES})
                per[SKETCHES[column]][k] = int(n)
        keys = [tuple(r[:4]) for r in merged]
        cur.execute(
            _COMPACT_DELETE, [after, before, *(list(col) for col in zip(*keys, strict=True))]
        )
        deltas: dict[Key, Delta] = {}
        for r in merged:
            d = Delta()
            d.sums = {c: int(v or 0) for c, v in zip(SUMS, r[4 : 4 + len(SUMS)], strict=True)}
            d.arrays = {c: list(v) for c, v in zip(ARRAYS, r[4 + len(SUMS) :], strict=True)}
            d.sketches = bins.get(tuple(r[:4]), {c: {} for c in SKETCHES})
            deltas[(r[0], r[1], r[2], r[3], 0)] = d
        _apply(cur, deltas)
    return len(merged)


def rewrites_classify(
    cur: CursorWrapper, planned: Sequence[Planned], keys: Mapping[int, bytes]
) -> None:
    """Classify each rewritten history of the batch (``rewrites.classify``), reading the stored
    messages from the rewritten position on. A rewrite is rare: this costs one query when the
    batch has any, none otherwise."""
    rewritten = [p for p in planned if p.plan.rewritten_at is not None]
    if not rewritten:
        return
    ids = sorted({r for p in rewritten for r in p.plan.rewritten_rows if isinstance(r, int)})
    stored: dict[int, tuple[str, int, int, bytes, str]] = {}
    if ids:
        cur.execute(_STORED_RAW, [ids])
        for pk, role, conversation_id, sequence, sealed, fmt in cur.fetchall():
            stored[pk] = (role, conversation_id, sequence, sealed, fmt)
    for p in rewritten:
        at = p.plan.rewritten_at
        assert at is not None
        raws: list[tuple[str, str, str]] = []
        for r in p.plan.rewritten_rows:
            if isinstance(r, int):
                role, conversation_id, sequence, sealed, fmt = stored[r]
                key = keys[conversation_id]
                raws.append((role, decrypt_message(key, conversation_id, sequence, sealed), fmt))
            else:
                raws.append((r.message.role, r.message.raw, r.format))
        p.plan.rewrite_kind = classify(p.data.format, p.parsed.history[at:], raws)
