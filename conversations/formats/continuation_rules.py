"""The continuation rules a profile declares (``Profile.continuation``): for which models, under
which account regime, what ``?for=continuation`` may leave out of a stored history, and the
walks the formats' rules share. ``conversations/continuation.py`` applies the cuts byte by byte;
the profile module re-exports these names."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .citation import Citation

# element index -> indices of its content array to cut, ``WHOLE`` for the element, or member
# names to remove (``continuation.py`` applies the cuts byte by byte).
WHOLE = -1
Cuts = dict[int, set[int | str]]
Decide = Callable[[Sequence[Any]], tuple[bool, set[int], Cuts]]


# The account regimes a rule may be keyed by (``ANTHROPIC_THINKING_REGIME``): where a provider
# leaves a check to the account, the deployment says which applies; ``ANY`` matches every one.
ANY = "*"
PRESERVED = "preserved"  # the provider checks that nothing before a thinking block changed
LEGACY = "legacy"  # no such check: earlier turns' thinking may be left out
REGIMES = (PRESERVED, LEGACY)


@dataclass(frozen=True, slots=True)
class Rule:
    """One continuation rule: for the models matching ``models`` (``fnmatch`` patterns on the
    model id, lower case) under ``regime``, what ``decide`` leaves out, as ``says`` puts it in
    words, following ``citation``. ``name`` is the rule's stable name (the API reports it in the
    ``Continuation-Rule`` header; tests and docs/formats.md name it)."""

    name: str
    models: tuple[str, ...]
    regime: str
    decide: Decide
    says: str
    citation: Citation

    def matches(self, model: str, regime: str) -> bool:
        if self.regime not in (ANY, regime):
            return False
        name = model.lower()
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.models)


@dataclass(frozen=True, slots=True)
class Continuation:
    """What ``?for=continuation`` may leave out for one format: the first of ``rules`` that
    matches the conversation's model and the account's regime decides (a model no rule names
    gets the byte-exact replay: cutting can only break a provider's check, keeping costs
    tokens). ``decide`` reads the stored history (parsed) and says whether a tool loop is open,
    which elements are protected, and what to cut; ``member`` names the array member the cut
    indices address (``content``, ``parts``), or "" when cuts are whole elements or member
    names."""

    rules: tuple[Rule, ...]
    member: str

    @property
    def citations(self) -> tuple[Citation, ...]:
        return tuple(rule.citation for rule in self.rules)

    def rule(self, model: str, regime: str) -> Rule | None:
        """The rule for ``model`` under ``regime``, or None (the byte-exact replay)."""
        return next((r for r in self.rules if r.matches(model, regime)), None)


def keep_all(decide: Decide) -> Decide:
    """A rule that leaves nothing out; whether a tool loop is open is ``decide``'s answer."""

    def kept(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
        open_loop, _, _ = decide(values)
        return open_loop, set(range(len(values))), {}

    return kept


# --- helpers the profiles' continuation rules share -------------------------------------------


def type_of(value: Any) -> str:
    """A block's or an item's ``type`` ("" when it has none)."""
    return str(value.get("type", "")) if isinstance(value, dict) else ""


def items_of(value: Any, member: str) -> list[Any]:
    """The array member ``member`` of a message object (``content``, ``parts``), or []."""
    if isinstance(value, dict) and isinstance(value.get(member), list):
        return list(value[member])
    return []


def earlier_thinking_cuts(
    values: Sequence[Any],
    *,
    kind_of: Callable[[Any], str],
    result: str,
    call: str,
    never: frozenset[str],
) -> tuple[bool, set[int], Cuts]:
    """The rule of Anthropic's models, on any format that carries their messages as ``role`` and
    a ``content`` array: the reasoning blocks (kinds ``never``) of assistant turns before the
    open tool loop are left out; the open loop's turn, from the latest user message that is not
    only tool results (kind ``result``), is kept whole while its last assistant message calls a
    tool (kind ``call``). An assistant message is never cut to nothing."""

    def genuine_user(v: Any) -> bool:
        if not isinstance(v, dict) or v.get("role") != "user":
            return False
        content = v.get("content")
        return not isinstance(content, list) or any(kind_of(b) != result for b in content)

    last_user = max((i for i, v in enumerate(values) if genuine_user(v)), default=-1)
    turn = range(last_user + 1, len(values))
    assistants = [
        i for i in turn if isinstance(values[i], dict) and values[i].get("role") == "assistant"
    ]
    open_loop = bool(assistants) and any(
        kind_of(b) == call for b in items_of(values[assistants[-1]], "content")
    )
    protected = set(turn) if open_loop else set()
    cuts = reasoning_cuts(values, protected, member="content", kinds=never, kind_of=kind_of)
    return open_loop, protected, cuts


def reasoning_cuts(
    values: Sequence[Any],
    protected: set[int],
    *,
    member: str,
    kinds: frozenset[str],
    kind_of: Callable[[Any], str] = type_of,
) -> Cuts:
    """The cuts that leave the reasoning out of every assistant message but the ``protected``
    ones: the indices of its ``member`` array (``content``, ``parts``) whose kind is one of
    ``kinds``. An assistant message is never cut to nothing (one holding only reasoning is kept
    whole)."""
    cuts: Cuts = {}
    for i, v in enumerate(values):
        if i in protected or not isinstance(v, dict) or v.get("role") != "assistant":
            continue
        items = items_of(v, member)
        drop: set[int | str] = {n for n, item in enumerate(items) if kind_of(item) in kinds}
        if drop and len(drop) < len(items):
            cuts[i] = drop
    return cuts
