"""Reads of the conversation store: querysets already tuned for their page or endpoint."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from .formats.registry import message_blocks
from .keys import data_key_for, decrypt_message
from .models import Block, Conversation, Exchange, Message, UnknownBlockType
from .policies import field_policies, tool_links
from .projection import FieldView, Rule, project_block, view_fields


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


def conversation_page(pk: int, *, can_see_restricted: bool) -> ConversationPage | None:
    """A conversation with its exchanges, current messages and blocks, in a fixed number of
    queries. Each AUDIT block gets ``shown`` and ``hidden``: its fields as this viewer may see
    them (``projection.view_fields``); each message its exchange's reasoning token count.

    The encrypted raw text is deferred: pages show projections only.
    """
    conversation = Conversation.objects.filter(pk=pk).first()
    if conversation is None:
        return None
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
    return ConversationPage(conversation, exchanges, messages)


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
