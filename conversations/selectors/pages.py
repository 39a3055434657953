"""The conversation page's reads, the replay's, and small lookups."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from ..keystore.keys import data_key_for, decrypt_message
from ..models import Block, Conversation, ConversationEvent, Exchange, Message, UnknownBlockType
from ..projection.policies import tool_links
from ..projection.project import view_fields

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


def conversation_format(conversation: Conversation) -> str:
    """The provider format of the conversation's latest exchange ("" for none)."""
    fmt = (
        Exchange.objects.filter(conversation=conversation)
        .order_by("-ordinal")
        .values_list("format", flat=True)
        .first()
    )
    return fmt or ""


def conversation_model(conversation: Conversation) -> str:
    """The model of the conversation's latest exchange: the snapshot that served it, else the
    one requested ("" for none). The continuation rules are keyed by it."""
    row = (
        Exchange.objects.filter(conversation=conversation)
        .order_by("-ordinal")
        .values_list("response_model", "requested_model")
        .first()
    )
    return (row[0] or row[1] or "") if row else ""


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
    number of queries. Each message gets ``page_blocks`` (its blocks in order) and its exchange
    (from the exchanges read here: no second copy per message); each AUDIT block ``shown`` and
    ``hidden``: its fields as this viewer may see them (``projection.view_fields``).

    The encrypted raw text and the blocks' search vectors are deferred: pages show projections
    only. The blocks are grouped here rather than by ``prefetch_related``, which builds a
    queryset per message (a fifth of a 201-message page's time, ``bench/console.py``).
    """
    exchanges = list(
        Exchange.objects.filter(conversation=conversation)
        .defer("settings_ciphertext")
        .order_by("ordinal")
    )
    by_id = {e.pk: e for e in exchanges}
    messages = list(
        Message.objects.filter(conversation=conversation, superseded=False)
        .defer("raw_ciphertext")
        .order_by("sequence")
    )
    grouped: dict[int, list[Block]] = {}
    for message in messages:
        if message.exchange_id in by_id:  # always, unless a row was changed by hand
            message.exchange = by_id[message.exchange_id]
        message.page_blocks = grouped.setdefault(message.pk, [])
    links = tool_links()
    blocks = (
        Block.objects.filter(conversation=conversation, message__superseded=False)
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
        grouped[block.message_id].append(block)
    events = list(conversation.events.order_by("at", "pk"))
    return ConversationPage(conversation, exchanges, messages, events)
