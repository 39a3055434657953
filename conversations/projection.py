"""The one projection: from a parsed Block to what a human surface may show (DESIGN section 4).

Every page, API and export reads Block rows; Block rows are written only from ``project_block``,
and read for a person only through ``view_fields``. What a tool's input or result keeps is decided
field by field, by storage class:

===============  ==========================  =================================================
class            kept in the projection      shown
===============  ==========================  =================================================
``identifier``   the value                   yes (linked to the source system if configured)
``status``       the value                   yes
``display``      the value, redacted         yes
``restricted``   the value, redacted         only with ``view_restricted_fields``
``drop``         nothing: ``[not kept]``     no (read it back from the source system)
===============  ==========================  =================================================

A field is addressed by tool name (or ``*``), block type (or ``*``), side (``input`` or
``output``) and a JSON path with ``[*]`` for array items (``$.items[*].sku``). A policy on an
object applies to everything below it that has no policy of its own. Defaults fail closed: a field
with no policy is dropped unless its key is ``id``, ends in ``_id``/``Id`` (identifier) or is
``status`` (status); the tool name, call id and ``is_error`` are columns of their own. Visible
text is always redacted.

To add a storage class: add it to ``CLASSES`` and to ``_keep`` below, and say in ``view_fields``
who sees it.

NEVER and UNKNOWN blocks project to their type and the provider's redaction flag, nothing more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .blocks import Block, BlockClass
from .redaction import redact

IDENTIFIER = "identifier"
STATUS = "status"
DISPLAY = "display"
RESTRICTED = "restricted"
DROP = "drop"
CLASSES = (IDENTIFIER, STATUS, DISPLAY, RESTRICTED, DROP)
SIDES = ("input", "output")

# How far into a tool payload the projection walks, so a hostile payload cannot make it work
# without bound; whatever lies deeper is dropped like any field without a policy.
MAX_DEPTH = 12
MAX_FIELDS = 200
MAX_VALUE_CHARS = 500

# A key printed in a path must look like a schema name: a payload keyed by e-mail addresses or
# names would otherwise leak them through the path of a dropped field.
_SAFE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
_SURROGATES = re.compile(r"[\ud800-\udfff]")
PATH_RE = re.compile(r"^\$(\.[A-Za-z_][A-Za-z0-9_\-]{0,63}|\[\*\])*$")


def clean_text(value: str) -> str:
    """Text PostgreSQL can store: no NUL, no lone surrogate (both arrive through JSON escapes)."""
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    return _SURROGATES.sub("\ufffd", value)


def default_class(key: str) -> str:
    if key == "status":
        return STATUS
    if key == "id" or key.endswith("_id") or key.endswith("Id"):
        return IDENTIFIER
    return DROP


@dataclass(frozen=True, slots=True)
class Rule:
    tool: str  # a tool name, or "*"
    block_type: str  # a provider block type, or "*"
    side: str  # "input" or "output"
    path: str  # "$.customer.email", "$.items[*].sku"
    storage_class: str


class Policies:
    """The field policies in force, indexed for lookup. Built from FieldPolicy rows (or a draft)."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self._rules: dict[tuple[str, str], list[Rule]] = {}
        for rule in rules:
            self._rules.setdefault((rule.side, rule.path), []).append(rule)

    def lookup(self, *, tool: str, block_type: str, side: str, path: str) -> str | None:
        """The class of the most specific rule for this exact path: a named tool beats ``*``,
        then a named block type beats ``*``."""
        best: tuple[int, str] | None = None
        for rule in self._rules.get((side, path), ()):
            if rule.tool not in ("*", tool) or rule.block_type not in ("*", block_type):
                continue
            rank = (rule.tool != "*") * 2 + (rule.block_type != "*")
            if best is None or rank > best[0]:
                best = (rank, rule.storage_class)
        return best[1] if best else None

    def __bool__(self) -> bool:
        return bool(self._rules)

    def rules(self) -> list[Rule]:
        return [rule for rules in self._rules.values() for rule in rules]

    def with_rule(self, draft: Rule) -> Policies:
        """These policies with ``draft`` in place of any rule at the same address."""
        address = (draft.tool, draft.block_type, draft.side, draft.path)
        kept = [r for r in self.rules() if (r.tool, r.block_type, r.side, r.path) != address]
        return Policies([*kept, draft])


NO_POLICIES = Policies()


def _tool_value(value: Any) -> Any:
    """A tool payload as its fields: a JSON document sent as a string (Anthropic tool_result
    content, OpenAI function arguments and outputs) or as the one text block of a content list is
    read as JSON, so policies can address its fields."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        only = value[0]
        if only.get("type") == "text" and isinstance(only.get("text"), str):
            value = only["text"]
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


@dataclass
class _Walk:
    policies: Policies
    tool: str
    block_type: str
    side: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    dropped: set[str] = field(default_factory=set)

    def visit(
        self, value: Any, path: str, key: str | None, inherited: str | None, depth: int
    ) -> None:
        if len(self.entries) >= MAX_FIELDS:
            return
        explicit = (
            self.policies.lookup(
                tool=self.tool, block_type=self.block_type, side=self.side, path=path
            )
            if self.policies
            else None
        )
        cls = explicit or inherited
        if isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                self.dropped.add(path)
                return
            if isinstance(value, dict):
                for k, item in value.items():
                    sub = f"{path}.{k}" if _SAFE_KEY.match(k) else f"{path}.*"
                    self.visit(item, sub, k, cls, depth + 1)
            else:
                for item in value:
                    self.visit(item, f"{path}[*]", key, cls, depth + 1)
            return
        if cls is None:
            cls = default_class(key) if key is not None else DROP
        kept = _keep(cls, value)
        if kept is _DROPPED:
            if value is not None:
                self.dropped.add(path)
            return
        self.entries.append({"side": self.side, "path": path, "class": cls, "value": kept})


_DROPPED = object()


def _keep(cls: str, value: Any) -> Any:
    """The kept form of a scalar under a class, or _DROPPED."""
    if cls == DROP or value is None:
        return _DROPPED
    if isinstance(value, float) and value != value:  # NaN has no JSON form
        return _DROPPED
    if isinstance(value, str):
        value = clean_text(value[:MAX_VALUE_CHARS])
        return redact(value) if cls in (DISPLAY, RESTRICTED) else value
    return value  # numbers and booleans carry nothing to redact


def project_fields(
    block: Block, policies: Policies = NO_POLICIES, tool: str | None = None
) -> dict[str, Any]:
    """The kept fields of a tool's input and result, and the paths of the dropped ones.

    ``tool`` names the tool when the block does not (a tool result names only its call).
    """
    entries: list[dict[str, Any]] = []
    dropped: list[str] = []
    tool_name = block.tool_name or tool or ""
    for side, value in (("input", block.input), ("output", block.output)):
        if value is None:
            continue
        walk = _Walk(policies, tool_name, block.type, side)
        walk.visit(_tool_value(value), "$", None, None, 0)
        entries.extend(walk.entries)
        dropped.extend(f"{side}:{p}" for p in sorted(walk.dropped))
    out: dict[str, Any] = {}
    if entries:
        out["kept"] = entries
    if dropped:
        out["dropped"] = dropped[:MAX_FIELDS]
    return out


def project_block(
    block: Block, policies: Policies = NO_POLICIES, tool: str | None = None
) -> dict[str, Any]:
    """The column values of one Block row."""
    row: dict[str, Any] = {
        "provider_type": clean_text(block.type)[:100],
        "block_class": block.cls.value,
    }
    if block.cls is BlockClass.VISIBLE:
        row["text"] = redact(clean_text(block.text or ""))
    elif block.cls is BlockClass.AUDIT:
        row["tool_name"] = clean_text(block.tool_name or tool or "")[:200]
        row["call_id"] = clean_text(block.call_id or "")[:200]
        row["is_error"] = block.is_error
        row["status"] = clean_text(block.status or "")[:60]
        row["fields"] = project_fields(block, policies, tool)
    else:  # NEVER and UNKNOWN: the type and the provider's redaction flag, nothing else
        row["redacted"] = block.redacted
    return row


@dataclass(frozen=True, slots=True)
class FieldView:
    side: str
    path: str
    storage_class: str
    value: Any
    url: str | None = None


def view_fields(
    fields: Mapping[str, Any],
    *,
    tool_name: str,
    can_see_restricted: bool,
    links: Mapping[str, str] | None = None,
) -> tuple[list[FieldView], list[str]]:
    """What one person may see of a Block's fields: (kept fields, dropped paths).

    ``restricted`` fields are shown only with the ``view_restricted_fields`` permission (to
    others they count as not kept). ``links`` maps tool names to URL templates
    (``https://orders.example.com/orders/{order_id}``); an identifier whose key names a
    placeholder of its tool's template links to the source record.
    """
    shown: list[FieldView] = []
    hidden = list(fields.get("dropped", ()))
    template = (links or {}).get(tool_name)
    for entry in fields.get("kept", ()):
        cls = entry.get("class")
        if cls == RESTRICTED and not can_see_restricted:
            hidden.append(f"{entry['side']}:{entry['path']}")
            continue
        url = None
        if template and cls == IDENTIFIER:
            url = source_link(template, entry["path"], entry["value"])
        shown.append(FieldView(entry["side"], entry["path"], cls, entry["value"], url))
    return shown, hidden


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _spelling(key: str) -> str:
    """A key however a tool spells it: ``order_id``, ``orderId`` and ``OrderID`` are one."""
    return key.replace("_", "").replace("-", "").lower()


def source_link(template: str, path: str, value: Any) -> str | None:
    """The template filled with one identifier, when the template's only placeholder is the
    identifier's key, spelt any way (``{order_id}`` links ``orderId`` too); the value is
    URL-quoted."""
    from urllib.parse import quote

    names = _PLACEHOLDER.findall(template)
    key = path.rsplit(".", 1)[-1].removesuffix("[*]")
    if len(names) != 1 or _spelling(names[0]) != _spelling(key):
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return template.replace("{" + names[0] + "}", quote(str(value), safe=""))
