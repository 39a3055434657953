"""The audited selector of a long turn's folded calls (``workspace/folds.py``): the conversation
page shows a turn of many tool calls by its first and last calls and a count; this returns the
calls between, ``folds.PART_CHUNK`` parts at a time, as ``user`` may see them. Shaped like the
page's own read (``audited.conversation_read``): access (404 for missing and forbidden alike), the
same selector, the audit row last."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.http import Http404

import audit

from ..models import Conversation
from ..permissions import access_conversation, require_reader
from ..selectors import conversation_page
from ..sharing.notes import annotate, note_templates
from ..workspace.folds import fold_chunk, fold_timeline
from ..workspace.timeline import Part, build_timeline


@dataclass(frozen=True)
class FoldedParts:
    conversation: Conversation
    turn: str  # the turn's key
    parts: list[Part]
    start: int  # the first part's index in its turn
    next_start: int | None  # where the next chunk starts (None: the fold ends here)
    left: int  # tool calls of the fold after this chunk
    audit_id: int


@transaction.atomic
def turn_parts_read(*, user: Any, id: int, turn: str, start: int) -> FoldedParts:
    """The folded parts of turn ``turn`` (its key, "m<sequence>") from part ``start``: 404 for
    a turn that is not on the latest path, or not folded there, or a ``start`` outside its fold."""
    require_reader(user)
    conversation = access_conversation(user, id)
    page = conversation_page(
        conversation, can_see_restricted=user.has_perm("conversations.view_restricted_fields")
    )
    timeline = build_timeline(page)
    fold_timeline(timeline)
    found = next((t for t in timeline.turns if t.key == turn), None)
    parts, next_start = fold_chunk(found, start) if found is not None else ([], None)
    if found is None or not parts:
        raise Http404("no such folded part")
    annotate([p.tool for p in parts if p.tool is not None], note_templates())
    left = 0
    if next_start is not None:
        end = found.fold.end
        left = sum(1 for p in found.parts[next_start:end] if p.kind == "tool")
    event = audit.record(
        "conversation.viewed", actor=user, conversation_id=conversation.pk, page="turn-parts"
    )
    return FoldedParts(conversation, turn, parts, start, next_start, left, event.pk)
