"""The provider documentation a rule or a profile fact follows (``profile.py``, ``unseen.py``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Citation:
    """The provider documentation a rule follows: where, the sentence, and when it was read."""

    url: str
    quote: str
    checked: str  # ISO date
