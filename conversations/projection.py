"""The one projection: from a parsed Block to what a human surface may show (DESIGN section 4).

Every page, API and export reads Block rows, and Block rows are written only from
``project_block``. What a tool's input or result keeps is decided field by field by storage class:

- ``identifier`` / ``status``: the value is kept and shown;
- ``drop``: nothing is kept; the field is listed as ``[not kept]`` (its path only).

Defaults fail closed: with no policy, a field is dropped unless its key is ``id``, ends in ``_id``
or is ``status`` (plus the tool name, call id and ``is_error``, which are columns of their own).
Admin-configured policies (``display``, ``restricted``, per tool and JSON path) extend this table.

NEVER and UNKNOWN blocks project to their type and the provider's redaction flag, nothing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .blocks import Block, BlockClass

IDENTIFIER = "identifier"
STATUS = "status"
DROP = "drop"

# How far into a tool payload the projection walks, so a hostile payload cannot make it work
# without bound; whatever lies deeper is dropped like any field without a policy.
MAX_DEPTH = 12
MAX_FIELDS = 200
MAX_VALUE_CHARS = 200

# A key printed in a dropped field's path must look like a schema name: a payload keyed by
# e-mail addresses or names would otherwise leak them through the path.
_SAFE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
_SURROGATES = re.compile(r"[\ud800-\udfff]")


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


@dataclass
class _Walk:
    side: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    dropped: set[str] = field(default_factory=set)

    def visit(self, value: Any, path: str, depth: int) -> None:
        if len(self.entries) >= MAX_FIELDS:
            return
        if isinstance(value, dict):
            if depth >= MAX_DEPTH:
                self.dropped.add(path)
                return
            for key, item in value.items():
                key_path = f"{path}.{key}" if _SAFE_KEY.match(key) else f"{path}.*"
                cls = default_class(key)
                if cls != DROP and _is_scalar(item):
                    self.entries.append(
                        {"side": self.side, "path": key_path, "class": cls, "value": _scalar(item)}
                    )
                elif isinstance(item, (dict, list)):
                    self.visit(item, key_path, depth + 1)
                else:
                    self.dropped.add(key_path)
        elif isinstance(value, list):
            if depth >= MAX_DEPTH:
                self.dropped.add(path)
                return
            for item in value:
                self.visit(item, f"{path}[*]", depth + 1)
        elif value is not None:
            self.dropped.add(path)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value[:MAX_VALUE_CHARS])
    if isinstance(value, float) and value != value:  # NaN has no JSON form
        return None
    return value


def project_fields(block: Block) -> dict[str, Any]:
    """The kept fields of a tool's input and result, and the paths of the dropped ones."""
    entries: list[dict[str, Any]] = []
    dropped: list[str] = []
    for side, value in (("input", block.input), ("output", block.output)):
        if value is None:
            continue
        walk = _Walk(side)
        walk.visit(value, "$", 0)
        entries.extend(walk.entries)
        dropped.extend(f"{side}:{p}" for p in sorted(walk.dropped))
    out: dict[str, Any] = {}
    if entries:
        out["kept"] = entries
    if dropped:
        out["dropped"] = dropped[:MAX_FIELDS]
    return out


def project_block(block: Block) -> dict[str, Any]:
    """The column values of one Block row."""
    row: dict[str, Any] = {
        "provider_type": clean_text(block.type)[:100],
        "block_class": block.cls.value,
    }
    if block.cls is BlockClass.VISIBLE:
        row["text"] = clean_text(block.text or "")
    elif block.cls is BlockClass.AUDIT:
        row["tool_name"] = clean_text(block.tool_name or "")[:200]
        row["call_id"] = clean_text(block.call_id or "")[:200]
        row["is_error"] = block.is_error
        row["status"] = clean_text(block.status or "")[:60]
        row["fields"] = project_fields(block)
    else:  # NEVER and UNKNOWN: the type and the provider's redaction flag, nothing else
        row["redacted"] = block.redacted
    return row
