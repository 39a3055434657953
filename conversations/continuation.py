"""What a chat backend sends back to continue a conversation (DESIGN section 12).

``GET /api/v1/conversations/{id}/messages?for=continuation`` returns the stored history less
what the provider does not need next turn: the reasoning of earlier turns. What is kept is kept
byte for byte: a message left whole is the exact text first received; a message with reasoning
blocks left out is its exact text with those blocks cut out of its content array (every other
byte, every kept block included, exactly as received). The response says how many elements and
bytes were left out. Inside an open tool loop (the last assistant turn ends in a tool call whose
result is still to come, or has just come) that turn is kept unmodified, reasoning and
signatures included, because the provider needs it.

The rules of each format are its profile's ``continuation`` (``formats/<name>/profile.py``),
keyed by model family and account regime, each with the provider documentation it follows
(address, quoted sentence, date checked; listed in docs/formats.md). The conversation's model
picks the rule; a model no rule names gets the byte-exact replay (nothing left out: cutting can
only break a provider's check, keeping costs tokens). The regime is the deployment's
``ANTHROPIC_THINKING_REGIME`` (``thinking_regime``). This module only applies the rule, byte by
byte. A format is added with its rules (the registry refuses a profile without one); their
cases go in ``tests/conversations/test_continuation_rules.py`` (each test names its rule).

Pure: no Django, no model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from .formats import profile
from .formats.profile import LEGACY, PRESERVED, REGIMES, WHOLE

REPLAY = "replay"  # the rule name of the byte-exact replay (no rule for the model)
# Anthropic enforces the prefix check by default for accounts created on or after this day.
PREFIX_CHECK_DEFAULT_FROM = date(2026, 8, 31)

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"


@dataclass(frozen=True)
class Continuation:
    raws: list[str]
    left_out_elements: int
    left_out_bytes: int
    open_tool_loop: bool
    kept_whole: list[int] = field(default_factory=list)  # indices of elements returned as stored
    rule: str = REPLAY  # the name of the rule applied


def thinking_regime(setting: str, account_created: date | None) -> str:
    """The account's thinking regime from ``ANTHROPIC_THINKING_REGIME`` (``preserved``,
    ``legacy`` or ``auto``) and ``ANTHROPIC_ACCOUNT_CREATED``: ``auto`` is ``preserved`` for an
    account created on or after 2026-08-31 and for an account of unknown age (leaving nothing
    out is never refused), ``legacy`` before."""
    if setting in REGIMES:
        return setting
    if setting != "auto":
        raise ValueError(f"ANTHROPIC_THINKING_REGIME: preserved, legacy or auto, not {setting!r}")
    if account_created is not None and account_created < PREFIX_CHECK_DEFAULT_FROM:
        return LEGACY
    return PRESERVED


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _member(text: str, name: str) -> tuple[int, int] | None:
    """Where the value of the top-level member ``name`` of a JSON object starts and ends."""
    i = _skip(text, 0)
    if not text.startswith("{", i):
        return None
    i = _skip(text, i + 1)
    found = None
    while i < len(text) and text[i] != "}":
        key, i = _DECODER.raw_decode(text, i)
        i = _skip(text, _skip(text, i) + 1)  # past ':'
        start = i
        _, i = _DECODER.raw_decode(text, i)
        if key == name:
            found = (start, i)  # the last occurrence wins, as json.loads has it
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
    return found


def _items(text: str, start: int) -> list[tuple[int, int]]:
    """Where each element of the array at ``text[start]`` starts and ends."""
    out: list[tuple[int, int]] = []
    i = _skip(text, start + 1)
    while i < len(text) and text[i] != "]":
        begin = i
        _, i = _DECODER.raw_decode(text, i)
        out.append((begin, i))
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
    return out


def cut_blocks(raw: str, member: str, drop: set[int]) -> str:
    """``raw`` with the elements ``drop`` of its array member ``member`` cut out: every other
    byte as it was (the kept elements joined by ``,``)."""
    where = _member(raw, member)
    if where is None or not drop:
        return raw
    start, end = where
    items = _items(raw, start)
    kept = [raw[s:e] for n, (s, e) in enumerate(items) if n not in drop]
    return raw[:start] + "[" + ",".join(kept) + "]" + raw[end:]


def _members(text: str) -> list[tuple[str, int, int]]:
    """Each top-level member of a JSON object: its key, where its key starts, where its value
    ends."""
    out: list[tuple[str, int, int]] = []
    i = _skip(text, _skip(text, 0) + 1)
    while i < len(text) and text[i] != "}":
        start = i
        key, i = _DECODER.raw_decode(text, i)
        i = _skip(text, _skip(text, i) + 1)
        _, i = _DECODER.raw_decode(text, i)
        out.append((key, start, i))
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
    return out


def cut_members(raw: str, names: set[str]) -> str:
    """``raw`` (a JSON object) without its members ``names``: every other member exactly as it
    was (``"key": value`` with its own spacing), joined by ``,``."""
    members = _members(raw)
    if not any(key in names for key, _, _ in members):
        return raw
    kept = [raw[s:e] for key, s, e in members if key not in names]
    return "{" + ",".join(kept) + "}"


def continuation(
    fmt: str, raws: Sequence[str], *, model: str = "", regime: str = PRESERVED
) -> Continuation:
    """The elements to send back for ``fmt`` with ``model`` under the account's ``regime``, and
    what was left out. A format or a model without a rule gets everything, unmodified."""
    found = profile(fmt)
    rule = found.continuation.rule(model, regime) if found is not None and model else None
    if found is None or rule is None:
        return Continuation(list(raws), 0, 0, False, list(range(len(raws))))
    member = found.continuation.member
    values = [json.loads(r) for r in raws]
    open_loop, _, cuts = rule.decide(values)
    out: list[str] = []
    whole: list[int] = []
    left_elements = 0
    left_bytes = 0
    for i, raw in enumerate(raws):
        drop = cuts.get(i)
        if not drop:
            out.append(raw)
            whole.append(i)
            continue
        if WHOLE in drop:
            left_elements += 1
            left_bytes += len(raw.encode("utf-8"))
            continue
        blocks = {n for n in drop if isinstance(n, int)}
        names = {n for n in drop if isinstance(n, str)}
        cut = cut_members(cut_blocks(raw, member, blocks), names)
        left_elements += len(drop)
        left_bytes += len(raw.encode("utf-8")) - len(cut.encode("utf-8"))
        out.append(cut)
    return Continuation(out, left_elements, left_bytes, open_loop, whole, rule.name)


def continuation_envelope(c: Continuation) -> bytes:
    """The replay envelope with what was left out said after the messages, and the rule that
    decided it: ``{"messages":[...],"left_out":{"elements":n,"bytes":n,"rule":"..."}}``."""
    head = b'{"messages":[' + b",".join(r.encode("utf-8") for r in c.raws) + b"]"
    tail = (
        f',"left_out":{{"elements":{c.left_out_elements},"bytes":{c.left_out_bytes},'
        f'"rule":{json.dumps(c.rule)}}}}}'
    )
    return head + tail.encode("ascii")
