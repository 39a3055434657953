"""What the console holds of some conversations, store by store, counted: never a value.

``stores_of(ids)`` returns one ``Store`` per place their data lives, in the order of the retention
registry (the tables the erase path removes, named in ``retention.stores.WORDS``), then the
places outside those tables: the search index, Redis, the signals' rollups, the audit log and the
backups. ``reasoning_of_conversations(ids)`` counts the reasoning by kind and size through
``conversations.reviews.held`` (the one room that may read deliberation out of the verbatim
store); no text comes back from it.

To add a store: a model in ``retention/registry.py`` is listed here by itself; a store outside
PostgreSQL's tables gets a ``Store`` in ``stores_of`` and a line in docs/subject-access.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models import CharField, QuerySet
from django.db.models.functions import Cast
from guardian.models import GroupObjectPermission, UserObjectPermission

from conversations.cache_errors import CACHE_ERRORS
from conversations.live import state as live_state
from conversations.models import Block, Conversation, Message
from conversations.projection.classes import CLASSES
from conversations.reviews.held import KINDS, reasoning_held

from .. import registry, stores
from .covered import Covered


@dataclass(frozen=True)
class Store:
    key: str  # a stable name (a model label, or "search", "redis", "rollups", ...)
    name: str  # in words
    where: str  # "PostgreSQL (main)", "PostgreSQL (keys)", "Redis", ...
    rows: int
    # Counts per storage class (DESIGN section 4) where the store holds tool fields; other
    # breakdowns (blocks by class, links by state) under their own names.
    classes: dict[str, int] = field(default_factory=dict)
    detail: dict[str, int] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class Reasoning:
    never_blocks: int  # Block rows of class NEVER (type and nothing else)
    redacted_blocks: int  # of which withheld by the provider
    unknown_blocks: int  # unclassified types, treated as NEVER
    by_kind: dict[str, int]  # raw, summary, encrypted, redacted: pieces of reasoning
    bytes_by_kind: dict[str, int]  # UTF-8 bytes of their text (encrypted/redacted: none)
    where: str = "only inside the encrypted verbatim store (Messages)"


_BLOCKS = f"""
    SELECT
      count(*) FILTER (WHERE block_class = 'visible'),
      count(*) FILTER (WHERE block_class = 'audit'),
      count(*) FILTER (WHERE block_class = 'never'),
      count(*) FILTER (WHERE block_class = 'never' AND redacted),
      count(*) FILTER (WHERE block_class = 'unknown'),
      count(*) FILTER (WHERE block_class = 'visible' AND text <> ''),
      count(*) FILTER (WHERE block_class = 'audit' AND fields ? 'kept'),
      COALESCE(sum(jsonb_array_length(fields -> 'dropped')) FILTER (WHERE fields ? 'dropped'), 0)
    FROM {Block._meta.db_table} WHERE conversation_id = ANY(%s)
"""  # noqa: S608 (the table name is the model's)
_CLASSES = f"""
    SELECT e ->> 'class', count(*)
    FROM {Block._meta.db_table} b CROSS JOIN LATERAL jsonb_array_elements(b.fields -> 'kept') e
    WHERE b.conversation_id = ANY(%s) AND b.block_class = 'audit' AND b.fields ? 'kept'
    GROUP BY 1
"""  # noqa: S608
_BYTES = f"""
    SELECT COALESCE(sum(octet_length(raw_ciphertext)), 0)
    FROM {Message._meta.db_table} WHERE conversation_id = ANY(%s)
"""  # noqa: S608


def _sql(query: str, ids: Sequence[int]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cur:
        cur.execute(query, [list(ids)])
        return list(cur.fetchall())


def _registry_filter(entry: registry.Entry, ids: Covered) -> QuerySet[Any] | None:
    """The registry entry's rows, filtered by the covered subquery: the conversation itself, a
    foreign key to it, a ``conversation_id`` column, or guardian's generic object key. None for
    a shape not known here (then the registry's own function counts it, with the ids)."""
    model = entry.model
    manager = model._default_manager.using(entry.rows([0]).db)
    if model is Conversation:
        return manager.filter(pk__in=ids.q)
    if model in (UserObjectPermission, GroupObjectPermission):
        ct = ContentType.objects.get_for_model(Conversation)
        pks = Conversation.objects.filter(pk__in=ids.q).annotate(
            text=Cast("pk", output_field=CharField())
        )
        return manager.filter(content_type=ct, object_pk__in=pks.values("text"))
    for f in model._meta.concrete_fields:
        if getattr(f, "related_model", None) is Conversation:
            return manager.filter(**{f"{f.name}__in": ids.q})
    if any(f.name == "conversation_id" for f in model._meta.concrete_fields):
        return manager.filter(conversation_id__in=ids.q)
    return None


def registry_counts(ids: Covered) -> dict[str, int]:
    """Rows per registered model (what an erasure would remove), one count each."""
    counts: dict[str, int] = {}
    if not ids:
        return counts
    for entry in registry.ALL:
        if entry is registry.KEYS:  # another database: no subquery across
            counts[entry.label] = entry.rows(ids.ids).count()
            continue
        rows = _registry_filter(entry, ids)
        counts[entry.label] = (rows if rows is not None else entry.rows(ids.ids)).count()
    return counts


# KEYS: n event logs, n open-exchange sets, the "live now" set; ARGV: n, then the n ids. One
# round trip and one command, however many conversations (3,000 pipelined commands cost the
# report a third of a second in redis-py's packing and parsing alone).
_REDIS_COUNTS = """
local n = tonumber(ARGV[1])
local logs, events, opened, now = 0, 0, 0, 0
for i = 1, n do
  local l = redis.call('LLEN', KEYS[i])
  if l > 0 then logs = logs + 1; events = events + l end
  opened = opened + redis.call('SCARD', KEYS[n + i])
  if redis.call('ZSCORE', KEYS[2 * n + 1], ARGV[i + 1]) then now = now + 1 end
end
return {logs, events, opened, now}
"""


def _redis(ids: Sequence[int]) -> dict[str, int]:
    """What Redis holds of their live streams (``conversations.live.state`` names the keys)."""
    found: list[Any] = [0, 0, 0, 0]
    if ids:
        keys = [live_state.key("log", pk) for pk in ids]
        keys += [live_state.key("open", pk) for pk in ids]
        keys.append(live_state.key("now"))
        args = [*keys, str(len(ids)), *map(str, ids)]
        found = cast(list[Any], live_state.client().eval(_REDIS_COUNTS, len(keys), *args))
    logs, events, opened, now = (int(n) for n in found)
    return {"event_logs": logs, "events": events, "open_exchanges": opened, "live_now": now}


def stores_of(
    covered: Covered, *, exports: int, audit_rows: int, backups_until: str
) -> list[Store]:
    """Every store holding these conversations' data, counted. ``exports``: copies made (from
    the audit log); ``audit_rows``: rows of the log naming them; ``backups_until``: the backup
    horizon in words."""
    ids = covered.ids
    counts = registry_counts(covered)
    visible, tools, never, redacted, unknown, indexed_text, indexed_fields, dropped = (
        _sql(_BLOCKS, ids)[0] if ids else (0,) * 8
    )
    kept = {str(cls): 0 for cls in CLASSES}
    for cls, n in _sql(_CLASSES, ids) if ids else []:
        kept[str(cls)] = kept.get(str(cls), 0) + int(n)
    kept["drop"] = int(dropped)  # paths seen and not kept: only the verbatim store has them
    ciphertext = int(_sql(_BYTES, ids)[0][0]) if ids else 0
    out: list[Store] = []
    for row in stores.store_rows(counts, skip_empty=False):
        where = "PostgreSQL (keys)" if row.store == "keys" else "PostgreSQL (main)"
        if row.label == "conversations.block":
            detail = {
                "visible": int(visible),
                "audit": int(tools),
                "never": int(never),
                "never_redacted": int(redacted),
                "unknown": int(unknown),
            }
            out.append(Store(row.label, row.name, where, row.rows, dict(kept), detail))
        elif row.label == "conversations.message":
            note = "encrypted with each conversation's data key; reasoning is held only here"
            out.append(Store(row.label, row.name, where, row.rows, {}, {"bytes": ciphertext}, note))
        else:
            out.append(Store(row.label, row.name, where, row.rows))
    out.append(
        Store(
            "search",
            "Search index (full text of the visible text, kept tool fields)",
            "PostgreSQL (main), inside the Blocks table",
            int(indexed_text) + int(indexed_fields),
            {k: v for k, v in kept.items() if k != "drop"},
            {"visible_text": int(indexed_text), "tool_fields": int(indexed_fields)},
        )
    )
    try:
        redis: dict[str, int] | None = _redis(ids)
    except CACHE_ERRORS:  # Redis down: the report still answers, and says what it could not count
        redis = None
    out.append(
        Store(
            "redis",
            "Live streams (redacted visible events, encrypted held text)",
            "Redis",
            redis["event_logs"] + redis["open_exchanges"] if redis is not None else 0,
            {},
            redis or {},
            "expires on its own; the erase path removes it at once"
            if redis is not None
            else "not counted: Redis did not answer; what it holds expires on its own and the "
            "erase path removes it at once",
        )
    )
    exchanges = int(counts.get("conversations.exchange", 0))
    out.append(
        Store(
            "rollups",
            "Signals rollups (hourly counts and token sums; no id, no text)",
            "PostgreSQL (main)",
            exchanges,
            {},
            {"exchanges_counted": exchanges},
            "aggregates: an erasure subtracts these exchanges' share",
        )
    )
    out.append(
        Store(
            "exports",
            "Exports made (text-only transcripts downloaded or printed)",
            "outside the console (wherever the person put them)",
            exports,
            note="the console keeps no copy; the audit log records each one",
        )
    )
    out.append(
        Store(
            "audit",
            "Audit log rows naming them (internal ids, keyed hash of the customer)",
            "PostgreSQL (main), append-only",
            audit_rows,
            note="kept: it names no external id and no text, so an erasure leaves it whole",
        )
    )
    out.append(
        Store(
            "backups",
            "Backups of the main and keys databases",
            "backup storage",
            0,
            note=f"every backup taken before the erasure holds this data until {backups_until}",
        )
    )
    return out


def reasoning_of_conversations(covered: Covered, stored: list[Store]) -> Reasoning:
    blocks = next((s for s in stored if s.key == "conversations.block"), None)
    detail = blocks.detail if blocks is not None else {}
    by_kind = dict.fromkeys(KINDS, 0)
    sizes = dict.fromkeys(KINDS, 0)
    for trace in reasoning_held(covered.q) if covered else []:
        by_kind[trace.kind] += 1
        sizes[trace.kind] += trace.bytes
    return Reasoning(
        never_blocks=detail.get("never", 0),
        redacted_blocks=detail.get("never_redacted", 0),
        unknown_blocks=detail.get("unknown", 0),
        by_kind=by_kind,
        bytes_by_kind=sizes,
    )
