"""Reads of the conversation store: querysets already tuned for their page or endpoint."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.postgres.aggregates import ArrayAgg
from django.contrib.postgres.search import SearchQuery
from django.db.models import Exists, JSONField, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.fields.json import KT
from django.db.models.functions import JSONObject, Left

from .formats.registry import message_blocks
from .keys import data_key_for, decrypt_message
from .models import Block, Conversation, ConversationEvent, Exchange, Message, UnknownBlockType
from .policies import field_policies, tool_links
from .projection import FieldView, Rule, project_block, view_fields

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

    @property
    def views(self) -> list[tuple[list[dict[str, Any]], list[str]]]:
        """Now and with the draft, each field named by its key ("side:path") for marking."""
        return [
            (
                [
                    {
                        "key": f"{f.side}:{f.path}",
                        "side": f.side,
                        "path": f.path,
                        "value": f.value,
                        "storage_class": f.storage_class,
                    }
                    for f in shown
                ],
                list(hidden),
            )
            for shown, hidden in (self.now, self.draft)
        ]

    @property
    def changed(self) -> frozenset[str]:
        """The fields ("side:path") the draft would show differently: kept or not, class, value."""
        return preview_changes(self.now, self.draft)


def preview_changes(
    now: tuple[list[FieldView], list[str]], draft: tuple[list[FieldView], list[str]]
) -> frozenset[str]:
    def state(view: tuple[list[FieldView], list[str]]) -> dict[str, Any]:
        shown, hidden = view
        out: dict[str, Any] = {f"{h}": ("not kept",) for h in hidden}
        for f in shown:
            out.setdefault(f"{f.side}:{f.path}", []).append((f.storage_class, repr(f.value)))
        return {k: tuple(v) if isinstance(v, list) else v for k, v in out.items()}

    before, after = state(now), state(draft)
    return frozenset(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def exchanges_for_preview(*, limit: int = 50) -> list[Exchange]:
    """The latest exchanges with tool calls, for the policy preview's picker: each with its
    conversation's backend id and customer, and ``tools``: the tool names it called."""
    tools = (
        Block.objects.filter(message__exchange=OuterRef("pk"), block_class=Block.Class.AUDIT)
        .exclude(tool_name="")
        .values("message__exchange")
        .annotate(names=ArrayAgg("tool_name", distinct=True, order_by="tool_name"))
        .values("names")[:1]
    )
    return list(
        Exchange.objects.filter(tool_call_count__gt=0)
        .select_related("conversation")
        .only(
            "pk",
            "ordinal",
            "response_model",
            "requested_model",
            "created_at",
            "conversation__external_id",
            "conversation__customer_external_id",
        )
        .annotate(tools=Subquery(tools))
        .order_by("-pk")[:limit]
    )


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
    messages = list(
        Message.objects.filter(
            conversation_id=conversation_id, sequence__lte=_last_sequence(exchange)
        )
        .order_by("sequence")
        .values_list("sequence", "role", "raw_ciphertext", "exchange_id", "exchange__format")
    )
    key = data_key_for(conversation_id)
    tool_names: dict[str, str] = {}
    out = []
    for sequence, role, sealed, message_exchange, fmt in messages:
        blocks = message_blocks(fmt, decrypt_message(key, conversation_id, sequence, sealed))
        previews = []
        for block in blocks:
            if block.call_id and block.tool_name:
                tool_names.setdefault(block.call_id, block.tool_name)
            if message_exchange != exchange_id:
                continue
            tool = tool_names.get(block.call_id or "", "")
            now_row = project_block(block, current, tool)
            draft_row = project_block(block, proposed, tool)
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
        if message_exchange == exchange_id:
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
    # The agent's workspace (workspace/search.py, workspace/status.py): what a pasted query
    # matched exactly, where the conversation stands, and the cursor of the newer page.
    conversation: str = ""
    ticket: str = ""
    identifier: str = ""
    status: str = ""
    before: str = ""


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
    page whatever its length. With ``before`` (the newer page's cursor) the page is the one just
    above it, and the cursor returned is the next newer page's (None at the top).
    """
    qs = _filtered(visible, filters)
    if filters.before and (cursor := _after(filters.before)) is not None:
        at, pk = cursor
        qs = qs.filter(last_activity_at__gte=at).filter(
            Q(last_activity_at__gt=at) | Q(last_activity_at=at, pk__gt=pk)
        )
        newer: list[Conversation] = list(qs.order_by("last_activity_at", "pk")[: limit + 1])
        more = len(newer) > limit
        page = list(reversed(newer[:limit]))
        return page, (_cursor(page[0]) if more else None)
    if filters.after and (cursor := _after(filters.after)) is not None:
        at, pk = cursor
        # The redundant "<=" lets PostgreSQL start the index scan at the cursor.
        qs = qs.filter(last_activity_at__lte=at).filter(
            Q(last_activity_at__lt=at) | Q(last_activity_at=at, pk__lt=pk)
        )
    qs = qs.order_by("-last_activity_at", "-pk")
    rows: list[Conversation] = list(qs[: limit + 1])
    next_cursor = _cursor(rows[limit - 1]) if len(rows) > limit else None
    return rows[:limit], next_cursor


def conversation_cursor(row: Conversation) -> str:
    """The keyset cursor of a row (for the newer page's ``before``)."""
    return _cursor(row)


def conversation_count(
    visible: QuerySet[Conversation], filters: ListFilters, *, cap: int = 1000
) -> int:
    """How many conversations the filters keep, counted up to ``cap`` (``cap + 1`` means "more
    than cap"): ``SELECT count(*) FROM (... LIMIT cap + 1)`` stops early, so the count costs at
    most ``cap`` index entries whatever the size of the store."""
    return _filtered(visible, filters).order_by()[: cap + 1].count()


def _filtered(visible: QuerySet[Conversation], filters: ListFilters) -> QuerySet[Conversation]:
    """``visible`` narrowed by every filter but the cursors."""
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
    if filters.conversation:
        qs = qs.filter(external_id=filters.conversation)
    if filters.ticket:
        from .workspace.search import TICKET_LABEL

        qs = qs.alias(ticket=KT(f"labels__{TICKET_LABEL}")).filter(ticket=filters.ticket)
    if filters.identifier:
        from .workspace.search import identifier_filter

        # IN (...) rather than EXISTS: the GIN index finds the few conversations first.
        carrying = Block.objects.filter(identifier_filter(filters.identifier))
        qs = qs.filter(pk__in=carrying.values("conversation_id"))
    if filters.status:
        qs = qs.filter(status=filters.status)
    return qs


@dataclass(frozen=True)
class RowExtra:
    """What a list row shows beyond the conversation's own columns."""

    snippet: str  # the last visible message's text, redacted, on one line
    snippet_role: str
    model: str  # the latest exchange's model snapshot (or the model asked for)


def conversation_row_extras(ids: list[int]) -> dict[int, RowExtra]:
    """Per conversation of a page: the last visible message's snippet and the latest exchange's
    model. One query for the page (two correlated subqueries per row, each an index range on
    the conversation), whatever the page's or the conversations' length."""
    if not ids:
        return {}
    last_text = (
        Block.objects.filter(
            conversation=OuterRef("pk"), block_class=Block.Class.VISIBLE, message__superseded=False
        )
        .exclude(text="")
        .order_by("-message__sequence", "-position")
        .values(snippet=JSONObject(text=Left("text", 400), role="message__role"))[:1]
    )
    latest = (
        Exchange.objects.filter(conversation=OuterRef("pk"))
        .order_by("-ordinal")
        .values(model=JSONObject(response="response_model", requested="requested_model"))[:1]
    )
    rows = Conversation.objects.filter(pk__in=ids).values_list(
        "pk",
        Subquery(last_text, output_field=JSONField()),
        Subquery(latest, output_field=JSONField()),
    )
    out = {}
    for pk, snippet, model in rows:
        snippet = snippet or {}
        model = model or {}
        out[pk] = RowExtra(
            snippet=" ".join(str(snippet.get("text") or "").split()),
            snippet_role=str(snippet.get("role") or ""),
            model=str(model.get("response") or model.get("requested") or ""),
        )
    return out


# Distinct values offered as filter choices, cached (they change as rarely as models do): the
# store is not scanned on every page.
_CHOICES_KEY = "conversations:list-choices:v1"
_CHOICES_SECONDS = 600


def exchange_choices() -> dict[str, list[str]]:
    """The model snapshots and finish reasons stored, for the list's filters. Cached in the
    shared cache for ten minutes (the values are model names and provider strings, nothing
    personal); a value newer than the cache can still be filtered on, it is only not offered."""
    from django.core.cache import cache

    cached = cache.get(_CHOICES_KEY)
    if cached is not None:
        return dict(cached)
    values = {
        "model": sorted(
            set(
                Exchange.objects.exclude(response_model="")
                .values_list("response_model", flat=True)
                .distinct()
            )
        ),
        "finish": sorted(
            set(
                Exchange.objects.exclude(stop_reason="")
                .values_list("stop_reason", flat=True)
                .distinct()
            )
        ),
    }
    cache.set(_CHOICES_KEY, values, _CHOICES_SECONDS)
    return values


def exchange_choices_forget() -> None:
    """The next list page reads the choices afresh (tests; a deployment just waits)."""
    from django.core.cache import cache

    cache.delete(_CHOICES_KEY)
