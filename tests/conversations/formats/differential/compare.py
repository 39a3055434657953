"""Field-by-field comparison of an accumulated message with an SDK's.

What counts as the same (each a property of the wire format, not a leniency):

- Strings are compared as UTF-16 runtimes see them: a surrogate pair held as two code points (a
  Python SDK concatenating two halves) is its one character.
- Numbers by value (``1`` and ``1.0`` are the same JSON number); a boolean is never a number.
- Key order does not matter to any reader of these messages (the stored bytes keep the stream's
  order; the SDKs' objects have their models' order).
- Chat Completions: a key whose value is null is the same as no key (the SDK keeps every null a
  delta sent, the project creates no key for it); ``index`` and ``parsed_arguments`` of the SDK's
  tool calls are its own bookkeeping, not message fields.
- Responses: ``parsed: null`` in the SDK's output_text parts and ``parsed_arguments: null`` on
  its function calls are its own (structured outputs), not items' fields.
- AI SDK: readUIMessageStream names a message whose ``start`` gave no id ``""`` (the browser a
  random id); neither reached the backend, and the project's message has no ``id``.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATES = re.compile("[\ud800-\udfff]")


def _text(value: str) -> str:
    if _SURROGATES.search(value) is None:
        return value
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def normal(value: Any, *, drop_null: bool = False) -> Any:
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {
            _text(k): normal(v, drop_null=drop_null)
            for k, v in value.items()
            if not (drop_null and v is None)
        }
    if isinstance(value, list):
        return [normal(v, drop_null=drop_null) for v in value]
    return value


def differences(ours: Any, theirs: Any, path: str = "$", limit: int = 8) -> list[str]:
    """Where two JSON values differ, as ``path: ours != theirs`` lines (at most ``limit``)."""
    out: list[str] = []
    _walk(ours, theirs, path, out, limit)
    return out


def _walk(a: Any, b: Any, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in b:
                out.append(f"{path}.{key}: {_short(a[key])} != (absent)")
            elif key not in a:
                out.append(f"{path}.{key}: (absent) != {_short(b[key])}")
            else:
                _walk(a[key], b[key], f"{path}.{key}", out, limit)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} elements != {len(b)} elements")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _walk(x, y, f"{path}[{i}]", out, limit)
        return
    if isinstance(a, bool) or isinstance(b, bool):
        same = type(a) is type(b) and a == b
    elif isinstance(a, int | float) and isinstance(b, int | float):
        same = a == b
    else:
        same = type(a) is type(b) and a == b
    if not same:
        out.append(f"{path}: {_short(a)} != {_short(b)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# --- the per-format views ------------------------------------------------------------------------


def chat_sdk_view(message: Any) -> Any:
    message = normal(message, drop_null=True)
    for call in message.get("tool_calls") or ():
        call.pop("index", None)
        function = call.get("function")
        if isinstance(function, dict):
            function.pop("parsed_arguments", None)
    return message


def responses_sdk_view(item: Any) -> Any:
    item = normal(item)
    if isinstance(item, dict) and item.get("parsed_arguments", 0) is None:
        del item["parsed_arguments"]
    for part in item.get("content") or () if isinstance(item, dict) else ():
        if isinstance(part, dict) and part.get("parsed", 0) is None:
            del part["parsed"]
    return item


def ai_sdk_view(ours: Any, theirs: Any) -> Any:
    theirs = normal(theirs)
    if isinstance(theirs, dict) and "id" not in ours and theirs.get("id") == "":
        del theirs["id"]
    return theirs
