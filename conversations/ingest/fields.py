"""A JSON body's members, defined and checked: the one definition shared by the two bodies the
API takes (``ingest/body.py`` for an exchange, ``live/body.py`` for a live chunk), so both answer
a bad member with the same codes, ``field`` and ``$.<field>`` path.

A check takes the member's ``Field`` and its value and returns the value (typed), or raises the
``FormatError`` the API turns into a 400.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings

from .. import bounds
from ..formats.base import FormatError
from ..formats.registry import ENDPOINT_PATTERN

MAX_ID_CHARS = 200
MAX_QUEUE_CHARS = 100
MAX_LABELS_CHARS = 4096
# Standard base64, padded (what ``base64.b64decode(..., validate=True)`` reads).
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


@dataclass(frozen=True, slots=True)
class Field:
    """One member of the body. ``kind``: ``text`` (a non-blank string), ``format`` (the name of a
    registered format), ``path`` (a path and query without the host, starting with ``/``),
    ``base64`` (standard base64, padded), ``timestamp`` (RFC 3339, or null), ``integer`` (or
    null), ``labels`` (an object, or null), ``boolean`` (true or false, or null for false)."""

    name: str
    kind: str
    description: str
    required: bool = False
    max_length: int | None = None
    maximum: int | None = None
    example: Any = None


def fail(code: str, detail: str, name: str, at: str | None = None) -> FormatError:
    return FormatError(detail, field=name, at=at or f"$.{name}", code=code)


def check_text(f: Field, body: dict[str, Any]) -> str | None:
    value = body.get(f.name)
    if value is None:
        if f.name not in body:
            if f.required:
                raise fail("required", "This field is required.", f.name)
            return None
        raise fail("null", "This field may not be null.", f.name)
    if not isinstance(value, str):
        raise fail("invalid", "Not a valid string.", f.name)
    if not value:
        raise fail("blank", "This field may not be blank.", f.name)
    if f.max_length is not None and len(value) > f.max_length:
        raise fail(
            "max_length",
            f"Ensure this field has no more than {f.max_length} characters.",
            f.name,
        )
    if f.kind == "path" and not re.match(ENDPOINT_PATTERN, value):
        raise fail(
            "invalid",
            "Must be the path and query the call was sent to, without the host (it starts "
            "with /, no whitespace).",
            f.name,
        )
    if f.kind == "base64" and not re.match(BASE64_PATTERN, value):
        raise fail("not_base64", "Not base64 (the standard alphabet, padded).", f.name)
    return value


def check_timestamp(f: Field, value: Any) -> datetime | None:
    """RFC 3339, a real date and time, an offset within ±14:00, inside the settings' window
    (``bounds.Window``: from 2000 to a day ahead)."""
    if value is None:
        return None
    try:
        return bounds.parse_timestamp(value, bounds.Window.of(settings))
    except bounds.OutOfBounds as exc:
        raise fail(exc.code, exc.detail, f.name) from None


def check_integer(f: Field, value: Any) -> int | None:
    if value is None:
        return None
    try:
        return bounds.check_int(value, maximum=f.maximum or bounds.INT32_MAX, what="milliseconds")
    except bounds.OutOfBounds as exc:
        raise fail(exc.code, exc.detail, f.name) from None


def check_boolean(f: Field, value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise fail("invalid", "Must be a valid boolean.", f.name)
    return value


def check_labels(f: Field, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail("not_a_dict", "Expected a dictionary of items.", f.name)
    queue = value.get("queue")
    if queue is not None and (not isinstance(queue, str) or not 0 < len(queue) <= MAX_QUEUE_CHARS):
        raise fail(
            "invalid",
            f"must be a string of 1 to {MAX_QUEUE_CHARS} characters",
            f.name,
            "$.labels.queue",
        )
    if len(json.dumps(value, ensure_ascii=False)) > MAX_LABELS_CHARS:
        raise fail("too_large", "labels are limited to 4 KB", f.name)
    return value
