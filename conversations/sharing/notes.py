"""Work notes: the app's own progress line for a tool call, templated by an admin per tool.

A template names fields by their key, ``{order_id}``, looked up in the call's kept fields (the
result's first, then the input's) at ``$.order_id``. Only fields every viewer sees may be named:
``identifier``, ``status`` and ``display`` (display values are kept redacted). A template naming a
field whose policy is ``drop`` or ``restricted`` (or, with no policy, whose key defaults to
``drop``) is refused when it is saved, naming the field (``check_template``); at render time only
fields of those classes are read, so a policy changed later blanks the value ("…") instead of
leaking it, and the note reads the same to every viewer.

Pure functions plus ``note_templates`` (one query).
``work_note(call, templates)`` is the one renderer: the trail, the export, the share page and the
live view all call it.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping
from typing import Any

from ..models import WorkNote
from ..projection.classes import DISPLAY, DROP, IDENTIFIER, RESTRICTED, STATUS, default_class
from ..projection.project import Policies

SHOWN = frozenset({IDENTIFIER, STATUS, DISPLAY})
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MISSING = "…"


class TemplateRefused(ValueError):
    def __init__(self, detail: str, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


def placeholders(template: str) -> list[str]:
    """The names a template uses, in order; refuses anything but ``{name}`` placeholders."""
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise TemplateRefused(f"not a template: {exc}") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not NAME_RE.match(name) or spec or conversion:
            raise TemplateRefused(
                f"{{{name}}}: a placeholder is a field's key, letters, digits and _ only",
                field=name,
            )
        names.append(name)
    return names


def check_template(*, tool: str, template: str, policies: Policies) -> list[str]:
    """The placeholders of ``template``, or ``TemplateRefused`` naming the first field a note may
    not show: a rule for this tool (or ``*``) that drops or restricts it on either side, or no
    rule at all and a key that defaults to ``drop``."""
    names = placeholders(template)
    for name in names:
        path = f"$.{name}"
        classes = {
            r.storage_class for r in policies.rules() if r.path == path and r.tool in ("*", tool)
        }
        if not classes:
            classes = {default_class(name)}
        refused = classes & {DROP, RESTRICTED}
        if refused:
            cls = sorted(refused)[0]
            raise TemplateRefused(
                f"{{{name}}} is a {cls} field of {tool}: a work note may name only identifier, "
                "status and display fields",
                field=name,
            )
    return names


def note_templates() -> dict[str, str]:
    """The templates by tool: one small query per page. (Not cached per process like the
    policies: a page reads it once, and a cache would make a page's query count depend on
    whether another process changed a note.)"""
    return dict(WorkNote.objects.values_list("tool_name", "template"))


def _value(call: Any, name: str) -> Any:
    path = f"$.{name}"
    for side in (call.outputs, call.inputs):
        for f in side:
            if f.path == path and f.storage_class in SHOWN:
                return f.value
    return None


def work_note(call: Any, templates: Mapping[str, str]) -> str:
    """The note of one tool call (a ``workspace.timeline.ToolCall``), or "" without a template.
    A value the call does not keep (yet: a call awaiting its result) reads "…"."""
    template = templates.get(call.name)
    if not template:
        return ""
    try:
        names = placeholders(template)
    except TemplateRefused:
        return ""
    values = {}
    for name in names:
        value = _value(call, name)
        values[name] = MISSING if value is None else str(value)
    return template.format_map(values)


def annotate(calls: Iterable[Any], templates: Mapping[str, str]) -> None:
    """Every call's ``note`` (the trail shows it under the call's line)."""
    for call in calls:
        call.note = work_note(call, templates)
