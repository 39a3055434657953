"""Reads of the conversation store: querysets already tuned for their page or endpoint."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from .keys import data_key_for, decrypt_message
from .models import Block, Conversation, Exchange, Message, UnknownBlockType


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


def conversation_page(pk: int) -> ConversationPage | None:
    """A conversation with its exchanges, messages and blocks, in a fixed number of queries.

    The encrypted raw text is deferred: pages show projections only.
    """
    conversation = Conversation.objects.filter(pk=pk).first()
    if conversation is None:
        return None
    messages = list(
        Message.objects.filter(conversation=conversation, superseded=False)
        .defer("raw_ciphertext")
        .order_by("sequence")
        .prefetch_related(Prefetch("blocks", queryset=Block.objects.order_by("position")))
    )
    exchanges = list(Exchange.objects.filter(conversation=conversation).order_by("id"))
    return ConversationPage(conversation, exchanges, messages)
