"""The audited selectors of the conversation pages: access, the tuned queries, the audit row.

Each page's data comes from one function here, shaped like ``reviews.review_read``:

1. it checks access: a conversation the user may not see raises ``Http404``, like a missing one
   (invariant 8);
2. it runs the selectors, which return everything the template needs (no query at render time
   beyond the fixed few a page's header makes);
3. it writes the audit row as its very last statement, in the same transaction as the reads
   (invariant 6: no audit row, no read);
4. it returns a plain dataclass; the view renders it after the transaction has committed.

``audit.record`` takes no shared lock (audit/services.py), so nothing a page does here makes
another page wait. To add a page: write its ``<thing>_read(*, user, ...)`` here, decorated with
``@transaction.atomic``, with its audit event registered in ``audit/registry.py``; the view calls
it and renders; a test pins its query count.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.http import Http404
from django.utils import timezone

import audit

from ..cache_errors import CACHE_ERRORS
from ..live import state as live_state
from ..models import (
    Conversation,
    Exchange,
    ReviewAccessRequest,
    ReviewAlert,
    ReviewGrant,
    ShareLink,
)
from ..permissions import (
    access_conversation,
    is_console_admin,
    require_compliance,
    require_reader,
    visible_conversations,
    visible_queues,
)
from ..projection.project import Rule
from ..reviews import review_alerts_recent, review_grant_live, review_grants_recent
from ..reviews.access import review_access_mine
from ..reviews.grants import is_reviewer
from ..selectors import (
    BranchLink,
    ConversationPage,
    ListFilters,
    NoSuchExchange,
    PreviewMessage,
    RowExtra,
    conversation_count,
    conversation_cursor,
    conversation_list,
    conversation_page,
    conversation_row_extras,
    exchange_choices,
    exchange_preview,
)
from ..selectors.prices import cost_by_day
from ..selectors.search import WORDS, Found, Ticket, narrowed, resolve, ticket_of
from ..sharing.notes import annotate, note_templates
from ..sharing.selectors import share_links_of
from ..workspace.customer import COST_DAYS, OTHERS, CustomerPanel, customer_panel
from ..workspace.folds import fold_timeline
from ..workspace.status import ESCALATED
from ..workspace.timeline import Timeline, ToolCall, build_timeline
from ..workspace.waterfall import Waterfall, build_waterfall

__all__ = [
    "ConversationList",
    "ConversationView",
    "LiveNow",
    "PolicyPreview",
    "ToolCallView",
    "conversation_list_read",
    "conversation_live_read",
    "conversation_read",
    "exchange_preview_read",
    "live_now_count",
    "live_now_read",
    "review_grants_read",
    "tool_call_read",
]


COUNT_CAP = 1000


@dataclass(frozen=True)
class ConversationList:
    rows: list[Conversation]
    next_cursor: str | None  # the older page
    audit_id: int
    # What the search box's query was taken as (selectors/search.py), and the conversation to
    # go straight to when it named exactly one.
    found: Found | None = None
    go_to: int | None = None
    extras: dict[int, RowExtra] = field(default_factory=dict)
    newer_cursor: str | None = None
    # How many match, counted up to COUNT_CAP (COUNT_CAP + 1: more); None where counting would
    # cost a scan (a word search running over several pages).
    total: int | None = None
    awaiting: int = 0  # escalated conversations awaiting a person, counted up to COUNT_CAP + 1
    queues: list[str] = field(default_factory=list)  # the queues the user sees
    choices: dict[str, list[str]] = field(default_factory=dict)  # snapshots, finish reasons


@dataclass(frozen=True)
class ConversationView:
    page: ConversationPage
    can_review: bool
    audit_id: int
    timeline: Timeline | None = None
    ticket: Ticket | None = None
    share_links: list[ShareLink] = field(default_factory=list)  # sharing/: newest first
    waterfall: Waterfall | None = None  # workspace/waterfall.py: timing and cost per turn
    customer: CustomerPanel | None = None
    # A reviewer without a live grant may ask for one (reviews/access.py); their latest request.
    can_ask_review: bool = False
    review_request: ReviewAccessRequest | None = None
    # Where the path shown branched, each with the turn it links to (conversations/branches.py).
    branch_links: list[BranchLink] = field(default_factory=list)
    # The viewer is a console admin: the backend's conformance is shown (a rewritten history
    # and its price, changes the model does not see). Never to anyone else (DESIGN section 20).
    conformance: bool = False


@transaction.atomic
def conversation_list_read(
    *,
    user: Any,
    filters: ListFilters,
    used: list[str],
    limit: int = 50,
    match: str = "",
    page: str = "list",
) -> ConversationList:
    """One page of the conversations ``user`` may see. ``used``: the names of the filters that
    were set, for the audit row (never their values: a customer id is an external id).

    ``filters.q`` is the search box: looked up first as an exact id (``selectors.search``;
    ``match`` forces what it is taken as). A conversation id, or a ticket only one conversation
    carries, comes back as ``go_to`` with no list read; anything else narrows the list."""
    require_reader(user)
    found = None
    query = filters.q
    if filters.q:
        found = resolve(visible_conversations(user), filters.q, match=match)
        if found.conversation is not None:
            event = audit.record(
                "conversation.searched",
                actor=user,
                query_hash=audit.query_hash(filters.q),
                filters=sorted(used),
                results=1,
                page="list",
                match=found.kind,
            )
            return ConversationList([], None, event.pk, found=found, go_to=found.conversation)
        filters = narrowed(filters, found, filters.q)
    # The list's queries name the queues rather than repeat the grants' subquery.
    queues = list(visible_queues(user).order_by("name").values_list("name", flat=True))
    visible = visible_conversations(user, queues=queues)
    rows, cursor = conversation_list(visible, filters, limit=limit)
    if filters.before:
        newer, older = cursor, (conversation_cursor(rows[-1], filters.sort) if rows else None)
    else:
        newer = conversation_cursor(rows[0], filters.sort) if rows and filters.after else None
        older = cursor
    paged = bool(filters.after or filters.before)
    total: int | None
    if not filters.q:
        total = conversation_count(visible, filters, cap=COUNT_CAP)
    else:  # words: counted only when the whole answer is this one page
        total = len(rows) if not paged and older is None else None
    awaiting = visible.filter(status=ESCALATED).order_by()[: COUNT_CAP + 1].count()
    extras = conversation_row_extras([r.pk for r in rows])
    if query:
        event = audit.record(
            "conversation.searched",
            actor=user,
            query_hash=audit.query_hash(query),
            filters=sorted(used),
            results=len(rows),
            page=page,
            match=found.kind if found else WORDS,
        )
    else:
        event = audit.record(
            "conversation.listed", actor=user, filters=sorted(used), results=len(rows), page=page
        )
    return ConversationList(
        rows,
        older,
        event.pk,
        found=found,
        extras=extras,
        newer_cursor=newer,
        total=total,
        awaiting=awaiting,
        queues=queues,
        choices=exchange_choices(),
    )


def _page_or_404(conversation: Conversation, user: Any, exchange: int | None) -> ConversationPage:
    try:
        return conversation_page(
            conversation,
            can_see_restricted=user.has_perm("conversations.view_restricted_fields"),
            exchange=exchange,
            priced=True,  # the timing panel's prices, in the exchanges' own query
        )
    except NoSuchExchange:
        raise Http404("no such exchange in this conversation") from None


@transaction.atomic
def conversation_read(*, user: Any, id: int, exchange: int | None = None) -> ConversationView:
    """A conversation's page: its messages, trail, exchanges and events, as ``user`` may see
    them, and whether ``user`` holds a live review grant on it. The timeline (turns, joined tool
    calls, exchange summaries, events in sentences) is built from the same rows: no query.

    The path shown is the latest (the one the customer saw last), or exchange ``exchange``'s (an
    id: another branch, 404 when the conversation has no such exchange); the view says where it
    branched, each point linked to its turn."""
    require_reader(user)
    conversation = access_conversation(user, id)
    page = _page_or_404(conversation, user, exchange)
    conformance = is_console_admin(user)
    can_review = review_grant_live(user=user, conversation_id=conversation.pk) is not None
    can_ask = not can_review and is_reviewer(user)
    asked = review_access_mine(user=user, conversation_id=conversation.pk) if can_ask else None
    timeline = build_timeline(page, conformance=conformance)
    timeline.folded = fold_timeline(timeline)  # a long turn's middle calls: on demand
    annotate(timeline.calls.values(), note_templates())
    branch_links = [
        replace(
            link, anchor="" if link.sequence is None else timeline.turn_of.get(link.sequence, "")
        )
        for link in (page.path.links if page.path is not None else [])
    ]
    links = share_links_of(conversation)
    waterfall = build_waterfall(page, timeline)
    others = list(
        visible_conversations(user)
        .filter(customer_external_id=conversation.customer_external_id)
        .exclude(pk=conversation.pk)
        .only("pk", "external_id", "queue", "status", "last_activity_at")
        .order_by("-last_activity_at", "-pk")[: OTHERS + 1]
    )
    costs = cost_by_day(
        conversations=visible_conversations(user).filter(
            customer_external_id=conversation.customer_external_id
        ),
        since=timezone.now() - timedelta(days=COST_DAYS),
        until=timezone.now() + timedelta(days=1),
        zone=timezone.get_current_timezone_name(),
    )
    customer = customer_panel(
        customer=conversation.customer_external_id, rows=others, timeline=timeline, costs=costs
    )
    event = audit.record(
        "conversation.viewed", actor=user, conversation_id=conversation.pk, page="detail"
    )
    return ConversationView(
        page,
        can_review,
        event.pk,
        timeline=timeline,
        ticket=ticket_of(conversation.labels),
        share_links=links,
        waterfall=waterfall,
        customer=customer,
        can_ask_review=can_ask,
        review_request=asked,
        branch_links=branch_links,
        conformance=conformance,
    )


@dataclass(frozen=True)
class ToolCallView:
    conversation: Conversation
    call: ToolCall
    audit_id: int


@transaction.atomic
def tool_call_read(*, user: Any, id: int, call: str) -> ToolCallView:
    """One tool call of a conversation in full (the trail's expansion): every field it keeps
    as ``user`` may see them, its result, timing and the exchanges it spans. 404 for a call the
    conversation does not have (its key is "<message sequence>-<block position>")."""
    require_reader(user)
    conversation = access_conversation(user, id)
    sequence = call.split("-", 1)[0]
    # The path that goes through the call's message (the latest such): any branch's call opens.
    page = conversation_page(
        conversation,
        can_see_restricted=user.has_perm("conversations.view_restricted_fields"),
        holding=int(sequence) if sequence.isascii() and sequence.isdigit() else None,
    )
    found = build_timeline(page).calls.get(call)
    if found is None:
        raise Http404("no such tool call")
    annotate([found], note_templates())
    event = audit.record(
        "conversation.viewed", actor=user, conversation_id=conversation.pk, page="tool-call"
    )
    return ToolCallView(conversation, found, event.pk)


@dataclass(frozen=True)
class PolicyPreview:
    exchange: Exchange
    messages: list[PreviewMessage]


@transaction.atomic
def exchange_preview_read(*, user: Any, exchange_id: int, draft: Rule) -> PolicyPreview | None:
    """The field-policy admin's preview of one exchange under a draft (``exchange_preview``),
    for a console admin; a read of the conversation, so audited like one (page
    "policy-preview"). None for an exchange that does not exist."""
    if not is_console_admin(user):
        raise Http404("no such page")
    exchange = Exchange.objects.select_related("conversation").filter(pk=exchange_id).first()
    if exchange is None:
        return None
    messages = exchange_preview(exchange_id=exchange.pk, draft=draft) or []
    audit.record(
        "conversation.viewed",
        actor=user,
        conversation_id=exchange.conversation_id,
        page="policy-preview",
    )
    return PolicyPreview(exchange, messages)


@dataclass(frozen=True)
class ReviewGrants:
    rows: list[tuple[ReviewGrant, str]]  # each grant and its state: live, expired or revoked
    alerts: list[ReviewAlert]


@transaction.atomic
def review_grants_read(*, user: Any) -> ReviewGrants:
    """Compliance: the review grants of the last 30 days and the review alerts."""
    require_compliance(user)
    grants = list(review_grants_recent())
    alerts = list(review_alerts_recent())
    now = timezone.now()
    rows = [
        (g, "revoked" if g.revoked_at else ("live" if g.expires_at > now else "expired"))
        for g in grants
    ]
    audit.record(
        "audit.viewed", actor=user, page="review-grants", results=len(grants) + len(alerts)
    )
    return ReviewGrants(rows, alerts)


# --- live conversations (DESIGN section 10) ----------------------------------------------------


@transaction.atomic
def conversation_live_read(*, user: Any, id: int) -> int:
    """A subscription to a conversation's live stream: the same access as its page (404 for
    missing and forbidden alike), audited once per subscription (each reconnect is one). The
    stream's events are the live filter's visible events only; the view relays them."""
    require_reader(user)
    conversation = access_conversation(user, id)
    audit.record("conversation.viewed", actor=user, conversation_id=conversation.pk, page="live")
    return conversation.pk


@dataclass(frozen=True)
class LiveNow:
    conversations: list[Conversation]


def live_now_count(*, user: Any) -> int:
    """How many of the conversations streaming an answer ``user`` may see: the menu's count.
    A number that names no conversation: no audit row. One Redis read; a query only while
    something is live."""
    try:
        pks = live_state.live_now()
    except CACHE_ERRORS:
        return 0
    return visible_conversations(user).filter(pk__in=pks).count() if pks else 0


@transaction.atomic
def live_now_read(*, user: Any) -> LiveNow:
    """The conversations with an exchange in flight that ``user`` may see, newest first."""
    require_reader(user)
    try:
        pks = live_state.live_now()
    except CACHE_ERRORS:  # Redis down: no stream can be watched, the page says none is live
        pks = []
    rows = {c.pk: c for c in visible_conversations(user).filter(pk__in=pks)}
    found = [rows[pk] for pk in pks if pk in rows]
    audit.record("conversation.listed", actor=user, page="live-now", results=len(found), filters=[])
    return LiveNow(found)
