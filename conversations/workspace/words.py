"""Provider strings in plain words, for the people reading a conversation.

Each table maps what a provider (or the AI SDK) sends to what an agent reads. A value missing
from a table is shown as received, with its raw form beside it: never guessed. The words of a
format's own values (finish reasons, tool states, which blocks are results, what a server tool
did) are its profile's (``formats/<name>/profile.py``): add them there. The tables here are what
no one format owns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..formats import formats, profile
from ..formats.profile import Profile
from ..projection.redaction import redact


def _union(table: str) -> dict[str, Any]:
    """One word table of every format's profile (``formats/<name>/profile.py``), merged: a raw
    value two formats share means the same in both (``tests/conversations/formats/
    test_profiles.py`` holds them to it)."""
    out: dict[str, Any] = {}
    for fmt in formats():
        out.update(getattr(fmt.profile, table))
    return out


# Exchange.stop_reason of every format, in words (each format's finish table).
FINISH_REASONS: dict[str, str] = {raw: rule.words for raw, rule in _union("finishes").items()}

# A tool's state or status (AI SDK tool part states, OpenAI item statuses): (words, tone: ok |
# error | pending).
TOOL_STATES: dict[str, tuple[str, str]] = _union("tool_states")


def _profiles(fmt: str) -> list[Profile]:
    """The profile of ``fmt``, or (no format named: a filter over every format) all of them."""
    if fmt:
        found = profile(fmt)
        return [found] if found is not None else []
    return [f.profile for f in formats()]


def finish_words(reason: str, fmt: str = "") -> str:
    """A stored stop reason in words: its format's finish table, or (a filter listing the
    reasons of every format) any format's."""
    if not reason:
        return "no finish reason reported"
    found = profile(fmt) if fmt else None
    rule = found.finishes.get(reason) if found is not None else None
    if rule is not None:
        return rule.words
    return FINISH_REASONS.get(reason, f"finish reason “{reason}”")


def is_result(provider_type: str, fmt: str = "") -> bool:
    """Whether a tool block of format ``fmt`` is a result (its call is another block): the
    profile's ``result_types`` (with no format named, any format's)."""
    return any(p.is_result(provider_type) for p in _profiles(fmt))


def server_tool(provider_type: str, tool_name: str, fmt: str = "") -> str | None:
    """What a server tool did, in words (the profile's ``server_tool``; with no format named,
    the first format's that knows the block type); None for a tool the chat backend ran."""
    for found in _profiles(fmt):
        words = found.server_tool(provider_type, tool_name)
        if words is not None:
            return words
    return None


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def key_words(key: str) -> str:
    """``order_id``, ``orderId`` → "order id"."""
    return _CAMEL.sub(" ", key).replace("_", " ").replace("-", " ").lower().strip()


def field_label(path: str) -> str:
    """A projected field's path as a label: ``$.status`` → "status", ``$.items[*].sku`` →
    "items > sku" (with a single right-pointing angle quote), ``$`` → "value"."""
    parts = [p for p in path.removeprefix("$").replace("[*]", "").split(".") if p]
    return " \u203a ".join(key_words(p) for p in parts) or "value"


EVENT_SENTENCES: dict[str, str] = {
    "user_replied": "The customer replied.",
    "rated": "The customer rated the conversation",
    "escalated": "Escalated to a person",
    "abandoned": "The customer left without a resolution",
    "resolved": "Marked resolved",
}


def value_words(value: Any, *, limit: int = 300) -> str:
    """A JSON value from the chat backend as short readable text, redacted (event values are
    the backend's free-form JSON and may carry customer text): ``{"reason": "tool failed"}`` →
    "reason: tool failed"."""
    if value is None:
        return ""
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (int, float, str)):
        text = str(value)
    elif isinstance(value, Mapping):
        text = "; ".join(
            f"{key_words(str(k))}: {value_words(v, limit=limit)}"
            for k, v in value.items()
            if v not in (None, "", [], {})
        )
    elif isinstance(value, list):
        text = ", ".join(value_words(v, limit=limit) for v in value)
    else:
        text = str(value)
    text = redact(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_LEADS = ("reason", "score", "rating", "stars", "value")


def event_sentence(kind: str, value: Any) -> str:
    """An event in a sentence: ``escalated`` with ``{"reason": "tool failed", "queue": "tier
    2"}`` → "Escalated to a person: tool failed (queue: tier 2).". The reason (or, for a rating,
    the score) leads; other keys follow in parentheses; a plain value is the lead."""
    base = EVENT_SENTENCES.get(kind, f"Event “{kind}”").rstrip(".")
    lead, rest = "", value
    if isinstance(value, Mapping):
        key = next((k for k in _LEADS if value.get(k) not in (None, "")), None)
        if key is not None:
            lead = value_words(value[key])
            rest = {k: v for k, v in value.items() if k != key}
    elif value is not None:
        lead, rest = value_words(value), None
    sentence = f"{base}: {lead}" if lead else base
    if detail := value_words(rest) if rest else "":
        sentence += f" ({detail})"
    return sentence + "."


# Anthropic's verdict on the history sent (``input_transformations``), in words.
_TRANSFORMATIONS = {
    "thinking_dropped": "the provider dropped a thinking block the backend sent back",
    "thinking_mismatch_allowed": (
        "the provider showed the model a thinking block that failed its check"
    ),
}


def transformation_words(entry: dict[str, str]) -> str:
    """One ``input_transformations`` entry in words: what the provider did, where (the request
    path it names, ``messages.3.content.0``) and why (its reason code)."""
    kind = entry.get("type", "")
    text = _TRANSFORMATIONS.get(kind, f"the provider changed the history ({kind or 'unnamed'})")
    where = entry.get("path")
    reason = entry.get("reason")
    return text + (f" at {where}" if where else "") + (f" ({reason})" if reason else "")
