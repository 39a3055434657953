"""Replay: the stored message objects, byte for byte, in the envelope DESIGN section 5 fixes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from .formats.registry import match_form


def raw_sha256(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def canonical_sha256(raw: str, fmt: str) -> str:
    """Two message objects that differ only in serialisation (whitespace, escapes, key order),
    or in what the format says a client may leave out, have the same canonical hash: a resent
    history matches what was stored."""
    value = match_form(fmt, json.loads(raw))
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def envelope(raws: Iterable[str]) -> bytes:
    """``{"messages":[`` + the elements joined by ``,`` + ``]}``, UTF-8."""
    return b'{"messages":[' + b",".join(r.encode("utf-8") for r in raws) + b"]}"
