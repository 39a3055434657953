"""The ingest pipeline: every stage, in order, from one function (``ingest_batch``).

The API stores a batch of one exchange, ``manage.py ingest`` batches of hundreds; both come here
with exchanges already checked (``body.exchange_input``) and parsed (``parse.exchange_parse``,
before any transaction opens). Then, in one transaction:

1. ``store.lock_conversations``: the batch's conversations created or locked, and what they hold;
2. the ingest guards (``guards.py``), now that the conversations are locked;
3. ``history.plan_batch``: the history sent matched against the history stored;
4. ``project.project_batch``: the new blocks projected and redacted (tool names of calls stored
   before: ``store.stored_tool_names``);
5. ``encrypt.seal_batch``: the new messages and the request settings encrypted with each
   conversation's data key (``keystore.keys.data_keys_for``, committed in the keys database
   before the rows it encrypts: ``keys.py`` says why);
6. ``store.write_batch`` and ``store.update_counters``: the rows written.

No stage calls another: this function hands each what the ones before it returned. A stage
imports only the data types of those before it (``history``'s plan, ``project``'s rows; ``store``,
the only one that talks SQL, both), and none imports this module (``tests/test_architecture.py``
holds them to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from ..keystore.keys import data_keys_for
from ..monitoring.rollups import rewrites_classify, rollups_add
from ..projection.policies import field_policies
from . import encrypt, history, project, store
from .errors import IngestConflict
from .guards import Refusals, ingest_check_many, ingest_lock_shared
from .history import Item


@dataclass(frozen=True, slots=True)
class Stored:
    """What one exchange of a batch became."""

    line: int
    conversation_id: int
    exchange_id: int
    sequences: list[int]
    rewritten_at: int | None
    branch: str = ""  # the branch it started (branches.py), and where
    branched_at: int | None = None


@dataclass(frozen=True, slots=True)
class BatchResult:
    exchanges: int
    messages: int
    blocks: int
    rejected: list[tuple[int, IngestConflict]]
    stored: list[Stored]


def ingest_batch(items: Sequence[Item], *, retry_refused: bool = True) -> BatchResult:
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


def _rollup_row(p: history.Planned, now: datetime) -> dict[str, Any]:
    """The columns of a planned exchange the rollups count (``monitoring.rollups.FIELDS``)."""
    plan = p.plan
    return {
        **project.exchange_fields(p.data, p.parsed),
        "created_at": now,
        "ordinal": p.ordinal,
        "tool_call_count": plan.tool_call_count,
        "repeated_tool_calls": plan.repeated_tool_calls,
        "tool_results": plan.tool_results,
        "tool_errors": plan.tool_errors,
        "rewrite_kind": plan.rewrite_kind,
        "cache_lost_tokens": plan.cache_lost_tokens,
    }


def _ingest_allowed(items: Sequence[Item]) -> BatchResult:
    now = timezone.now()
    policies = field_policies()
    with connection.cursor() as cur:
        ingest_lock_shared()
        conversations = store.lock_conversations(cur, [data for _, data, _ in items], now)
        # The guards, now that the conversations are locked (guards.py says why here).
        refusals = ingest_check_many([(data.conversation, data.customer) for _, data, _ in items])
        if refusals:
            raise Refusals(refusals)
        planned, superseded, rejected = history.plan_batch(items, conversations)
        stored_names = store.stored_tool_names(cur, project.calls_to_look_up(planned))
        projected = project.project_batch(planned, policies, stored_names)
        keys = data_keys_for({p.conversation.pk for p in planned}, create=True)
        # How each rewritten history was rewritten (monitoring/rewrites.py), before it is stored.
        rewrites_classify(cur, planned, keys)
        sealed = encrypt.seal_batch(planned, keys)
        store.supersede(cur, superseded)
        n_messages = sum(len(p.plan.new_messages) for p in planned)
        exchange_ids, message_ids = store.next_ids(cur, len(planned), n_messages)
        n_blocks = store.write_batch(
            cur, planned, projected, sealed, (exchange_ids, message_ids), now
        )
        store.update_counters(cur, conversations.values(), now)
        # The signals' hourly rollups (monitoring/rollups.py), in the batch's transaction.
        rollups_add(cur, planned, [_rollup_row(p, now) for p in planned])
    store.unknown_types_record(project.unknown_types(planned))
    return BatchResult(
        len(planned),
        n_messages,
        n_blocks,
        rejected,
        [
            Stored(
                p.line,
                p.conversation.pk,
                exchange_id,
                list(range(p.first, p.first + len(p.plan.new_messages))),
                p.plan.rewritten_at,
                p.plan.branch,
                p.plan.branched_at,
            )
            for p, exchange_id in zip(planned, exchange_ids, strict=True)
        ],
    )
