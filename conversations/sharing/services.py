"""The writes of the sharing room: work note templates (share links: ``links.py``, among them
``share_links_revoke_for_user``, which ``console/people/services/base.after_access_lost`` calls)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

import audit

from ..models import WorkNote
from ..projection.policies import field_policies
from .links import share_link_create, share_link_revoke, share_links_revoke_for_user
from .notes import TemplateRefused, check_template

__all__ = [
    "share_link_create",
    "share_link_revoke",
    "share_links_revoke_for_user",
    "work_note_delete",
    "work_note_save",
]


@transaction.atomic
def work_note_save(*, note: WorkNote, actor: Any = None) -> WorkNote:
    """Save a tool's work note template, refused (``ValidationError`` on ``template``, naming
    the field) when it names a field a note may not show under the policies in force."""
    try:
        check_template(
            tool=note.tool_name, template=note.template, policies=field_policies(fresh=True)
        )
    except TemplateRefused as exc:
        raise ValidationError({"template": exc.detail}) from None
    note.full_clean()
    note.save()
    audit.record(
        "work_note.changed", actor=actor, change="saved", tool=note.tool_name, note=note.pk
    )
    return note


@transaction.atomic
def work_note_delete(*, note: WorkNote, actor: Any = None) -> None:
    tool, pk = note.tool_name, note.pk
    note.delete()
    audit.record("work_note.changed", actor=actor, change="deleted", tool=tool, note=pk)
