"""The request-body parser of the API: strict, bounded, with precise errors.

Stricter than DRF's JSONParser on purpose: a body over ``INGEST_MAX_BODY_BYTES`` is refused
(413) before it is read whole; bytes that are not UTF-8 and JSON nested past what the decoder can
recurse into are 400s, not 500s; strings that PostgreSQL cannot store (NUL, lone surrogates from
``\\u`` escapes) are refused with the JSON path where they sit.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from rest_framework.parsers import BaseParser

from .. import bounds
from .errors import ApiError

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def find_unstorable(value: Any, path: str = "$") -> tuple[str, str] | None:
    """(path, reason) of the first string (or key) PostgreSQL text cannot hold."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return at, "contains a NUL character"
            if _SURROGATE.search(item):
                return at, "contains an unpaired UTF-16 surrogate"
        elif isinstance(item, dict):
            for key, sub in item.items():
                if "\x00" in key or _SURROGATE.search(key):
                    return f"{at}.{key!r}", "has a key PostgreSQL cannot store"
                stack.append((sub, f"{at}.{key}"))
        elif isinstance(item, list):
            stack.extend((sub, f"{at}[{i}]") for i, sub in enumerate(item))
    return None


class TooLong:
    """An integer of more than ``bounds.MAX_INT_DIGITS`` digits, found while decoding (Python
    refuses to read it: a ValueError that would otherwise be a 500); its path is named after."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _read_int(text: str) -> int | TooLong:
    digits = len(text.lstrip("-"))
    return TooLong(digits) if digits > bounds.MAX_INT_DIGITS else int(text)


def find_too_long(value: Any, path: str = "$") -> tuple[str, str] | None:
    """(path, reason) of the first integer too long to read."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, TooLong):
            return at, f"is an integer of {item.digits} digits (at most {bounds.MAX_INT_DIGITS})"
        if isinstance(item, dict):
            stack.extend((sub, f"{at}.{key}") for key, sub in item.items())
        elif isinstance(item, list):
            stack.extend((sub, f"{at}[{i}]") for i, sub in enumerate(item))
    return None


def decode_json_body(raw: bytes) -> Any:
    """The parsed body, or an ApiError naming what is wrong and where (the API and ``ingest``)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            f"the body is not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}",
            code="invalid_utf8",
            field="body",
            at="$",
        ) from None
    try:
        data = json.loads(text, parse_int=_read_int)
    except json.JSONDecodeError as exc:
        raise ApiError(
            f"the body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            code="not_json",
            field="body",
            at="$",
        ) from None
    except RecursionError:
        raise ApiError(
            "the body is nested too deep", code="too_deep", field="body", at="$"
        ) from None
    for find, code in ((find_unstorable, "invalid_string"), (find_too_long, "max_value")):
        bad = find(data)
        if bad is not None:
            at, reason = bad
            field = at[2:].split(".")[0].split("[")[0] if at != "$" else "body"
            raise ApiError(f"{at} {reason}", code=code, field=field or "body", at=at)
    return data


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.INGEST_MAX_BODY_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        too_large = ApiError(
            f"the body is larger than {limit} bytes",
            code="too_large",
            field="body",
            at="$",
            status_code=413,
        )
        if declared and declared.isdigit() and int(declared) > limit:
            raise too_large
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise too_large
        return decode_json_body(raw)
