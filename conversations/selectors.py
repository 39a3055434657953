"""Reads of the conversation store: querysets already tuned for their page or endpoint."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime

from django.contrib.postgres.search import SearchQuery
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from .keystore.keys import data_key_for, decrypt_message
from .models import Block, Conversation, ConversationEvent, Exchange, Message, UnknownBlockType
from .projection.policies import field_policies, tool_links
from .projection.project import FieldView, Rule, ToolNames, project_blocks, view_fields
from .projection.stored import stored_blocks

# A conversation with at least this many tool calls is flagged "many tool calls".
MANY_TOOL_CALLS = 5


def conversation_by_external_id(external_id: str) -> Conversation | None:
    return Conversation.objects.filter(external_id=external_id).first()


def conversation_message_raws(
    conversation: Conversation, *, include_superseded: bool = False
) -> list[str]:
    """The current messages' raw texts, decrypted, in sequence order: what replay returns."""
    rows = Message.objects.filter(conversation=conversation)
    if not include_superseded:
        rows = rows.filter(superseded=False)
    sealed = list(rows.order_by("sequence").values_list("sequence", "raw_ciphertext"))
    if not sealed:
        return []
    key = data_key_for(conversation.pk)
    return [decrypt_message(key, conversation.pk, seq, ct) for seq, ct in sealed]


def unknown_block_types() -> QuerySet[UnknownBlockType]:
    return UnknownBlockType.objects.order_by("-last_seen_at")


def conversation_rows(*, limit: int) -> QuerySet[Conversation]:
    """Newest activity first."""
    return Conversation.objects.order_by("-last_activity_at", "-id")[:limit]


@dataclass(frozen=True)
class ConversationPage:
    conversation: Conversation
    exchanges: list[Exchange]
    messages: list[Message]
    events: list[ConversationEvent]


def conversation_page(conversation: Conversation, *, can_see_restricted: bool) -> ConversationPage:
    """A conversation with its exchanges, current messages, blocks and events, in a fixed
    number of queries. Each AUDIT block gets ``shown`` and ``hidden``: its fields as this viewer
    may see them (``projection.view_fields``); each message its exchange's reasoning tokens.

    The encrypted raw text is deferred: pages show projections only.
    """
    messages = list(
        Message.objects.filter(conversation=conversation, superseded=False)
        .defer("raw_ciphertext")
        .select_related("exchange")
        .defer("exchange__settings_ciphertext")
        .order_by("sequence")
        .prefetch_related(Prefetch("blocks", queryset=Block.objects.order_by("position")))
    )
    links = tool_links()
    for message in messages:
        for block in message.blocks.all():
            if block.block_class == Block.Class.AUDIT:
                block.shown, block.hidden = view_fields(
                    block.fields,
                    tool_name=block.tool_name,
                    can_see_restricted=can_see_restricted,
                    links=links,
                )
    exchanges = list(
        Exchange.objects.filter(conversation=conversation)
        .defer("settings_ciphertext")
        .order_by("ordinal")
    )
    events = list(conversation.events.order_by("at", "pk"))
    return ConversationPage(conversation, exchanges, messages, events)


@dataclass(frozen=True)
class PreviewBlock:
    provider_type: str
    block_class: str
    tool_name: str
    text: str
    now: tuple[list[FieldView], list[str]]
    draft: tuple[list[FieldView], list[str]]


@dataclass(frozen=True)
class PreviewMessage:
    sequence: int
    role: str
    blocks: list[PreviewBlock]


def exchange_preview(*, exchange_id: int, draft: Rule) -> list[PreviewMessage] | None:
    """What an agent sees of one exchange's messages under the policies in force and under the
    same policies with ``draft`` added, side by side (the policy admin's preview). Computed from
    the verbatim store; nothing is written."""
    exchange = Exchange.objects.filter(pk=exchange_id).first()
    if exchange is None:
        return None
    current = field_policies()
    proposed = current.with_rule(draft)
    links = tool_links()
    conversation_id = exchange.conversation_id
    rows = list(
        Message.objects.filter(
            conversation_id=conversation_id, sequence__lte=_last_sequence(exchange)
        )
        .order_by("sequence")
        .values_list("sequence", "raw_ciphertext", "exchange__format", "role", "exchange_id")
    )
    names = ToolNames()
    out = []
    for (sequence, _, _, role, message_exchange), blocks in stored_blocks(conversation_id, rows):
        if message_exchange != exchange_id:
            names.learn(blocks)  # an earlier exchange: only its calls' names matter here
            continue
        now_rows = project_blocks(blocks, current, names)
        draft_rows = project_blocks(blocks, proposed, names)
        previews = []
        for now_row, draft_row in zip(now_rows, draft_rows, strict=True):
            name = now_row.get("tool_name", "")
            previews.append(
                PreviewBlock(
                    provider_type=now_row["provider_type"],
                    block_class=now_row["block_class"],
                    tool_name=name,
                    text=now_row.get("text", ""),
                    now=view_fields(
                        now_row.get("fields", {}),
                        tool_name=name,
                        can_see_restricted=False,
                        links=links,
                    ),
                    draft=view_fields(
                        draft_row.get("fields", {}),
                        tool_name=name,
                        can_see_restricted=False,
                        links=links,
                    ),
                )
            )
        out.append(PreviewMessage(sequence, role, previews))
    return out


def _last_sequence(exchange: Exchange) -> int:
    last = (
        Message.objects.filter(exchange=exchange)
        .order_by("-sequence")
        .values_list("sequence", flat=True)
        .first()
    )
    return last if last is not None else -1


@dataclass(frozen=True)
class ListFilters:
    """The conversation list's filters, all optional; ``after`` is the keyset cursor."""

    queue: str = ""
    customer: str = ""
    model: str = ""
    finish: str = ""
    flags: frozenset[str] = frozenset()  # truncated, refusal, rewritten, many_tools
    since: datetime | None = None
    until: datetime | None = None
    q: str = ""
    after: str = ""


FLAGS = {
    "truncated": "truncated",
    "refusal": "refusal",
    "rewritten": "history rewritten",
    "many_tools": f"{MANY_TOOL_CALLS}+ tool calls",
}


def _cursor(row: Conversation) -> str:
    raw = f"{row.last_activity_at.isoformat()}|{row.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _after(cursor: str) -> tuple[datetime, int] | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, pk = raw.rsplit("|", 1)
        return datetime.fromisoformat(at), int(pk)
    except (ValueError, UnicodeDecodeError):
        return None


def conversation_list(
    visible: QuerySet[Conversation], filters: ListFilters, *, limit: int = 50
) -> tuple[list[Conversation], str | None]:
    """One page of conversations, newest activity first, and the cursor of the next page.

    Keyset pagination on (last_activity_at, id): a page costs the same deep in the list as at
    its top. Flags are columns of the conversation; model and finish reason are EXISTS
    subqueries; search is a full-text query over the visible (redacted) text: one query for the
    page whatever its length. The page's rows are read again by id (see below), so annotations
    or ``select_related`` on ``visible`` do not carry over: add them to that last queryset.
    """
    qs = visible
    if filters.queue:
        qs = qs.filter(queue=filters.queue)
    if filters.customer:
        qs = qs.filter(customer_external_id=filters.customer)
    exchanges = Exchange.objects.filter(conversation=OuterRef("pk"))
    if filters.model:
        qs = qs.filter(Exists(exchanges.filter(response_model=filters.model)))
    if filters.finish:
        qs = qs.filter(Exists(exchanges.filter(stop_reason=filters.finish)))
    if "truncated" in filters.flags:
        qs = qs.filter(any_truncated=True)
    if "refusal" in filters.flags:
        qs = qs.filter(any_refusal=True)
    if "rewritten" in filters.flags:
        qs = qs.filter(any_rewritten=True)
    if "many_tools" in filters.flags:
        qs = qs.filter(tool_call_count__gte=MANY_TOOL_CALLS)
    if filters.since:
        qs = qs.filter(last_activity_at__gte=filters.since)
    if filters.until:
        qs = qs.filter(last_activity_at__lt=filters.until)
    if filters.q:
        query = SearchQuery(filters.q, config="english", search_type="websearch")
        qs = qs.filter(Exists(Block.objects.filter(conversation=OuterRef("pk"), search=query)))
    if filters.after and (cursor := _after(filters.after)) is not None:
        at, pk = cursor
        # The redundant "<=" lets PostgreSQL start the index scan at the cursor.
        qs = qs.filter(last_activity_at__lte=at).filter(
            Q(last_activity_at__lt=at) | Q(last_activity_at=at, pk__lt=pk)
        )
    # A narrow first query, then the rows, in one statement: the page's ids are found in the
    # indexes alone (conv_activity_queue_idx holds the order and the queue; the flag and
    # exchange indexes answer the filters), and only the page's rows are read from the table.
    # Selecting whole rows while scanning would read a table row for every conversation passed
    # over: with a rare filter on a million conversations, tens of thousands of them.
    ids = qs.order_by("-last_activity_at", "-pk").values("pk")[: limit + 1]
    rows: list[Conversation] = list(
        Conversation.objects.filter(pk__in=ids).order_by("-last_activity_at", "-pk")
    )
    next_cursor = _cursor(rows[limit - 1]) if len(rows) > limit else None
    return rows[:limit], next_cursor
