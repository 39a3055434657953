"""The one writer of exchanges: the API writes a batch of one, ``ingest`` batches of hundreds.

The rules live elsewhere (``services.exchange_parse``, ``exchange_plan``, ``exchange_fields``,
``projection.project_block``, ``keys``); this module stores what they decide: a batch of
exchanges shares one transaction, one lookup of what its conversations already hold, one query of
the data keys, one round trip drawing the ids of its new rows, and one COPY per table. Messages
are encrypted with their conversation's data key, and each exchange's request settings too.

Why not the ORM here: for a batch of 500 exchanges, building model instances and compiling
``bulk_create`` for the conversations and exchanges cost more than PostgreSQL took to store every
row of the batch (``bench/ingest_bulk.py``). Ids are drawn from the tables' own sequences before
the COPYs, so messages name their exchange and blocks their message without reading anything
back, and rows the API writes at the same time take other ids.

A column added to ``Exchange`` is written from ``exchange_fields`` or, when absent there, from
the field's default (as the ORM would); a column added to ``Message`` or ``Block`` must be added
to ``_MESSAGE_COLUMNS`` / ``_BLOCK_COLUMNS`` below.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, models, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from ..blocks import BlockClass, ParsedExchange
from ..keystore.keys import data_keys_for, encrypt_message
from ..models import Block, Conversation, Exchange, Message, Queue
from ..projection.policies import field_policies
from ..projection.project import Policies, clean_text, project_block
from .guards import Refusals, ingest_check_many, ingest_lock_shared
from .planning import (
    ExchangeInput,
    ExchangePlan,
    IngestConflict,
    PlannedMessage,
    encrypt_settings,
    exchange_fields,
    exchange_plan,
    queue_of,
    unknown_type_counts,
    unknown_types_record,
)


@dataclass(frozen=True, slots=True)
class Stored:
    """What one exchange of a batch became."""

    line: int
    conversation_id: int
    exchange_id: int
    sequences: list[int]
    rewritten_at: int | None


@dataclass(frozen=True, slots=True)
class BatchResult:
    exchanges: int
    messages: int
    blocks: int
    rejected: list[tuple[int, IngestConflict]]
    stored: list[Stored]


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
    RETURNING c.id, c.external_id, c.customer_external_id, c.exchange_count, (c.xmax = 0)
"""  # noqa: S608
# In name order: two batches adding the same new queues wait on each other, never deadlock.
_UPSERT_QUEUES = (
    f"INSERT INTO {Queue._meta.db_table} (name, created_at) "  # noqa: S608
    "SELECT name, now() FROM (SELECT DISTINCT unnest(%s::text[]) AS name) q ORDER BY name "
    "ON CONFLICT (name) DO NOTHING"
)
# Queue names this process has seen committed: their rows exist, no need to ask again.
_known_queues: set[str] = set()
_STORED_MESSAGES = (
    f"SELECT conversation_id, id, sha256, canonical_sha256, superseded FROM {_MESSAGES} "  # noqa: S608
    "WHERE conversation_id = ANY(%s) ORDER BY conversation_id, sequence"
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
        any_truncated = c.any_truncated OR v.ft,
        any_refusal = c.any_refusal OR v.fr,
        any_rewritten = c.any_rewritten OR v.fw,
        -- activity is when the exchanges happened (started_at), not when they were stored
        last_activity_at = CASE WHEN c.exchange_count = 0 THEN v.a
                                ELSE GREATEST(c.last_activity_at, v.a) END
    FROM unnest(%s::bigint[], %s::int[], %s::int[], %s::int[], %s::timestamptz[],
                %s::bool[], %s::bool[], %s::bool[])
         AS v(id, m, e, t, a, ft, fr, fw)
    WHERE c.id = v.id
"""  # noqa: S608


def _json(value: Any) -> str:
    # Most projected blocks keep no fields: skip the encoder for the empty object.
    if isinstance(value, dict) and not value:
        return "{}"
    return json.dumps(value, ensure_ascii=False)


@dataclass(slots=True)
class _Conversation:
    """What planning needs of one conversation, kept up to date as the batch is planned."""

    pk: int
    customer: str
    exchanges_before: int = 0  # exchanges stored before this batch
    count: int = 0  # messages stored, superseded ones included: the next sequence number
    # The current (not superseded) messages in order: (raw, canonical) hashes, and for each its
    # row id when stored before this batch, or its plan when it arrives in this batch.
    current: list[tuple[str, str]] = field(default_factory=list)
    current_rows: list[int | PlannedMessage] = field(default_factory=list)
    messages: int = 0  # added by this batch
    exchanges: int = 0  # added by this batch
    tool_calls: int = 0  # added by this batch
    activity: datetime | None = None  # the latest started_at of this batch's exchanges
    truncated: bool = False  # any exchange of this batch was so flagged
    refusal: bool = False
    rewritten: bool = False

    def supersede(self, index: int) -> int | None:
        """Stop current message ``index`` being current; its row id when stored before."""
        del self.current[index]
        row = self.current_rows.pop(index)
        if isinstance(row, int):
            return row
        row.superseded = True  # not written yet: it is stored superseded
        return None

    def add(self, messages: Sequence[PlannedMessage]) -> int:
        """Append an exchange's new messages; returns the sequence number of the first."""
        first = self.count
        self.count += len(messages)
        self.messages += len(messages)
        self.exchanges += 1
        for pm in messages:
            if not pm.superseded:
                self.current.append((pm.sha256, pm.canonical_sha256))
                self.current_rows.append(pm)
        return first


@dataclass(slots=True)
class _Planned:
    line: int
    conversation: _Conversation
    ordinal: int  # 1 for the conversation's first exchange
    first: int  # sequence number of its first new message
    plan: ExchangePlan
    format: str
    parsed: ParsedExchange
    fields: dict[str, Any]  # the Exchange row's columns from the parsed parameters


def _lock_conversations(
    cur: CursorWrapper, items: Sequence[tuple[int, ExchangeInput, ParsedExchange]], now: datetime
) -> dict[str, _Conversation]:
    """The batch's conversations, created if new, locked in id order (as the API locks one), with
    the messages they hold."""
    first_seen: dict[str, ExchangeInput] = {}
    for _, data, _ in items:
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
    for pk, ext, customer, exchanges, inserted in cur.fetchall():
        conversations[ext] = _Conversation(pk, customer, exchanges)
        if inserted:
            created.add(pk)
    # A conversation created just now holds no message yet: only the others are looked up.
    existing = {c.pk: c for c in conversations.values() if c.pk not in created}
    if existing:
        cur.execute(_STORED_MESSAGES, [list(existing)])
        for conversation_id, message_id, raw_hash, canonical, superseded in cur.fetchall():
            conversation = existing[conversation_id]
            conversation.count += 1
            if not superseded:
                conversation.current.append((raw_hash, canonical))
                conversation.current_rows.append(message_id)
    return conversations


def _plan(
    items: Sequence[tuple[int, ExchangeInput, ParsedExchange]],
    conversations: dict[str, _Conversation],
) -> tuple[list[_Planned], list[int], list[tuple[int, IngestConflict]]]:
    """Plan every exchange in order, each against what the ones before it left: the planned
    exchanges, the ids of stored messages they supersede, and the refused lines."""
    planned: list[_Planned] = []
    superseded: list[int] = []
    rejected: list[tuple[int, IngestConflict]] = []
    for line, data, parsed in items:
        conversation = conversations[data.conversation]
        if conversation.customer != data.customer:
            conflict = IngestConflict(
                "this conversation belongs to another customer",
                field="customer",
                code="customer_mismatch",
            )
            rejected.append((line, conflict))
            continue
        plan = exchange_plan(data.format, parsed, conversation.current)
        if plan.supersede_current is not None:
            stored_id = conversation.supersede(plan.supersede_current)
            if stored_id is not None:
                superseded.append(stored_id)
        first = conversation.add(plan.new_messages)
        conversation.tool_calls += plan.tool_call_count
        conversation.truncated |= parsed.params.truncated
        conversation.refusal |= parsed.params.refusal
        conversation.rewritten |= plan.rewritten_at is not None
        if data.started_at is not None and (
            conversation.activity is None or data.started_at > conversation.activity
        ):
            conversation.activity = data.started_at
        ordinal = conversation.exchanges_before + conversation.exchanges
        planned.append(
            _Planned(
                line,
                conversation,
                ordinal,
                first,
                plan,
                data.format,
                parsed,
                exchange_fields(data, parsed),
            )
        )
    return planned, superseded, rejected


def _next_ids(cur: CursorWrapper, exchanges: int, messages: int) -> tuple[list[int], list[int]]:
    """Ids for the batch's exchanges and messages, from the tables' sequences, in one round trip."""
    cur.execute(_NEXT_IDS, [Exchange._meta.db_table, exchanges, Message._meta.db_table, messages])
    exchange_ids, message_ids = cur.fetchone()
    return exchange_ids, message_ids


def _tool_names(cur: CursorWrapper, planned: Sequence[_Planned]) -> dict[tuple[int, str], str]:
    """Tool names by (conversation, call id): a tool result names only its call, and policies
    are per tool. From the calls in this batch, then from the calls stored before it."""
    names: dict[tuple[int, str], str] = {}
    wanted: set[tuple[int, str]] = set()
    for p in planned:
        for pm in p.plan.new_messages:
            for block in pm.message.blocks:
                if block.cls is not BlockClass.AUDIT or not block.call_id:
                    continue
                key = (p.conversation.pk, block.call_id)
                if block.tool_name:
                    names.setdefault(key, block.tool_name)
                else:
                    wanted.add(key)
    missing = wanted - names.keys()
    if missing:
        cur.execute(
            _TOOL_NAMES,
            [sorted({c for c, _ in missing}), sorted({call for _, call in missing})],
        )
        for conversation_id, call_id, tool_name in cur.fetchall():
            names.setdefault((conversation_id, call_id), tool_name)
    return names


def _exchange_rows(
    planned: Sequence[_Planned],
    exchange_ids: Sequence[int],
    keys: dict[int, bytes],
    now: datetime,
) -> list[tuple[Any, ...]]:
    rows = []
    for exchange_id, p in zip(exchange_ids, planned, strict=True):
        values = {
            **p.fields,
            "id": exchange_id,
            "conversation_id": p.conversation.pk,
            "ordinal": p.ordinal,
            "settings_ciphertext": encrypt_settings(
                keys[p.conversation.pk], p.conversation.pk, p.ordinal, p.parsed
            ),
            "history_rewritten": p.plan.rewritten_at is not None,
            "rewritten_at": p.plan.rewritten_at,
            "tool_call_count": p.plan.tool_call_count,
            "created_at": now,
        }
        rows.append(
            tuple(
                _json(values.get(name, default)) if is_json else values.get(name, default)
                for name, is_json, default in _EXCHANGE_COLUMNS
            )
        )
    return rows


def _message_and_block_rows(
    planned: Sequence[_Planned],
    exchange_ids: Sequence[int],
    message_ids: Sequence[int],
    keys: dict[int, bytes],
    policies: Policies,
    tool_names: dict[tuple[int, str], str],
    now: datetime,
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The rows of the new messages, encrypted, and of their blocks, projected."""
    message_rows: list[tuple[Any, ...]] = []
    block_rows: list[tuple[Any, ...]] = []
    unused_message_ids = iter(message_ids)
    for exchange_id, p in zip(exchange_ids, planned, strict=True):
        conversation_id = p.conversation.pk
        key = keys[conversation_id]
        for sequence, pm in enumerate(p.plan.new_messages, start=p.first):
            message_id = next(unused_message_ids)
            message_rows.append(
                (
                    message_id,
                    conversation_id,
                    exchange_id,
                    sequence,
                    clean_text(pm.message.role)[:20],
                    pm.from_response,
                    pm.superseded,
                    encrypt_message(key, conversation_id, sequence, pm.message.raw),
                    pm.sha256,
                    pm.canonical_sha256,
                    now,
                )
            )
            for position, block in enumerate(pm.message.blocks):
                tool = tool_names.get((conversation_id, block.call_id or ""))
                row = project_block(block, policies, tool)
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
    return message_rows, block_rows


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


def ingest_batch(
    items: Sequence[tuple[int, ExchangeInput, ParsedExchange]], *, retry_refused: bool = True
) -> BatchResult:
    """Store a batch of parsed exchanges (``(line number, input, parsed)``), in order, in one
    transaction.

    The ingest guards (``guards.py``) run once the batch's conversations are locked. When they
    refuse exchanges, the transaction rolls back and nothing of the batch is kept; the refusals
    are then recorded, reported as rejected lines, and the rest of the batch is stored again.
    ``retry_refused=False`` (the API's service, one exchange in its own transaction): the batch
    joins the caller's transaction without a savepoint (it costs two round trips) and
    ``Refusals`` propagates, for the caller to record once it has rolled back."""
    if not retry_refused:
        with transaction.atomic(savepoint=False):
            return _ingest_allowed(items)
    refused: list[tuple[int, IngestConflict]] = []
    while items:
        try:
            with transaction.atomic():
                result = _ingest_allowed(items)
        except Refusals as refusals:
            refusals.record()
            refused.extend((items[p][0], r) for p, r in sorted(refusals.refused.items()))
            items = [item for p, item in enumerate(items) if p not in refusals.refused]
            continue
        if not refused:
            return result
        rejected = sorted([*refused, *result.rejected], key=lambda r: r[0])
        return BatchResult(
            result.exchanges, result.messages, result.blocks, rejected, result.stored
        )
    return BatchResult(0, 0, 0, refused, [])


def _ingest_allowed(items: Sequence[tuple[int, ExchangeInput, ParsedExchange]]) -> BatchResult:
    now = timezone.now()
    policies = field_policies()
    with connection.cursor() as cur:
        ingest_lock_shared()
        conversations = _lock_conversations(cur, items, now)
        # The guards, now that the conversations are locked (guards.py says why here).
        refusals = ingest_check_many([(data.conversation, data.customer) for _, data, _ in items])
        if refusals:
            raise Refusals(refusals)
        planned, superseded, rejected = _plan(items, conversations)
        # Committed in the keys database before the rows they encrypt (keys.py says why).
        keys = data_keys_for({p.conversation.pk for p in planned}, create=True)
        if superseded:
            cur.execute(_SUPERSEDE, [superseded])
        n_messages = sum(len(p.plan.new_messages) for p in planned)
        exchange_ids, message_ids = _next_ids(cur, len(planned), n_messages)
        message_rows, block_rows = _message_and_block_rows(
            planned, exchange_ids, message_ids, keys, policies, _tool_names(cur, planned), now
        )
        _write_rows(
            cur, [_exchange_rows(planned, exchange_ids, keys, now), message_rows, block_rows]
        )
        n_blocks = len(block_rows)
        # Counters and activity, one statement for the whole batch.
        touched = [c for c in conversations.values() if c.exchanges]
        if touched:
            cur.execute(
                _UPDATE_COUNTERS,
                [
                    [c.pk for c in touched],
                    [c.messages for c in touched],
                    [c.exchanges for c in touched],
                    [c.tool_calls for c in touched],
                    [c.activity or now for c in touched],
                    [c.truncated for c in touched],
                    [c.refusal for c in touched],
                    [c.rewritten for c in touched],
                ],
            )
    unknown: Counter[tuple[str, str]] = Counter()
    for p in planned:
        unknown.update(unknown_type_counts(p.format, p.plan.new_messages))
    unknown_types_record(unknown)
    stored = [
        Stored(
            p.line,
            p.conversation.pk,
            exchange_id,
            list(range(p.first, p.first + len(p.plan.new_messages))),
            p.plan.rewritten_at,
        )
        for p, exchange_id in zip(planned, exchange_ids, strict=True)
    ]
    return BatchResult(len(planned), n_messages, n_blocks, rejected, stored)
