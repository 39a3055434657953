"""The one projection: from a parsed Block to what a human surface may show (DESIGN section 4).

Every page, API and export reads Block rows; Block rows are written only from ``project_blocks``
(one message's blocks, tool results named from their calls by ``ToolNames``), and read for a
person only through ``view_fields``. What a tool's input or result keeps is decided field by
field, by storage class (``classes.py``: the classes, what each keeps and who sees it).

A field is addressed by tool name (or ``*``), block type (or ``*``), side (``input`` or
``output``) and a JSON path with ``[*]`` for array items (``$.items[*].sku``). A policy on an
object applies to everything below it that has no policy of its own. Defaults fail closed: a field
with no policy is dropped unless its key is ``id``, ends in ``_id``/``Id`` (identifier) or is
``status`` (status); the tool name, call id and ``is_error`` are columns of their own. Visible
text is always redacted.

NEVER and UNKNOWN blocks project to their type and the provider's redaction flag, nothing more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..blocks import Block, BlockClass
from .classes import DROP, IDENTIFIER, REDACTED, RESTRICTED, default_class
from .redaction import redact

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
        return redact(value) if cls in REDACTED else value
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


class ToolNames:
    """The tool name of each call seen so far in one conversation, by call id: a tool result
    names only its call, and policies are per tool. Fed in message order, so every surface names
    a result the same way: from its call in an earlier block (of this message or one before it),
    or from ``known`` (the calls already stored, for ingest)."""

    __slots__ = ("_names",)

    def __init__(self, known: Mapping[str, str] | None = None) -> None:
        self._names: dict[str, str] = dict(known or {})

    def see(self, block: Block) -> str | None:
        """Learn the block's call (when it names its tool); the tool its call id names."""
        call_id = block.call_id
        if block.cls is not BlockClass.AUDIT or not call_id:
            return None
        if block.tool_name:
            self._names.setdefault(call_id, block.tool_name)
        return self._names.get(call_id)

    def learn_stored(self, call_id: str, tool_name: str) -> None:
        """A call stored before (ingest reads them from the Block rows)."""
        self._names.setdefault(call_id, tool_name)

    def learn(self, blocks: Iterable[Block]) -> None:
        """The calls of a message that is not projected (the preview walks earlier ones)."""
        for block in blocks:
            self.see(block)


def unresolved_calls(messages: Iterable[Iterable[Block]]) -> set[str]:
    """The call ids of tool results that no earlier block of these messages names: what ingest
    looks up among the calls already stored, in one query, before projecting."""
    names = ToolNames()
    missing: set[str] = set()
    for blocks in messages:
        for block in blocks:
            if block.cls is BlockClass.AUDIT and block.call_id and names.see(block) is None:
                missing.add(block.call_id)
    return missing


def project_blocks(
    blocks: Iterable[Block], policies: Policies, names: ToolNames
) -> list[dict[str, Any]]:
    """The Block rows (column values) of one message, in position order: THE projection. Ingest,
    re-projection and the policy preview all call it, message by message in sequence order with
    one ``ToolNames`` per conversation, so a conversation projects the same whichever of them
    wrote its rows."""
    return [project_block(block, policies, names.see(block)) for block in blocks]


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


def restricted_paths(fields: Mapping[str, Any], *, can_see_restricted: bool) -> list[str]:
    """The kept fields ``view_fields`` leaves out for this person's role (``side:path``): kept,
    but ``restricted`` and the person lacks ``view_restricted_fields``. The pages say so,
    rather than calling them not kept."""
    if can_see_restricted:
        return []
    return [
        f"{entry['side']}:{entry['path']}"
        for entry in fields.get("kept", ())
        if entry.get("class") == RESTRICTED
    ]


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
