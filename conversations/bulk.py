"""Bulk ingest: many exchanges per transaction, messages and blocks written with COPY.

The rules are the API's (``services.exchange_parse``, ``exchange_plan``, ``exchange_fields``,
``projection.project_block``); only the writer differs: a batch of exchanges shares one
transaction, one lookup of what its conversations already hold, and one COPY per table.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from .blocks import ParsedExchange
from .models import Block, Conversation, Exchange, Message
from .projection import clean_text, project_block
from .services import (
    ExchangeInput,
    IngestConflict,
    exchange_fields,
    exchange_plan,
    queue_of,
    unknown_type_counts,
    unknown_types_record,
)


@dataclass(frozen=True, slots=True)
class BatchResult:
    exchanges: int
    messages: int
    blocks: int
    rejected: list[tuple[int, IngestConflict]]


_MESSAGE_COLUMNS = (
    "id",
    "conversation_id",
    "exchange_id",
    "sequence",
    "role",
    "from_response",
    "raw",
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


def _next_ids(table: str, n: int) -> list[int]:
    if n == 0:
        return []
    with connection.cursor() as cur:
        cur.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, n],
        )
        return [row[0] for row in cur.fetchall()]


@transaction.atomic
def ingest_batch(items: Sequence[tuple[int, ExchangeInput, ParsedExchange]]) -> BatchResult:
    """Store a batch of parsed exchanges (``(line number, input, parsed)``), in order."""
    now = timezone.now()
    Conversation.objects.bulk_create(
        [
            Conversation(
                external_id=data.conversation,
                customer_external_id=data.customer,
                queue=queue_of(data.labels),
                labels=data.labels,
                last_activity_at=now,
            )
            for _, data, _ in items
        ],
        ignore_conflicts=True,
    )
    ids = sorted({data.conversation for _, data, _ in items})
    conversations = {
        c.external_id: c
        for c in Conversation.objects.select_for_update().filter(external_id__in=ids).order_by("id")
    }
    hashes: dict[int, list[str]] = {c.pk: [] for c in conversations.values()}
    for conv_id, canon in (
        Message.objects.filter(conversation_id__in=hashes)
        .order_by("conversation_id", "sequence")
        .values_list("conversation_id", "canonical_sha256")
    ):
        hashes[conv_id].append(canon)

    rejected: list[tuple[int, IngestConflict]] = []
    exchanges: list[Exchange] = []
    planned = []
    for line, data, parsed in items:
        conversation = conversations[data.conversation]
        if conversation.customer_external_id != data.customer:
            rejected.append(
                (
                    line,
                    IngestConflict(
                        "this conversation belongs to another customer",
                        field="customer",
                        code="customer_mismatch",
                    ),
                )
            )
            continue
        stored = hashes[conversation.pk]
        plan = exchange_plan(data.format, parsed, stored)
        first = len(stored)
        stored.extend(pm.canonical_sha256 for pm in plan.new_messages)
        exchanges.append(
            Exchange(
                conversation=conversation,
                history_rewritten=plan.rewritten_at is not None,
                rewritten_at=plan.rewritten_at,
                tool_call_count=plan.tool_call_count,
                **exchange_fields(data, parsed),
            )
        )
        planned.append((conversation, first, plan, data.format))
    Exchange.objects.bulk_create(exchanges)

    n_messages = sum(len(plan.new_messages) for _, _, plan, _ in planned)
    message_ids = iter(_next_ids(Message._meta.db_table, n_messages))
    n_blocks = 0
    unknown: Counter[tuple[str, str]] = Counter()
    with connection.cursor() as cur:
        with cur.copy(
            f"COPY {Message._meta.db_table} ({', '.join(_MESSAGE_COLUMNS)}) FROM STDIN"
        ) as copy_messages:
            block_rows = []
            for exchange, (conversation, first, plan, fmt) in zip(exchanges, planned, strict=True):
                unknown.update(unknown_type_counts(fmt, plan.new_messages))
                for i, pm in enumerate(plan.new_messages):
                    message_id = next(message_ids)
                    copy_messages.write_row(
                        (
                            message_id,
                            conversation.pk,
                            exchange.pk,
                            first + i,
                            clean_text(pm.message.role)[:20],
                            pm.from_response,
                            pm.message.raw,
                            pm.sha256,
                            pm.canonical_sha256,
                            now,
                        )
                    )
                    for pos, block in enumerate(pm.message.blocks):
                        row = project_block(block)
                        block_rows.append(
                            (
                                message_id,
                                conversation.pk,
                                pos,
                                row["provider_type"],
                                row["block_class"],
                                row.get("text", ""),
                                row.get("tool_name", ""),
                                row.get("call_id", ""),
                                row.get("is_error"),
                                row.get("status", ""),
                                json.dumps(row.get("fields", {}), ensure_ascii=False),
                                row.get("redacted", False),
                            )
                        )
        with cur.copy(
            f"COPY {Block._meta.db_table} ({', '.join(_BLOCK_COLUMNS)}) FROM STDIN"
        ) as copy_blocks:
            for block_row in block_rows:
                copy_blocks.write_row(block_row)
            n_blocks = len(block_rows)
        # Counters and activity, one statement for the whole batch.
        per_conversation: dict[int, list[int]] = {}
        for _, (conversation, _, plan, _) in zip(exchanges, planned, strict=True):
            counts = per_conversation.setdefault(conversation.pk, [0, 0])
            counts[0] += len(plan.new_messages)
            counts[1] += 1
        if per_conversation:
            cur.execute(
                f"""
                UPDATE {Conversation._meta.db_table} AS c
                SET message_count = c.message_count + v.m,
                    exchange_count = c.exchange_count + v.e,
                    last_activity_at = %s
                FROM unnest(%s::bigint[], %s::int[], %s::int[]) AS v(id, m, e)
                WHERE c.id = v.id
                """,
                [
                    now,
                    list(per_conversation),
                    [v[0] for v in per_conversation.values()],
                    [v[1] for v in per_conversation.values()],
                ],
            )
    unknown_types_record(unknown)
    return BatchResult(len(exchanges), n_messages, n_blocks, rejected)
