"""JavaScript's values as the AI SDK sees them: ``undefined`` (a key that keeps its place but is
not serialised), JSON type names for errors, the field checks of chunk and part members, and the
SDK's partial-JSON repair (``fixJson`` + ``parsePartialJson`` of vercel/ai, used on a tool input
still streaming)."""

from __future__ import annotations

import json
from typing import Any

from ..base import (
    FormatError,
    NotFinite,
    finite_float,
)


class _Undefined:
    """JavaScript's ``undefined``: a key holding it exists (keeps its place) but is not
    serialised."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"


UNDEF: Any = _Undefined()


def nullish(value: Any) -> bool:
    return value is None or value is UNDEF


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )


def want(value: Any, kind: type, what: str, *, fld: str, at: str) -> Any:
    if kind is bool:
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, kind) and not isinstance(value, bool)
    if not ok:
        raise FormatError(
            f"expected {what}, got {json_type(value)}", field=fld, at=at, code="wrong_type"
        )
    return value


def required(obj: dict[str, Any], key: str, kind: type, what: str, *, fld: str, at: str) -> Any:
    if key not in obj:
        raise FormatError(f"missing {key!r} ({what})", field=fld, at=f"{at}.{key}", code="missing")
    return want(obj[key], kind, what, fld=fld, at=f"{at}.{key}")


def optional(obj: dict[str, Any], key: str, kind: type, what: str, *, fld: str, at: str) -> Any:
    """The value, or ``UNDEF`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return UNDEF
    return want(value, kind, what, fld=fld, at=f"{at}.{key}")


# ---------------------------------------------------------------------------------------------
# Parts -> Blocks


def fix_json(text: str) -> str:
    stack = ["ROOT"]
    last_valid = -1
    literal_start = 0
    unicode_digits = 0

    def value_start(ch: str, i: int, swap: str) -> None:
        nonlocal last_valid, literal_start
        if ch == '"':
            last_valid = i
            stack.pop()
            stack.append(swap)
            stack.append("STRING")
        elif ch in "ftn":
            last_valid = i
            literal_start = i
            stack.pop()
            stack.append(swap)
            stack.append("LITERAL")
        elif ch == "-":
            stack.pop()
            stack.append(swap)
            stack.append("NUMBER")
        elif ch in "0123456789":
            last_valid = i
            stack.pop()
            stack.append(swap)
            stack.append("NUMBER")
        elif ch == "{":
            last_valid = i
            stack.pop()
            stack.append(swap)
            stack.append("OBJECT_START")
        elif ch == "[":
            last_valid = i
            stack.pop()
            stack.append(swap)
            stack.append("ARRAY_START")

    def after_object_value(ch: str, i: int) -> None:
        nonlocal last_valid
        if ch == ",":
            stack.pop()
            stack.append("OBJECT_AFTER_COMMA")
        elif ch == "}":
            last_valid = i
            stack.pop()

    def after_array_value(ch: str, i: int) -> None:
        nonlocal last_valid
        if ch == ",":
            stack.pop()
            stack.append("ARRAY_AFTER_COMMA")
        elif ch == "]":
            last_valid = i
            stack.pop()

    for i, ch in enumerate(text):
        state = stack[-1]
        if state == "ROOT":
            value_start(ch, i, "FINISH")
        elif state == "OBJECT_START":
            if ch == '"':
                stack.pop()
                stack.append("OBJECT_KEY")
            elif ch == "}":
                last_valid = i
                stack.pop()
        elif state == "OBJECT_AFTER_COMMA":
            if ch == '"':
                stack.pop()
                stack.append("OBJECT_KEY")
        elif state == "OBJECT_KEY":
            if ch == '"':
                stack.pop()
                stack.append("OBJECT_AFTER_KEY")
        elif state == "OBJECT_AFTER_KEY":
            if ch == ":":
                stack.pop()
                stack.append("OBJECT_BEFORE_VALUE")
        elif state == "OBJECT_BEFORE_VALUE":
            value_start(ch, i, "OBJECT_AFTER_VALUE")
        elif state == "OBJECT_AFTER_VALUE":
            after_object_value(ch, i)
        elif state == "STRING":
            if ch == '"':
                stack.pop()
                last_valid = i
            elif ch == "\\":
                stack.append("STRING_ESCAPE")
            else:
                last_valid = i
        elif state == "ARRAY_START":
            if ch == "]":
                last_valid = i
                stack.pop()
            else:
                last_valid = i
                value_start(ch, i, "ARRAY_AFTER_VALUE")
        elif state == "ARRAY_AFTER_VALUE":
            if ch == ",":
                stack.pop()
                stack.append("ARRAY_AFTER_COMMA")
            elif ch == "]":
                last_valid = i
                stack.pop()
            else:
                last_valid = i
        elif state == "ARRAY_AFTER_COMMA":
            value_start(ch, i, "ARRAY_AFTER_VALUE")
        elif state == "STRING_ESCAPE":
            stack.pop()
            if ch == "u":
                unicode_digits = 0
                stack.append("STRING_UNICODE_ESCAPE")
            else:
                last_valid = i
        elif state == "STRING_UNICODE_ESCAPE":
            if ch in "0123456789abcdefABCDEF":
                unicode_digits += 1
                if unicode_digits == 4:
                    stack.pop()
                    last_valid = i
        elif state == "NUMBER":
            if ch in "0123456789":
                last_valid = i
            elif ch in "eE-.":
                pass
            elif ch == ",":
                stack.pop()
                if stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
                if stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
            elif ch == "}":
                stack.pop()
                if stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
            elif ch == "]":
                stack.pop()
                if stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
            else:
                stack.pop()
        elif state == "LITERAL":
            partial = text[literal_start : i + 1]
            if not any(lit.startswith(partial) for lit in ("false", "true", "null")):
                stack.pop()
                if stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
                elif stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
            else:
                last_valid = i

    out = [text[: last_valid + 1]]
    for state in reversed(stack):
        if state == "STRING":
            out.append('"')
        elif state.startswith("OBJECT_"):
            out.append("}")
        elif state.startswith("ARRAY_"):
            out.append("]")
        elif state == "LITERAL":
            partial = text[literal_start:]
            for lit in ("true", "false", "null"):
                if lit.startswith(partial):
                    out.append(lit[len(partial) :])
                    break
    return "".join(out)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JavaScript's JSON.parse refuses NaN and Infinity


def js_loads(text: str) -> Any:
    """``JSON.parse``: NaN and Infinity are not JSON (ValueError). A number beyond a double's
    range (``1e400``) is JSON to JavaScript, which reads it as Infinity and writes it back as
    ``null``; this code refuses it instead (``NotFinite``): a stored message never holds a
    number other than the one received."""
    return json.loads(text, parse_constant=_no_constants, parse_float=finite_float)


def parse_partial_json(text: str) -> Any:
    """``parsePartialJson(text).value``: the JSON, else the repaired JSON, else undefined."""
    for candidate in (text, fix_json(text)):
        try:
            return js_loads(candidate)
        except NotFinite:
            raise
        except ValueError:
            continue
    return UNDEF


# ---------------------------------------------------------------------------------------------
# Stream accumulation
