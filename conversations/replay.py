"""Replay: the stored message objects, byte for byte, in the envelope DESIGN section 5 fixes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from .formats.profile import prompt_form
from .formats.registry import match_form, profile


def raw_sha256(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def canonical_sha256(raw: str, fmt: str) -> str:
    """Two message objects that differ only in serialisation (whitespace, escapes, key order),
    or in what the format says a client may leave out, have the same canonical hash: a resent
    history matches what was stored."""
    value = match_form(fmt, json.loads(raw))
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def prompt_sha256(raw: str, fmt: str) -> str:
    """The canonical hash of what the model sees of a message: its match form less the members
    the format's profile says the provider never puts in the prompt (``Profile.unseen``). Two
    messages with the same prompt hash differ only in what the model does not see."""
    found = profile(fmt)
    value = match_form(fmt, json.loads(raw))
    if found is not None:
        value = prompt_form(found.unseen, value, found.shorthand)
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def prefix_sha256(fmt: str, settings: dict[str, object]) -> str:
    """The canonical hash of the request settings that come before the history in the model's
    prompt (``Profile.prefix_settings``: system, tools); "" when the request has none."""
    found = profile(fmt)
    names = found.prefix_settings if found is not None else ()
    value = {name: settings[name] for name in names if name in settings}
    if not value:
        return ""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def envelope(raws: Iterable[str]) -> bytes:
    """``{"messages":[`` + the elements joined by ``,`` + ``]}``, UTF-8."""
    return b'{"messages":[' + b",".join(r.encode("utf-8") for r in raws) + b"]}"
