"""Stage 5 of ingest: the batch written (and, before matching, the conversations locked and what
they hold read). The only module of ingest that talks SQL; it decides nothing, it stores what the
stages before it decided.

A batch shares one transaction, one lookup of what its conversations already hold, one query of
the tool names it needs, one round trip drawing the ids of its new rows, and one COPY per table
(or, for the API's batch of one, one pipelined round trip of INSERTs).

Why not the ORM here: for a batch of 500 exchanges, building model instances and compiling
``bulk_create`` for the conversations and exchanges cost more than PostgreSQL took to store every
row of the batch (``bench/ingest_bulk.py``). Ids are drawn from the tables' own sequences before
the COPYs, so messages name their exchange and blocks their message without reading anything
back, and rows the API writes at the same time take other ids.

A column added to ``Exchange`` is written from ``project.exchange_fields`` or, when absent there,
from the field's default (as the ORM would); a column added to ``Message`` or ``Block`` must be
added to ``_MESSAGE_COLUMNS`` / ``_BLOCK_COLUMNS`` below.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import models, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import F
from django.utils import timezone

from ..branches import Node
from ..models import Block, Conversation, Exchange, Message, Queue, UnknownBlockType
from .body import ExchangeInput, queue_of
from .history import ConversationState, ExchangeMeta, Hashes, Planned
from .project import Projected, exchange_fields, message_role

_MESSAGE_COLUMNS = (
    "id",
    "conversation_id",
    "exchange_id",
    "sequence",
    "role",
    "from_response",
    "superseded",
    "raw_ciphertext",
    "sha256",
    "canonical_sha256",
    "alternate_sha256",
    "prompt_sha256",
    "created_at",
)
_BLOCK_COLUMNS = (
    "message_id",
    "conversation_id",
    "position",
    "provider_type",
    "block_class",
    "text",
    "tool_name",
    "call_id",
    "is_error",
    "status",
    "fields",
    "redacted",
)
# Every Exchange column, with whether it holds JSON and the value the ORM would default it to.
_EXCHANGE_COLUMNS = tuple(
    (f.attname, isinstance(f, models.JSONField), f.get_default())
    for f in Exchange._meta.concrete_fields
)

# The statements, built once. Table and column names come from the models, never from input.
_CONVERSATIONS = Conversation._meta.db_table
_MESSAGES = Message._meta.db_table
# Creates the batch's new conversations and locks them all, in one statement: ON CONFLICT DO
# UPDATE takes the row lock of an existing conversation (the no-op update is the price), and
# xmax = 0 tells a row inserted now. Rows are taken in external id order, so two batches
# sharing conversations lock them in the same order.
_UPSERT_CONVERSATIONS = f"""
    INSERT INTO {_CONVERSATIONS} AS c (external_id, customer_external_id, queue, labels,
                                       message_count, exchange_count, created_at, last_activity_at)
    SELECT v.e, v.c, v.q, v.l::jsonb, 0, 0, %s, %s
    FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS v(e, c, q, l)
    ORDER BY v.e
    ON CONFLICT (external_id) DO UPDATE SET external_id = c.external_id
    RETURNING c.id, c.external_id, c.customer_external_id, c.exchange_count, (c.xmax = 0), c.queue
"""  # noqa: S608
# In name order: two batches adding the same new queues wait on each other, never deadlock.
_UPSERT_QUEUES = (
    f"INSERT INTO {Queue._meta.db_table} (name, created_at) "  # noqa: S608
    "SELECT name, now() FROM (SELECT DISTINCT unnest(%s::text[]) AS name) q ORDER BY name "
    "ON CONFLICT (name) DO NOTHING"
)
# Queue names this process has seen committed: their rows exist, no need to ask again (until a
# queue is deleted: ``known_queues_forget``, on every Queue deletion; conversations/apps.py).
_known_queues: set[str] = set()


def known_queues_forget(**_: object) -> None:
    """Forget the queues seen: the next batch naming one upserts its row again."""
    _known_queues.clear()


_STORED_MESSAGES = (
    "SELECT m.conversation_id, m.id, m.sequence, m.sha256, m.canonical_sha256, "  # noqa: S608
    "m.alternate_sha256, m.prompt_sha256, m.role, m.from_response, e.format "
    f"FROM {_MESSAGES} m JOIN {Exchange._meta.db_table} e ON e.id = m.exchange_id "
    "WHERE m.conversation_id = ANY(%s) ORDER BY m.conversation_id, m.sequence"
)
# Every exchange's path (branches.py) and what conformance compares the next one with.
_EXCHANGES = (
    "SELECT conversation_id, ordinal, path_parent, path_kept, path_added, branch, "  # noqa: S608
    "branched_at, format, prefix_sha256, cache_read_tokens, cache_write_tokens, response_id "
    f"FROM {Exchange._meta.db_table} WHERE conversation_id = ANY(%s) "
    "ORDER BY conversation_id, ordinal"
)
_TOOL_NAMES = (
    f"SELECT conversation_id, call_id, tool_name FROM {Block._meta.db_table} "  # noqa: S608
    "WHERE conversation_id = ANY(%s) AND call_id = ANY(%s) AND tool_name <> ''"
)
_SUPERSEDE = f"UPDATE {_MESSAGES} SET superseded = true WHERE id = ANY(%s)"  # noqa: S608
_NEXT_IDS = """
    SELECT ARRAY(SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)),
           ARRAY(SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s))
"""
# The three tables a batch adds rows to, in the order they are written.
_TABLES = (
    (Exchange._meta.db_table, tuple(c[0] for c in _EXCHANGE_COLUMNS)),
    (_MESSAGES, _MESSAGE_COLUMNS),
    (Block._meta.db_table, _BLOCK_COLUMNS),
)
_INSERTS = {
    table: f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"  # noqa: S608
    for table, columns in _TABLES
}
# Below this many rows, one pipelined round trip of INSERTs beats COPY's three per table.
_COPY_FROM_ROWS = 300
_UPDATE_COUNTERS = f"""
    UPDATE {_CONVERSATIONS} AS c
    SET message_count = c.message_count + v.m,
        exchange_count = c.exchange_count + v.e,
        tool_call_count = c.tool_call_count + v.t,
        output_tokens = c.output_tokens + v.o,
        slowest_ms = GREATEST(c.slowest_ms, v.l),
        any_truncated = c.any_truncated OR v.ft,
        any_refusal = c.any_refusal OR v.fr,
        any_rewritten = c.any_rewritten OR v.fw,
        -- activity is when the exchanges happened (started_at), not when they were stored
        last_activity_at = CASE WHEN c.exchange_count = 0 THEN v.a
                                ELSE GREATEST(c.last_activity_at, v.a) END
    FROM unnest(%s::bigint[], %s::int[], %s::int[], %s::int[], %s::timestamptz[],
                %s::bool[], %s::bool[], %s::bool[], %s::bigint[], %s::int[])
         AS v(id, m, e, t, a, ft, fr, fw, o, l)
    WHERE c.id = v.id
"""  # noqa: S608


def _json(value: Any) -> str:
    # Most projected blocks keep no fields: skip the encoder for the empty object.
    if isinstance(value, dict) and not value:
        return "{}"
    return json.dumps(value, ensure_ascii=False)


def lock_conversations(
    cur: CursorWrapper, inputs: Sequence[ExchangeInput], now: datetime
) -> dict[str, ConversationState]:
    """The batch's conversations, created if new, locked in id order (as the API locks one), with
    the messages they hold."""
    first_seen: dict[str, ExchangeInput] = {}
    for data in inputs:
        first_seen.setdefault(data.conversation, data)
    queues = {queue_of(d.labels) for d in first_seen.values()} - {""} - _known_queues
    if queues:
        # A queue exists as soon as a conversation names it, so admins can grant it.
        cur.execute(_UPSERT_QUEUES, [sorted(queues)])
        transaction.on_commit(lambda: _known_queues.update(queues))
    cur.execute(
        _UPSERT_CONVERSATIONS,
        [
            now,
            now,
            list(first_seen),
            [d.customer for d in first_seen.values()],
            [queue_of(d.labels) for d in first_seen.values()],
            [_json(d.labels) for d in first_seen.values()],
        ],
    )
    conversations = {}
    created = set()
    for pk, ext, customer, exchanges, inserted, queue in cur.fetchall():
        conversations[ext] = ConversationState(pk, customer, exchanges, queue)
        if inserted:
            created.add(pk)
    # A conversation created just now holds no message yet: only the others are looked up.
    existing = {c.pk: c for c in conversations.values() if c.pk not in created}
    if existing:
        cur.execute(_STORED_MESSAGES, [list(existing)])
        for (
            conversation_id,
            message_id,
            sequence,
            raw_hash,
            canonical,
            alts,
            prompt,
            role,
            from_response,
            fmt,
        ) in cur.fetchall():
            hashes = Hashes(raw_hash, canonical, tuple(alts or ()), prompt or "")
            existing[conversation_id].stored(sequence, message_id, hashes, role, from_response, fmt)
        cur.execute(_EXCHANGES, [list(existing)])
        for (
            conversation_id,
            ordinal,
            parent,
            kept,
            added,
            branch,
            branched_at,
            fmt,
            prefix,
            read,
            written,
            response_id,
        ) in cur.fetchall():
            cached = None if (read, written) == (None, None) else (read or 0) + (written or 0)
            existing[conversation_id].exchange(
                Node(ordinal, parent, kept, tuple(added or ()), branch, branched_at),
                ExchangeMeta(fmt, prefix or "", cached, response_id or ""),
            )
    return conversations


def stored_tool_names(
    cur: CursorWrapper, wanted: set[tuple[int, str]]
) -> dict[tuple[int, str], str]:
    """The tool names of calls stored before the batch, by (conversation, call id)."""
    if not wanted:
        return {}
    cur.execute(_TOOL_NAMES, [sorted({c for c, _ in wanted}), sorted({call for _, call in wanted})])
    names: dict[tuple[int, str], str] = {}
    for conversation_id, call_id, tool_name in cur.fetchall():
        if (conversation_id, call_id) in wanted:
            names.setdefault((conversation_id, call_id), tool_name)
    return names


def supersede(cur: CursorWrapper, message_ids: Sequence[int]) -> None:
    """Stored messages that stop being current (kept, for replay of what was received)."""
    if message_ids:
        cur.execute(_SUPERSEDE, [list(message_ids)])


def next_ids(cur: CursorWrapper, exchanges: int, messages: int) -> tuple[list[int], list[int]]:
    """Ids for the batch's exchanges and messages, from the tables' sequences, in one round trip."""
    cur.execute(_NEXT_IDS, [Exchange._meta.db_table, exchanges, Message._meta.db_table, messages])
    exchange_ids, message_ids = cur.fetchone()
    return exchange_ids, message_ids


def exchange_facts(p: Planned, now: datetime) -> dict[str, Any]:
    """What a planned exchange states of itself: the parsed exchange's fields and the plan's
    counts. The one list both the exchange's row (``write_batch``) and the hourly rollups
    (``monitoring.rollups.FIELDS``, through the pipeline) read."""
    plan = p.plan
    return {
        **exchange_fields(p.data, p.parsed),
        "created_at": now,
        "ordinal": p.ordinal,
        "tool_call_count": plan.tool_call_count,
        "repeated_tool_calls": plan.repeated_tool_calls,
        "tool_results": plan.tool_results,
        "tool_errors": plan.tool_errors,
        "rewrite_kind": plan.rewrite_kind,
        "cache_lost_tokens": plan.cache_lost_tokens,
    }


def write_batch(
    cur: CursorWrapper,
    planned: Sequence[Planned],
    projected: Projected,
    sealed: tuple[list[bytes], list[list[bytes]]],
    ids: tuple[list[int], list[int]],
    now: datetime,
) -> int:
    """Add the batch's exchanges, messages and blocks; returns the blocks written."""
    exchange_ids, message_ids = ids
    settings, messages = sealed
    exchange_rows = []
    message_rows: list[tuple[Any, ...]] = []
    block_rows: list[tuple[Any, ...]] = []
    unused_message_ids = iter(message_ids)
    for i, p in enumerate(planned):
        exchange_id = exchange_ids[i]
        conversation_id = p.conversation.pk
        node = p.plan.node
        assert node is not None  # set when its conversation added it (history.plan_batch)
        values = {
            **exchange_facts(p, now),
            "id": exchange_id,
            "conversation_id": conversation_id,
            "settings_ciphertext": settings[i],
            "history_rewritten": p.plan.rewritten_at is not None,
            "path_parent": node.parent,
            "path_kept": node.kept,
            "path_added": list(node.added),
            "branch": node.branch,
            "branched_at": node.at,
            "rewritten_at": p.plan.rewritten_at,
            "prefix_sha256": p.plan.prefix_sha256,
        }
        exchange_rows.append(
            tuple(
                _json(values.get(name, default)) if is_json else values.get(name, default)
                for name, is_json, default in _EXCHANGE_COLUMNS
            )
        )
        for j, pm in enumerate(p.plan.new_messages):
            message_id = next(unused_message_ids)
            message_rows.append(
                (
                    message_id,
                    conversation_id,
                    exchange_id,
                    p.first + j,
                    message_role(pm.message.role),
                    pm.from_response,
                    pm.superseded,
                    messages[i][j],
                    pm.sha256,
                    pm.canonical_sha256,
                    list(pm.alternate_sha256),
                    pm.prompt_sha256,
                    now,
                )
            )
            for position, row in enumerate(projected[i][j]):
                block_rows.append(
                    (
                        message_id,
                        conversation_id,
                        position,
                        row["provider_type"],
                        row["block_class"],
                        row.get("text", ""),
                        row.get("tool_name", ""),
                        row.get("call_id", ""),
                        row.get("is_error"),
                        row.get("status", ""),
                        _json(row.get("fields", {})),
                        row.get("redacted", False),
                    )
                )
    _write_rows(cur, [exchange_rows, message_rows, block_rows])
    return len(block_rows)


def _write_rows(cur: CursorWrapper, tables: Sequence[list[tuple[Any, ...]]]) -> None:
    """Add the rows to their tables (``_TABLES`` order): COPY for a large batch; for a small one
    (the API's batch of one) INSERTs pipelined in one round trip."""
    if sum(len(rows) for rows in tables) >= _COPY_FROM_ROWS:
        for (table, columns), rows in zip(_TABLES, tables, strict=True):
            with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        return
    with cur.connection.pipeline():
        for (table, _), rows in zip(_TABLES, tables, strict=True):
            if rows:
                cur.executemany(_INSERTS[table], rows)


def update_counters(
    cur: CursorWrapper, conversations: Iterable[ConversationState], now: datetime
) -> None:
    """Counters, flags and activity of the conversations the batch added to, in one statement."""
    touched = [c for c in conversations if c.exchanges]
    if not touched:
        return
    cur.execute(
        _UPDATE_COUNTERS,
        [
            [c.pk for c in touched],
            [c.messages_added for c in touched],
            [c.exchanges for c in touched],
            [c.tool_calls for c in touched],
            [c.activity or now for c in touched],
            [c.truncated for c in touched],
            [c.refusal for c in touched],
            [c.rewritten for c in touched],
            [c.output_tokens for c in touched],
            [min(c.slowest_ms, 2**31 - 1) for c in touched],
        ],
    )


def unknown_types_record(counts: Counter[tuple[str, str]]) -> None:
    """Count block types the code has not classified, for the admin's list."""
    now = timezone.now()
    for (fmt, provider_type), seen in sorted(counts.items()):
        UnknownBlockType.objects.bulk_create(
            [UnknownBlockType(format=fmt, provider_type=provider_type)], ignore_conflicts=True
        )
        UnknownBlockType.objects.filter(format=fmt, provider_type=provider_type).update(
            seen_count=F("seen_count") + seen, last_seen_at=now
        )
