"""History rewrites, classified where ingest detects them (pure, no database).

Ingest matches the history sent against the stored one (``ingest/history.py``), as the
official SDK's ordinary loop would send it back: the provider's other byte form of a message (a
Responses item's ``output_item.done`` form beside ``response.completed``'s) is unmodified, and
is no kind at all. Where they differ, this module says how. A kind is either **seen** (the model
sees another history than the one it produced: the prompt cache is missed from there on, which
the exchange prices from the usage, ``cache_lost``; the page's banner and the alert count these)
or **unseen** (recorded, no banner, no alert):

- ``tool_loop_reasoning`` (seen): a reasoning block dropped or edited in an assistant turn whose
  tool loop is still open (its tool calls answered, the customer not yet spoken again). The
  provider may reject the turn, or the model loses the plan it was following.
- ``edited`` (seen): a text or thinking block edited, or a message or block dropped, anywhere else
  (also: a stored message of another format, never parsed with this one's parser).
- ``reordered`` (seen): the same messages (or the same blocks of one message) in another order.
- ``settings`` (seen): ``system``/``tools`` (the format's ``Profile.prefix_settings``) changed.
- ``reserialised`` (unseen): only the serialisation differs (whitespace, escapes, key order).
- ``unseen`` (unseen): only members the provider never puts in the prompt differ (null, empty
  or default members, identifiers, a cache breakpoint, a lone text part written as a string:
  ``Profile.unseen`` and ``Profile.shorthand``, each with its citation).

A history that leaves the path it follows to start a branch (a regenerate, an edit, a restarted
step: ``conversations/branches.py``) is no rewrite and gets no kind; a rewrite is decided against
the previous request on the same branch, so a change is flagged once. Who reads these words:
console admins and the signals pages; an agent's pages never carry them.

To add a kind: add it to ``KINDS`` (its words for the conversation page; the rollup's column is
``rewrite_<kind>``) and to ``SEEN`` if the model sees it; decide it in ``classify`` before the
catch-all ``edited``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..blocks import Block, BlockClass, Message
from ..formats.registry import message_blocks, profile
from ..replay import canonical_sha256

TOOL_LOOP_REASONING = "tool_loop_reasoning"
EDITED = "edited"
REORDERED = "reordered"
SETTINGS = "settings"
RESERIALISED = "reserialised"
UNSEEN = "unseen"

# The words the conversation page shows for each kind.
KINDS = {
    TOOL_LOOP_REASONING: (
        "reasoning was dropped or edited inside an open tool loop: the provider may reject the "
        "turn, or the model may lose its plan"
    ),
    EDITED: "a text or thinking block was edited or dropped: the prompt cache was missed from "
    "there on",
    REORDERED: "messages or blocks were sent in another order: the prompt cache was missed",
    SETTINGS: "the system prompt or the tools changed: the prompt cache was missed from the start",
    RESERIALISED: (
        "the history was only re-serialised (same content, other bytes): the model sees the "
        "same history"
    ),
    UNSEEN: (
        "only fields the provider never puts in the prompt changed (empty or default values, "
        "identifiers, cache breakpoints): the model sees the same history"
    ),
}
# The kinds that change what the model sees: the banner, the alert and the price read these.
SEEN = frozenset({TOOL_LOOP_REASONING, EDITED, REORDERED, SETTINGS})


def seen(kind: str) -> bool:
    return kind in SEEN


def cache_lost(previous_cached: int | None, cache_read: int | None) -> int:
    """The cache reads a rewrite the model sees cost: the prefix the previous call had cached
    (read or written) that this call did not read again. 0 where the backend caches nothing."""
    return max(0, (previous_cached or 0) - (cache_read or 0))


# A ``tool_loop_reasoning`` rewrite of a format whose provider refuses it
# (``Profile.refuses_reasoning_edits``).
REFUSED = (
    "the provider refuses this history: reasoning of the open tool loop (a signature it checks) "
    "was dropped or altered"
)


def words(kind: str, fmt: str = "") -> str:
    """The page's words for ``kind`` (of an exchange of format ``fmt``)."""
    found = profile(fmt) if fmt else None
    if kind == TOOL_LOOP_REASONING and found is not None and found.refuses_reasoning_edits:
        return f"{REFUSED} ({found.refuses_reasoning_edits.url})"
    return KINDS.get(kind, "")


def _role(fmt: str, role: str) -> str:
    """The console's name of a provider role (``Profile.roles``: Gemini's ``model`` is the
    assistant)."""
    found = profile(fmt)
    return found.role(role) if found is not None else role


def _key(b: Block) -> tuple[Any, ...]:
    if b.cls in (BlockClass.NEVER, BlockClass.UNKNOWN):
        return (b.cls, b.type, b.redacted)
    return (
        b.cls,
        b.type,
        b.text,
        b.tool_name,
        b.call_id,
        json.dumps(b.input, sort_keys=True, default=str),
        json.dumps(b.output, sort_keys=True, default=str),
        b.is_error,
        b.status,
    )


def _visible_user_turn(m: Message) -> bool:
    """A message in which the customer spoke (not only tool results); ``m.role`` is the
    console's role (``_role``)."""
    return m.role == "customer" and any(b.cls is BlockClass.VISIBLE for b in m.blocks)


def _calls_tools(blocks: Sequence[Block]) -> bool:
    return any(b.cls is BlockClass.AUDIT and b.tool_name is not None for b in blocks)


def _loop_open(
    stored: Sequence[tuple[str, tuple[Block, ...]]], i: int, sent_after: Sequence[Message]
) -> bool:
    """Stored message ``i`` is an assistant turn (or the reasoning item opening one) that called
    tools, and the customer has not spoken since."""
    role, blocks = stored[i]
    if role != "assistant":
        return False
    calls = _calls_tools(blocks)
    j = i + 1
    while not calls and j < len(stored) and stored[j][0] == "assistant":
        calls = _calls_tools(stored[j][1])
        j += 1
    return calls and not any(_visible_user_turn(m) for m in sent_after)


def _only_reasoning(blocks: Sequence[Block]) -> bool:
    return bool(blocks) and all(b.cls is BlockClass.NEVER for b in blocks)


def classify(fmt: str, sent: Sequence[Message], stored_raw: Sequence[tuple[str, str, str]]) -> str:
    """How the history sent from the first differing position (``sent``) differs from the messages
    stored there (``stored_raw``: role, raw text and the format each was received in, in order).
    A stored message of another format is never parsed with this format's parser: the history
    sent cannot hold it unmodified, so it was edited."""
    if any(stored_fmt != fmt for _, _, stored_fmt in stored_raw):
        return EDITED
    stored = [(_role(fmt, role), message_blocks(fmt, raw)) for role, raw, _ in stored_raw]
    sent = [replace(m, role=_role(fmt, m.role)) for m in sent]
    stored_hashes = [canonical_sha256(raw, fmt) for _, raw, _ in stored_raw]
    sent_hashes = [canonical_sha256(m.raw, fmt) for m in sent]
    if not stored:
        return EDITED
    # The same messages in another order.
    window = sent_hashes[: len(stored_hashes)]
    if len(window) == len(stored_hashes) and sorted(window) == sorted(stored_hashes):
        return REORDERED
    # A whole message dropped: the next stored one is sent in its place.
    if len(stored) > 1 and sent_hashes[:1] == stored_hashes[1:2]:
        if _only_reasoning(stored[0][1]) and _loop_open(stored, 0, sent[1:]):
            return TOOL_LOOP_REASONING
        return EDITED
    if not sent:
        return EDITED
    first, (_, old) = sent[0], stored[0]
    new_keys = [_key(b) for b in first.blocks]
    old_keys = [_key(b) for b in old]
    if new_keys != old_keys and sorted(map(repr, new_keys)) == sorted(map(repr, old_keys)):
        return REORDERED
    visible_new = [
        k for k, b in zip(new_keys, first.blocks, strict=True) if b.cls is not BlockClass.NEVER
    ]
    visible_old = [k for k, b in zip(old_keys, old, strict=True) if b.cls is not BlockClass.NEVER]
    # Only the reasoning differs (fewer blocks, or the same blocks with other bytes).
    if visible_new == visible_old and _loop_open(stored, 0, sent[1:]):
        return TOOL_LOOP_REASONING
    return EDITED
