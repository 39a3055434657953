"""What the model never sees of a message, as data (DESIGN section 20): the members a provider
never puts in the prompt (``Unseen``) and the members it reads the same written two ways
(``Shorthand``), each with the documentation or official-SDK behaviour it rests on. A format's
profile lists its own (``Profile.unseen``, ``Profile.shorthand``); ``prompt_form`` applies them,
and ingest matches a history sent back by the result (``replay.prompt_sha256``). Pure data and
small pure functions, like every module of ``formats/``; re-exported by ``profile.py``.

To add a member: an ``Unseen`` (or ``Shorthand``) in the format's ``profile.py``, with its words
and citation (the registry refuses one without), and its row in docs/formats.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .citation import Citation


class _AnyValue:
    """The value of an ``Unseen`` member that is unseen whatever it holds (an identifier)."""

    def __repr__(self) -> str:
        return "any value"


ANY_VALUE: Any = _AnyValue()


@dataclass(frozen=True, slots=True)
class Unseen:
    """A member of a message the provider never puts in the model's prompt: a history that
    drops it, adds it, or sends it with another serialisation makes a change the model does not
    see, recorded, with no banner and no alert (DESIGN sections 14 and 20). ``path`` addresses
    it from the message object (``"*"``: every element of an array); it counts as unseen only
    with the value ``value`` (null, an empty list, the provider's default), or whatever it holds
    with ``ANY_VALUE`` (a member that only identifies or indexes). ``beside``: only in an object
    that also holds this member, not empty (a tools-only message's ``content``); ``of_type``:
    only in an object of this ``type`` (a reasoning item's ``content``). ``why`` says it in
    words; ``citation`` is the documentation or official-SDK behaviour it rests on
    (docs/formats.md lists them all)."""

    path: tuple[str, ...]
    value: Any
    why: str
    citation: Citation
    beside: str = ""
    of_type: str = ""


@dataclass(frozen=True, slots=True)
class Shorthand:
    """A message member the provider reads the same written two ways: a string, or a list of
    exactly one part of a type in ``part_types`` that holds only its ``type`` and ``text`` once
    the unseen members are left out (``"content": "Hi"`` and ``"content": [{"type": "text",
    "text": "Hi"}]``). ``why`` and ``citation`` as for ``Unseen``."""

    member: str
    part_types: frozenset[str]
    why: str
    citation: Citation


def prompt_form(unseen: Sequence[Unseen], value: Any, shorthand: Sequence[Shorthand] = ()) -> Any:
    """``value`` (a message object) without the members ``unseen`` names, where they have the
    value named, and with a lone text part written as the string it stands for
    (``shorthand``): what two messages must share for the model to see the same thing."""
    for rule in unseen:
        value = _without(value, rule.path, rule)
    for short in shorthand:
        if not isinstance(value, dict):
            break
        parts = value.get(short.member)
        if (
            isinstance(parts, list)
            and len(parts) == 1
            and isinstance(parts[0], dict)
            and set(parts[0]) == {"type", "text"}
            and parts[0]["type"] in short.part_types
            and isinstance(parts[0]["text"], str)
        ):
            value = {**value, short.member: parts[0]["text"]}
    return value


def _without(value: Any, path: tuple[str, ...], rule: Unseen) -> Any:
    head, rest = path[0], path[1:]
    if head == "*":
        if not isinstance(value, list):
            return value
        return [_without(v, rest, rule) for v in value]
    if not isinstance(value, dict) or head not in value:
        return value
    if not rest:
        if rule.value is not ANY_VALUE and value[head] != rule.value:
            return value
        if rule.beside and not value.get(rule.beside):
            return value
        if rule.of_type and value.get("type") != rule.of_type:
            return value
        return {k: v for k, v in value.items() if k != head}
    return {**value, head: _without(value[head], rest, rule)}
