"""The one pass: every detector's candidates found by one Hyperscan scan of the text.

Each detector declares in the registry (``pipeline.py``) the ``Candidate`` patterns where its
findings can be: a superset, cheap to state, of the places its own Python regex and validator
confirm (the digit runs of cards, phones, SSNs and IPv4; "XX00" for IBANs; "@" between a local
and a domain character; the literal triggers of secrets and labelled SSNs; "x:y:" for IPv6). The
engine compiles the candidates of the detectors a deployment runs into one Hyperscan database
(block mode, ``HS_FLAG_SOM_LEFTMOST`` so that each hit has its start), scans each text once, and
hands each detector the spans of its own candidates; the detector confirms each with its Python
regex at that offset only (``pattern.match(text, start)``), then its validator (Luhn, IBAN,
``phonenumbers``, ``ipaddress``). A text without candidates costs one scan and no Python per kind.

Why Hyperscan, measured on bench/redaction.py's two corpora (3,000 texts each, the same
candidates, on a 2-core machine shared with other work, December 2026): the one pass costs
13-22 µs a text, stand-in included; one ``re`` alternation of the same candidates (one
``finditer``, the kind read from the group that matched) 74-196 µs; the same alternation in RE2
(``google-re2``) 82-193 µs, its ``re2.Set`` telling which patterns match but not where. An
alternation also reports no overlapping candidates (a digit run inside a key, a card's digits
inside an IBAN), which the detectors need. Hyperscan's syntax has no lookarounds nor
backreferences: a pattern here reads its context character instead (``skip``), and the Python
regex confirms on the span.

Hyperscan reads bytes: the engine scans a stand-in of the text, one byte a character, so that
offsets are the text's own (no UTF-8 offsets to map back). The text in Latin-1: ASCII as it is,
and no other Latin-1 character is a decimal digit or matches an ASCII letter in any case. Each
character beyond Latin-1 becomes "5" if it is a decimal digit (Python's ``\\d`` matches it), the
ASCII letter that Python's case-insensitive matching takes it for (the dotted capital and the
dotless small I, the long s, the Kelvin sign), else "?". For every pattern here, a character
beyond ASCII is then a non-word character unless it stands for a digit or a letter: the
candidates stay a superset, and the Python regex on the real text decides. Encoding runs in C;
only runs of characters beyond Latin-1 (the euro sign, Polish, Turkish, Japanese) go through
the stand-in table. A " " comes first, so that "not preceded by a word character" has a context
character at offset 0.

A scratch space per thread (Hyperscan's scratch may not be shared by concurrent scans; the
binding releases the GIL while it scans).
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import hyperscan


@dataclass(frozen=True, slots=True)
class Candidate:
    """Where a detector's findings can be: one pattern of the one pass.

    ``pattern``: Hyperscan's syntax over the stand-in (ASCII, and bytes 0x80-0xff for the
    Latin-1 characters beyond it). A hit is reported as the span
    (start + ``skip``, end) in the text's offsets. Detectors that share a candidate (the digit
    runs) share its name; a name stands for one pattern.
    """

    name: str
    pattern: str
    caseless: bool = False
    skip: int = 0  # characters of context the pattern reads before the position it stands for


# The characters beyond ASCII that Python's case-insensitive matching takes for an ASCII letter
# (``test_stand_in_table_is_pythons_reading`` checks every code point).
_FOLDS_TO_ASCII = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}


class _StandIn(dict[int, str]):
    """``str.translate`` table for characters beyond Latin-1: each one's stand-in (computed once
    per character and kept: a character alone says nothing of anyone)."""

    def __missing__(self, code: int) -> str:
        out = _FOLDS_TO_ASCII.get(code) or ("5" if chr(code).isdecimal() else "?")
        self[code] = out
        return out


_STAND_IN = _StandIn()
_ERRORS = "redaction-stand-in"


def _stand_in_error(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    return error.object[error.start : error.end].translate(_STAND_IN), error.end


codecs.register_error(_ERRORS, _stand_in_error)


def stand_in(text: str) -> bytes:
    """What the engine scans: " " and the text, one byte a character (see above)."""
    return (" " + text).encode("latin-1", _ERRORS)


Hits = dict[str, list[tuple[int, int]]]


def _on_match(pattern: int, start: int, end: int, flags: int, found: object) -> None:
    found.append((pattern, start, end))  # type: ignore[attr-defined]  # the list scan() gives


class Engine:
    """One Hyperscan database for a set of candidates; ``scan(text)`` gives the hits by name."""

    def __init__(self, candidates: Iterable[Candidate]) -> None:
        by_name: dict[str, Candidate] = {}
        for c in candidates:
            known = by_name.setdefault(c.name, c)
            if known != c:
                raise ValueError(f"candidate {c.name!r} defined twice, differently")
        self.candidates = tuple(by_name.values())
        self._names = [c.name for c in self.candidates]
        # The offset of the text in the scanned bytes (the " " before it) less the context.
        self._shift = [1 - c.skip for c in self.candidates]
        self._database: hyperscan.Database | None = None
        self._local = threading.local()
        if self.candidates:
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            database.compile(
                expressions=[c.pattern.encode("ascii") for c in self.candidates],
                ids=list(range(len(self.candidates))),
                elements=len(self.candidates),
                flags=[
                    hyperscan.HS_FLAG_SOM_LEFTMOST
                    | (hyperscan.HS_FLAG_CASELESS if c.caseless else 0)
                    for c in self.candidates
                ],
            )
            self._database = database

    def _scratch(self) -> hyperscan.Scratch:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._database)
        return scratch

    def scan(self, standin: bytes) -> Hits:
        """The hits of every candidate in ``standin`` (``stand_in(text)``), by candidate name,
        in the text's offsets, each list in the order of its starts."""
        if self._database is None:
            return {}
        found: list[tuple[int, int, int]] = []
        self._database.scan(
            standin,
            match_event_handler=_on_match,
            context=found,
            scratch=self._scratch(),
        )
        if not found:
            return {}
        hits: Hits = {}
        names, shift = self._names, self._shift
        for pattern, start, end in found:
            name = names[pattern]
            span = (start - shift[pattern], end - 1)
            spans = hits.get(name)
            if spans is None:
                hits[name] = [span]
            else:
                spans.append(span)
        for spans in hits.values():
            if len(spans) > 1:
                spans.sort()  # reported in the order of their ends
        return hits


@lru_cache(maxsize=64)
def engine_for(candidates: tuple[Candidate, ...]) -> Engine:
    """The engine of these candidates, compiled once."""
    return Engine(candidates)
