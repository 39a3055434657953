"""The conversation page's reads, the replay's, and small lookups."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from ..branches import Node, Tree, branch_words, common_prefix
from ..continuation import Continuation, continuation, thinking_regime
from ..keystore.keys import data_key_for, decrypt_message
from ..models import Block, Conversation, ConversationEvent, Exchange, Message, UnknownBlockType
from ..projection.policies import tool_links
from ..projection.project import restricted_paths, view_fields
from .prices import price_from_row, price_row

# A conversation with at least this many tool calls is flagged "many tool calls".
MANY_TOOL_CALLS = 5


def conversation_by_external_id(external_id: str) -> Conversation | None:
    return Conversation.objects.filter(external_id=external_id).first()


def conversation_owner_by_external_id(external_id: str) -> tuple[int, str] | None:
    """The conversation's id and customer (one narrow row: on the hot path of live chunks)."""
    return (
        Conversation.objects.filter(external_id=external_id)
        .values_list("pk", "customer_external_id")
        .first()
    )


def conversation_tree(conversation_id: int) -> tuple[Tree, dict[int, int]]:
    """The conversation's exchanges as paths (``branches.py``), and each one's id by ordinal
    (one narrow query)."""
    rows = (
        Exchange.objects.filter(conversation_id=conversation_id)
        .order_by("ordinal")
        .values_list(
            "pk", "ordinal", "path_parent", "path_kept", "path_added", "branch", "branched_at"
        )
    )
    ids: dict[int, int] = {}
    nodes = []
    for pk, ordinal, parent, kept, added, branch, at in rows:
        ids[ordinal] = pk
        nodes.append(Node(ordinal, parent, kept, tuple(added or ()), branch, at))
    return Tree(nodes), ids


class NoSuchExchange(LookupError):
    """An exchange asked for by id that the conversation does not have."""


def _shown(tree: Tree, ids: dict[int, int], exchange: int | None) -> int | None:
    """The ordinal of the exchange whose path is read: ``exchange`` (an id) or the latest."""
    if exchange is None:
        return tree.latest
    ordinal = next((o for o, pk in ids.items() if pk == exchange), None)
    if ordinal is None:
        raise NoSuchExchange(exchange)
    return ordinal


def conversation_message_raws(
    conversation: Conversation, *, exchange: int | None = None
) -> list[str]:
    """The raw texts of a path's messages, decrypted, in path order: what replay returns. The
    latest exchange's path (its history and answer), or exchange ``exchange``'s (an id of this
    conversation's; ``NoSuchExchange`` otherwise)."""
    tree, ids = conversation_tree(conversation.pk)
    ordinal = _shown(tree, ids, exchange)
    if ordinal is None:
        return []
    path = tree.path(ordinal)
    sealed = dict(
        Message.objects.filter(conversation=conversation, sequence__in=set(path)).values_list(
            "sequence", "raw_ciphertext"
        )
    )
    if not sealed:
        return []
    key = data_key_for(conversation.pk)
    return [
        decrypt_message(key, conversation.pk, seq, sealed[seq]) for seq in path if seq in sealed
    ]


def conversation_stored_raws(conversation: Conversation) -> list[str]:
    """Every stored message's raw text, decrypted, in sequence order: every branch, and the
    messages no path goes through any more (superseded versions)."""
    sealed = list(
        Message.objects.filter(conversation=conversation)
        .order_by("sequence")
        .values_list("sequence", "raw_ciphertext")
    )
    if not sealed:
        return []
    key = data_key_for(conversation.pk)
    return [decrypt_message(key, conversation.pk, seq, ct) for seq, ct in sealed]


def _exchanges_of(conversation: Conversation, exchange: int | None) -> Any:
    rows = Exchange.objects.filter(conversation=conversation)
    return rows.filter(pk=exchange) if exchange is not None else rows.order_by("-ordinal")


def conversation_format(conversation: Conversation, *, exchange: int | None = None) -> str:
    """The provider format of the conversation's latest exchange, or of exchange ``exchange``
    (an id): the one whose path is replayed ("" for none)."""
    fmt = _exchanges_of(conversation, exchange).values_list("format", flat=True).first()
    return fmt or ""


def conversation_model(conversation: Conversation, *, exchange: int | None = None) -> str:
    """The model of the conversation's latest exchange (or of exchange ``exchange``): the
    snapshot that served it, else the one requested ("" for none). The continuation rules are
    keyed by it."""
    row = (
        _exchanges_of(conversation, exchange)
        .values_list("response_model", "requested_model")
        .first()
    )
    return (row[0] or row[1] or "") if row else ""


def conversation_continuation(
    conversation: Conversation, raws: list[str], *, exchange: int | None = None
) -> Continuation:
    """What the backend sends back next turn of a path's ``raws`` (``conversation_message_raws``):
    the continuation rule of its format and model, under the account's thinking regime (the
    deployment's ``ANTHROPIC_THINKING_REGIME`` and ``ANTHROPIC_ACCOUNT_CREATED``)."""
    created = settings.ANTHROPIC_ACCOUNT_CREATED
    regime = thinking_regime(
        settings.ANTHROPIC_THINKING_REGIME, date.fromisoformat(created) if created else None
    )
    return continuation(
        conversation_format(conversation, exchange=exchange),
        raws,
        model=conversation_model(conversation, exchange=exchange),
        regime=regime,
    )


def unknown_block_types() -> QuerySet[UnknownBlockType]:
    return UnknownBlockType.objects.order_by("-last_seen_at")


def conversation_rows(*, limit: int) -> QuerySet[Conversation]:
    """Newest activity first."""
    return Conversation.objects.order_by("-last_activity_at", "-id")[:limit]


@dataclass(frozen=True)
class BranchLink:
    """Where the path shown and another branch part (``branches.BranchPoint``), for the page:
    the words ("regenerated at message 7"), the message it happened at and the id of the other
    branch's latest exchange."""

    at: int
    words: str
    sequence: int | None  # the message at ``at`` on the path shown (None: the path ends before)
    other: int
    left: bool  # the path shown is the branch: it left the other one here
    anchor: str = ""  # its turn's key on the page (set by the audited selector from the timeline)


@dataclass(frozen=True)
class PathShown:
    """Which path a page shows: exchange ``exchange`` (an id; ordinal ``ordinal``), whether it
    is the latest (the path the customer saw last), the latest's id, how many branches the
    conversation has (1: it never branched) and where the path shown parts from the others."""

    exchange: int | None
    ordinal: int | None
    latest: bool
    latest_exchange: int | None
    branches: int
    links: list[BranchLink]


@dataclass(frozen=True)
class OtherBranch:
    """Another branch of the conversation, for what must cover every branch (exports, subject
    access): where it leaves the path shown (``at``, from 0), in words, and its own page (its
    whole path, from which a reader takes the turns from ``at`` on)."""

    at: int
    words: str
    page: ConversationPage


@dataclass(frozen=True)
class ConversationPage:
    conversation: Conversation
    exchanges: list[Exchange]  # those of the path shown, in order
    messages: list[Message]  # the path shown, in order
    events: list[ConversationEvent]
    path: PathShown | None = None
    others: list[OtherBranch] = field(default_factory=list)  # every_branch=True only


def _path_shown(
    tree: Tree, ids: dict[int, int], ordinal: int | None, path: tuple[int, ...]
) -> PathShown:
    latest = tree.latest
    if ordinal is None:
        return PathShown(None, None, True, None, 0, [])
    links = []
    for point in tree.branch_points(ordinal):
        sequence = path[point.at] if point.at < len(path) else None
        links.append(BranchLink(point.at, point.words, sequence, ids[point.other], point.left))
    return PathShown(
        ids[ordinal],
        ordinal,
        ordinal == latest,
        ids.get(latest) if latest is not None else None,
        len(tree.tips()),
        links,
    )


def _holding(tree: Tree, sequence: int) -> int | None:
    """The latest exchange whose path goes through message ``sequence`` (the latest when none
    does)."""
    for ordinal in sorted(tree.nodes, reverse=True):
        if sequence in tree.path(ordinal):
            return ordinal
    return tree.latest


def _up_to(tree: Tree, sequence: int) -> int | None:
    """The latest exchange whose path was whole when message ``sequence`` was the last stored
    (a share link's boundary)."""
    for ordinal in sorted(tree.nodes, reverse=True):
        if all(s <= sequence for s in tree.path(ordinal)):
            return ordinal
    return tree.latest


def conversation_page(
    conversation: Conversation,
    *,
    can_see_restricted: bool,
    exchange: int | None = None,
    up_to: int | None = None,
    holding: int | None = None,
    every_branch: bool = False,
    priced: bool = False,
) -> ConversationPage:
    """A conversation with the exchanges, messages, blocks and events of one path, in a fixed
    number of queries: the latest path (the one the customer saw last), exchange ``exchange``'s
    (an id; ``NoSuchExchange`` when the conversation has none such), or the latest that was
    whole when message ``up_to`` was the last (a share link's boundary), or the latest that goes
    through message ``holding`` (a tool call's page). ``every_branch``: the
    other branches too, each as a page of its own (``others``), for what covers every branch.

    Each message gets ``page_blocks`` (its blocks in order) and its exchange (from the
    exchanges read here: no second copy per message); each AUDIT block ``shown`` and
    ``hidden``: its fields as this viewer may see them (``projection.view_fields``). The
    encrypted raw text and the blocks' search vectors are deferred: pages show projections
    only. The blocks are grouped here rather than by ``prefetch_related``, which builds a
    queryset per message (a fifth of a 201-message page's time, ``bench/console.py``).

    ``priced``: each exchange also gets ``price``, the price table's row it is billed by (its
    snapshot's, else its alias's; None), read in the exchanges' own query: the timing panel's
    prices cost the page no query of their own, however many models it names.
    """
    rows_of = Exchange.objects.filter(conversation=conversation).defer("settings_ciphertext")
    if priced:
        rows_of = rows_of.annotate(price_row=price_row())
    exchanges = list(rows_of.order_by("ordinal"))
    if priced:
        for e in exchanges:
            e.price = price_from_row(e.price_row)  # type: ignore[attr-defined]
    by_id = {e.pk: e for e in exchanges}
    by_ordinal = {e.ordinal: e for e in exchanges}
    tree = Tree(
        Node(e.ordinal, e.path_parent, e.path_kept, tuple(e.path_added or ()), e.branch,
             e.branched_at)
        for e in exchanges
    )  # fmt: skip
    ids = {e.ordinal: e.pk for e in exchanges}
    if up_to is not None:
        ordinal = _up_to(tree, up_to)
    elif holding is not None:
        ordinal = _holding(tree, holding)
    else:
        ordinal = _shown(tree, ids, exchange)
    path = tree.path(ordinal) if ordinal is not None else ()
    other_tips = [t for t in tree.tips() if t != ordinal] if every_branch else []
    wanted = set(path).union(*(tree.path(t) for t in other_tips))
    rows = {
        m.sequence: m
        for m in Message.objects.filter(conversation=conversation, sequence__in=wanted).defer(
            "raw_ciphertext"
        )
    }
    grouped: dict[int, list[Block]] = {}
    for message in rows.values():
        if message.exchange_id in by_id:  # always, unless a row was changed by hand
            message.exchange = by_id[message.exchange_id]
        message.page_blocks = grouped.setdefault(message.pk, [])
    links = tool_links()
    blocks = (
        Block.objects.filter(conversation=conversation, message_id__in=list(grouped))
        .defer("search")
        .order_by("message_id", "position")
    )
    for block in blocks:
        if block.block_class == Block.Class.AUDIT:
            block.shown, block.hidden = view_fields(
                block.fields,
                tool_name=block.tool_name,
                can_see_restricted=can_see_restricted,
                links=links,
            )
            block.restricted = restricted_paths(block.fields, can_see_restricted=can_see_restricted)
        grouped[block.message_id].append(block)
    events = list(conversation.events.order_by("at", "pk"))

    def page_of(o: int | None, seqs: tuple[int, ...]) -> tuple[list[Exchange], list[Message]]:
        chain = [by_ordinal[c] for c in tree.chain(o)] if o is not None else []
        return chain, [rows[s] for s in seqs if s in rows]

    chain, messages = page_of(ordinal, path)
    others = []
    for tip in other_tips:
        tip_path = tree.path(tip)
        at = common_prefix(path, tip_path)
        words = branch_words(*tree.parting(ordinal, tip)) if ordinal is not None else ""
        tip_chain, tip_messages = page_of(tip, tip_path)
        others.append(
            OtherBranch(at, words, ConversationPage(conversation, tip_chain, tip_messages, []))
        )
    return ConversationPage(
        conversation, chain, messages, events, _path_shown(tree, ids, ordinal, path), others
    )
