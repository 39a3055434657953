"""What every detector shares: the finding, the options, the scan of one text (its digit runs
found once) and the registry of detectors."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from .engine import Candidate, Engine, engine_for, stand_in

DEFAULT_PHONE_REGION = "US"


class Finding(NamedTuple):  # a tuple: detectors make many, and tuples are cheap to make
    kind: str  # the detector's name
    start: int
    end: int
    hint: str  # what the placeholder may show: last digits, a key prefix, or ""


@dataclass(frozen=True, slots=True)
class Options:
    phone_region: str = DEFAULT_PHONE_REGION


# Runs of digits joined by up to three separators ("(415) 555-2671", "4111 1111 1111 1111",
# "123-45-6789", "10.0.0.1"), not glued to a word on their left, of 7 characters or more: what
# the card, phone, SSN and IPv4 detectors look at. The one pass finds where they can start
# (``DIGIT_RUNS``: a non-word character, a digit, six more run characters), ``NUM_RUN`` confirms.
DIGIT = re.compile(r"\d")
DIGIT_GROUP = re.compile(r"\d+")  # the digits of a run, group by group
NUM_RUN = re.compile(r"\d(?<!\w\d)(?=[\d \-.()/]{6})(?:[ \-.()/]{0,3}\d)*+")
DIGIT_RUNS = Candidate("digits", r"[^0-9A-Za-z_][0-9][0-9 \-.()/]{6}", skip=1)


class Scan:
    """One text being scanned: the options, the hits of the one pass (``engine.py``) and what
    several detectors share (found once).

    The digit runs are confirmed at once from their candidates: four detectors of seven read
    them, and an attribute costs less to read than a property.
    """

    __slots__ = ("_lower", "hits", "options", "runs", "standin", "text")

    def __init__(self, text: str, options: Options, engine: Engine | None = None) -> None:
        self.text = text
        self.options = options
        self.standin = stand_in(text)
        if engine is None:  # a scan made outside the pipeline: every registered detector's
            engine = engine_for(tuple(c for d in DETECTORS.values() for c in d.candidates))
        self.hits = hits = engine.scan(self.standin)
        # Spans of the digit runs (``NUM_RUN``) of the text, from their candidates.
        self.runs: list[tuple[int, int]] = []
        starts = hits.get("digits")
        if starts:
            covered = 0
            match = NUM_RUN.match
            for start, _ in starts:
                if start >= covered and (m := match(text, start)) is not None:
                    self.runs.append(m.span())
                    covered = m.end()
        self._lower: str | None = None

    def folded(self, start: int, end: int) -> str:
        """``text[start:end]`` as the one pass read it (engine.py), in lower case: a character
        beyond ASCII that matches an ASCII letter in any case is that letter."""
        return self.standin[start + 1 : end + 1].decode("latin-1").lower()

    @property
    def lower(self) -> str:
        """The text in lower case, for case-insensitive substring tests."""
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower


@dataclass(frozen=True, slots=True)
class Detector:
    name: str
    prefilter: Callable[[Scan], bool]  # False: the text cannot contain a finding of this kind
    scan: Callable[[Scan], Iterable[Finding]]
    template: str  # the placeholder; "{hint}" is replaced by the finding's hint
    # Where its findings can be: its patterns of the one pass (engine.py). A detector without
    # any scans every text its prefilter lets through.
    candidates: tuple[Candidate, ...] = ()


class UnknownDetectorError(ValueError):
    """A detector name that is not in ``DETECTORS``."""


DETECTORS: dict[str, Detector] = {}
RANK: dict[str, int] = {}


def register(detector: Detector) -> None:
    RANK[detector.name] = len(DETECTORS)
    DETECTORS[detector.name] = detector


def has_runs(scan: Scan) -> bool:
    """Whether the text has a digit run (``NUM_RUN``): what cards, phones and SSNs start from."""
    return bool(scan.runs)
