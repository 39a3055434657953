"""The conversation list: filters, keyset pages both ways, bounded counts, the rows' extras
(snippet, model) and the filters' choices."""

from __future__ import annotations

import base64
import contextlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.postgres.search import SearchQuery
from django.db.models import BooleanField, Exists, JSONField, OuterRef, Q, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT
from django.db.models.functions import JSONObject, Left

from .. import bounds
from ..models import Block, Conversation, Exchange
from .pages import MANY_TOOL_CALLS
from .search import TICKET_LABEL, identifier_filter


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
    # The agent's workspace (selectors/search.py, workspace/status.py): what a pasted query
    # matched exactly, where the conversation stands, and the cursor of the newer page.
    conversation: str = ""
    ticket: str = ""
    identifier: str = ""
    status: str = ""
    before: str = ""
    # The order (SORTS: "" newest activity first) and the support lead's lower bounds.
    sort: str = ""
    min_output: int | None = None
    min_slowest_ms: int | None = None


# The list's orders besides the activity's: the column, highest first, then the id (each has
# its index: models.Conversation.Meta). A cursor of one names it ("output:<value>|<id>").
SORTS = {"output": "output_tokens", "slowest": "slowest_ms"}
SORT_LABELS = {"": "newest activity", "output": "most output tokens", "slowest": "slowest answer"}


FLAGS = {
    "truncated": "truncated",
    "refusal": "refusal",
    "rewritten": "history rewritten",
    "many_tools": f"{MANY_TOOL_CALLS}+ tool calls",
}


def _cursor(row: Conversation, sort: str = "") -> str:
    if sort in SORTS:
        raw = f"{sort}:{getattr(row, SORTS[sort])}|{row.pk}"
    else:
        raw = f"{row.last_activity_at.isoformat()}|{row.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _after(cursor: str, sort: str = "") -> tuple[Any, int] | None:
    """The cursor's (value, id): a time for the activity's order, a number for ``SORTS``; None
    for a cursor the list could not have made (or one of another order)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, pk = raw.rsplit("|", 1)
        if not 0 < int(pk) <= bounds.INT64_MAX:
            return None
        name, _, number = at.partition(":")
        if name in SORTS and number.isascii() and number.isdigit():
            value = int(number)
            return (value, int(pk)) if name == sort and value <= bounds.INT64_MAX else None
        if sort:
            return None
        when = bounds.check_offset(datetime.fromisoformat(at))  # PostgreSQL holds ±15:59
        if when.tzinfo is None:
            return None
        return when, int(pk)
    except (ValueError, UnicodeDecodeError):  # bounds.OutOfBounds is a ValueError
        return None


def conversation_cursor_valid(cursor: str, sort: str = "") -> bool:
    """Whether ``cursor`` is one the list could have made for the order ``sort`` (the console's
    form refuses others)."""
    return _after(cursor, sort) is not None


def conversation_list(
    visible: QuerySet[Conversation], filters: ListFilters, *, limit: int = 50
) -> tuple[list[Conversation], str | None]:
    """One page of conversations, newest activity first (or as ``sort`` says), and the cursor of
    the next page.

    Keyset pagination on (last_activity_at, id), or on (``sort``'s column, id) (``SORTS``, each
    with its index): a page costs the same deep in the list as at its top. Flags are columns of
    the conversation; model and finish reason are EXISTS subqueries; search is a full-text query
    over the visible (redacted) text: one query for the page whatever its length. With
    ``before`` (the newer page's cursor) the page is the one just above it, and the cursor
    returned is the next newer page's (None at the top). The page's rows are read again by id
    (``_page``), so annotations or ``select_related`` on ``visible`` do not carry over: add them
    there.
    """
    qs = _filtered(visible, filters)
    column = SORTS.get(filters.sort, "last_activity_at")
    sort = filters.sort if filters.sort in SORTS else ""
    if filters.before and (cursor := _after(filters.before, sort)) is not None:
        at, pk = cursor
        qs = qs.filter(**{f"{column}__gte": at}).filter(
            Q(**{f"{column}__gt": at}) | Q(**{column: at, "pk__gt": pk})
        )
        newer = _page(qs, (column, "pk"), limit + 1)
        more = len(newer) > limit
        page = list(reversed(newer[:limit]))
        return page, (_cursor(page[0], sort) if more else None)
    if filters.after and (cursor := _after(filters.after, sort)) is not None:
        at, pk = cursor
        if sort:
            # A row comparison: the index scan starts at the cursor itself, not at the first row
            # of its value (clones share their base's counts: thousands of rows may tie).
            qs = qs.alias(past=_row_before(column, at, pk)).filter(past=True)
        else:
            # The redundant "<=" lets PostgreSQL start the index scan at the cursor.
            qs = qs.filter(**{f"{column}__lte": at}).filter(
                Q(**{f"{column}__lt": at}) | Q(**{column: at, "pk__lt": pk})
            )
    rows = _page(qs, (f"-{column}", "-pk"), limit + 1)
    next_cursor = _cursor(rows[limit - 1], sort) if len(rows) > limit else None
    return rows[:limit], next_cursor


def _row_before(column: str, value: Any, pk: int) -> RawSQL:
    """``(column, id) < (value, pk)``, for a sort's cursor (``column`` is one of ``SORTS``).
    Unqualified: the page's ids are read in a subquery whose table Django renames."""
    assert column in SORTS.values()
    return RawSQL(f"({column}, id) < (%s, %s)", (value, pk), output_field=BooleanField())  # noqa: S611


def _page(qs: QuerySet[Conversation], order: tuple[str, str], n: int) -> list[Conversation]:
    """A narrow first query, then the rows, in one statement: the page's ids are found in the
    indexes alone (conv_activity_queue_idx holds the order and the queue; the flag and exchange
    indexes answer the filters), and only the page's rows are read from the table. Selecting
    whole rows while scanning would read a table row for every conversation passed over: with a
    rare filter on a million conversations, tens of thousands of them."""
    ids = qs.order_by(*order).values("pk")[:n]
    return list(Conversation.objects.filter(pk__in=ids).order_by(*order))


def conversation_cursor(row: Conversation, sort: str = "") -> str:
    """The keyset cursor of a row in the order ``sort`` (for the newer page's ``before``)."""
    return _cursor(row, sort if sort in SORTS else "")


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
        qs = qs.alias(ticket=KT(f"labels__{TICKET_LABEL}")).filter(ticket=filters.ticket)
    if filters.identifier:
        # IN (...) rather than EXISTS: the GIN index finds the few conversations first.
        carrying = Block.objects.filter(identifier_filter(filters.identifier))
        qs = qs.filter(pk__in=carrying.values("conversation_id"))
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.min_output is not None:
        qs = qs.filter(output_tokens__gte=filters.min_output)
    if filters.min_slowest_ms is not None:
        qs = qs.filter(slowest_ms__gte=filters.min_slowest_ms)
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

    from ..cache_errors import CACHE_ERRORS

    try:
        cached = cache.get(_CHOICES_KEY)
    except CACHE_ERRORS:  # Redis down: the database answers (the cache is an optimisation)
        cached = None
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
    with contextlib.suppress(*CACHE_ERRORS):
        cache.set(_CHOICES_KEY, values, _CHOICES_SECONDS)
    return values


def exchange_choices_forget() -> None:
    """The next list page reads the choices afresh (tests; a deployment just waits)."""
    from django.core.cache import cache

    cache.delete(_CHOICES_KEY)
