"""Reading the reasoning content out of a stored message, for the review page only.

Formats (``formats/``) never put deliberation into a ``Block``: NEVER blocks carry their type and
nothing else, so no projection, index or export can hold it. The one reader that shows it is the
review page (``reviews.review_read``), which decrypts a message's raw text and calls
``reasoning_of(format, raw)`` here, at read time. Keeping every reader of reasoning text in this
one module, apart from the ingest parsers, makes "where can deliberation leave the raw bytes?"
answerable by reading one file.

What is read, per format (DESIGN section 1, the NEVER row):

- ``anthropic.messages``: ``thinking`` blocks (their text: a summary on Claude 4 models, the
  full thinking on Claude 3.7); an empty ``thinking`` with a signature is "omitted by provider";
  ``redacted_thinking`` is "redacted by provider" (its ``data`` is encrypted, never read).
- ``openai.responses``: ``reasoning`` items: each ``summary_text`` part, each ``reasoning_text``
  content part; an item with neither is MISSING (the review may fetch its summary from the
  provider: ``openai_response_traces`` reads the fetched response the same way).
- ``openai.chat``: ``reasoning_content`` (DeepSeek), ``reasoning`` (OpenRouter) and OpenRouter's
  ``reasoning_details`` (summary and text entries; an encrypted entry is "redacted by provider").
- ``ai-sdk.ui``: ``reasoning`` parts; an empty one whose ``providerMetadata`` carries a redaction
  marker is "redacted by provider", one carrying only a signature or encrypted content is
  "omitted by provider".

Pure Python, no Django: it can be tested without a database. It never raises on a shape it does
not expect (the message was validated at ingest): what it does not recognise it skips.

To add a format or a reasoning shape: write ``_<format>(value)`` yielding ``Trace`` values and
register it in ``_READERS``; add a case to ``tests/review/test_reasoning.py``.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Trace", "TraceKind", "Withheld", "openai_response_traces", "reasoning_of"]


class TraceKind(enum.StrEnum):
    THINKING = "thinking"  # Anthropic thinking text
    SUMMARY = "summary"  # OpenAI reasoning summary, OpenRouter reasoning.summary
    REASONING_TEXT = "reasoning_text"  # OpenAI reasoning content (open-weight models)
    REASONING_CONTENT = "reasoning_content"  # Chat Completions reasoning_content / reasoning
    REASONING_PART = "reasoning_part"  # AI SDK reasoning part


class Withheld(enum.StrEnum):
    NO = ""
    REDACTED = "redacted"  # the provider withheld it: redacted_thinking, encrypted only
    OMITTED = "omitted"  # empty thinking with a signature: display omitted
    MISSING = "missing"  # an OpenAI reasoning item with no summary: may be fetched


@dataclass(frozen=True, slots=True)
class Trace:
    """One piece of reasoning as the provider returned it (unredacted: the caller redacts)."""

    kind: TraceKind
    text: str = ""
    withheld: Withheld = Withheld.NO
    item_id: str = ""  # an OpenAI reasoning item's id, to match a fetched summary to it


def reasoning_of(fmt: str, raw: str) -> list[Trace]:
    """The reasoning in one stored message's raw text, in order; [] for none."""
    reader = _READERS.get(fmt)
    if reader is None:
        return []
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return []
    return list(reader(value))


def openai_response_traces(body: Any) -> list[Trace]:
    """The reasoning of an OpenAI Responses response object (``GET /v1/responses/{id}``)."""
    output = body.get("output") if isinstance(body, dict) else None
    if not isinstance(output, list):
        return []
    return [trace for item in output for trace in _openai_responses(item)]


def _texts(parts: Any, part_type: str) -> Iterator[str]:
    if not isinstance(parts, list):
        return
    for part in parts:
        if isinstance(part, dict) and part.get("type") == part_type:
            text = part.get("text")
            if isinstance(text, str) and text:
                yield text


def _anthropic(message: Any) -> Iterator[Trace]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return  # a string content: plain text, no reasoning
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "redacted_thinking":
            yield Trace(TraceKind.THINKING, withheld=Withheld.REDACTED)
        elif kind == "thinking":
            text = block.get("thinking")
            if isinstance(text, str) and text:
                yield Trace(TraceKind.THINKING, text)
            elif block.get("signature"):
                yield Trace(TraceKind.THINKING, withheld=Withheld.OMITTED)


def _openai_responses(item: Any) -> Iterator[Trace]:
    if not isinstance(item, dict) or item.get("type") != "reasoning":
        return
    raw_id = item.get("id")
    item_id = raw_id if isinstance(raw_id, str) else ""
    found = False
    for text in _texts(item.get("summary"), "summary_text"):
        found = True
        yield Trace(TraceKind.SUMMARY, text, item_id=item_id)
    for text in _texts(item.get("content"), "reasoning_text"):
        found = True
        yield Trace(TraceKind.REASONING_TEXT, text, item_id=item_id)
    if not found:
        yield Trace(TraceKind.SUMMARY, withheld=Withheld.MISSING, item_id=item_id)


def _openai_chat(message: Any) -> Iterator[Trace]:
    if not isinstance(message, dict):
        return
    for key in ("reasoning_content", "reasoning"):
        text = message.get(key)
        if isinstance(text, str) and text:
            yield Trace(TraceKind.REASONING_CONTENT, text)
    details = message.get("reasoning_details")
    if not isinstance(details, list):
        return
    for entry in details:
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "reasoning.summary" and isinstance(entry.get("summary"), str):
            yield Trace(TraceKind.SUMMARY, entry["summary"])
        elif kind == "reasoning.text" and isinstance(entry.get("text"), str):
            yield Trace(TraceKind.REASONING_CONTENT, entry["text"])
        elif kind == "reasoning.encrypted":
            yield Trace(TraceKind.REASONING_CONTENT, withheld=Withheld.REDACTED)


def _ai_sdk(message: Any) -> Iterator[Trace]:
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        return
    for part in parts:
        if not isinstance(part, dict) or part.get("type") != "reasoning":
            continue
        text = part.get("text")
        if isinstance(text, str) and text:
            yield Trace(TraceKind.REASONING_PART, text)
            continue
        withheld = _ai_sdk_withheld(part.get("providerMetadata"))
        if withheld is not Withheld.NO:
            yield Trace(TraceKind.REASONING_PART, withheld=withheld)


def _ai_sdk_withheld(meta: Any) -> Withheld:
    """Anthropic through the AI SDK keeps ``redactedData`` for redacted thinking and a
    ``signature`` for omitted thinking; OpenAI keeps ``reasoningEncryptedContent``."""
    if not isinstance(meta, dict):
        return Withheld.NO
    keys = [
        key.lower()
        for entry in meta.values()
        if isinstance(entry, dict)
        for key, value in entry.items()
        if value not in (None, "", {}, [])
    ]
    if any("redacted" in key for key in keys):
        return Withheld.REDACTED
    if any("signature" in key or "encrypted" in key for key in keys):
        return Withheld.OMITTED
    return Withheld.NO


_READERS: dict[str, Callable[[Any], Iterator[Trace]]] = {
    "anthropic.messages": _anthropic,
    "openai.responses": _openai_responses,
    "openai.chat": _openai_chat,
    "ai-sdk.ui": _ai_sdk,
}
