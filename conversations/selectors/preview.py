"""The field-policy preview: an exchange as agents see it now and under a draft policy, side by
side, computed from the verbatim store; nothing is written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import OuterRef, Subquery

from ..models import Block, Exchange, Message
from ..projection.policies import field_policies, tool_links
from ..projection.project import FieldView, Rule, ToolNames, project_blocks, view_fields
from ..projection.stored import stored_blocks
from .pages import MANY_TOOL_CALLS  # noqa: F401


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
