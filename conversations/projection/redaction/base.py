"""What every detector shares: the finding, the options, the scan of one text (its digit runs
found once) and the registry of detectors."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

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
# the card, phone, SSN and IPv4 detectors look at. One pass serves them all.
DIGIT = re.compile(r"\d")
DIGIT_GROUP = re.compile(r"\d+")  # the digits of a run, group by group
NUM_RUN = re.compile(r"\d(?<!\w\d)(?=[\d \-.()/]{6})(?:[ \-.()/]{0,3}\d)*+")


class Scan:
    """One text being scanned: the options, and what several detectors share (found once).

    The digit runs are found at once when the text has a digit: four detectors of seven read
    them, and an attribute costs less to read than a property.
    """

    __slots__ = ("_lower", "has_digit", "options", "runs", "text")

    def __init__(self, text: str, options: Options) -> None:
        self.text = text
        self.options = options
        self.has_digit = DIGIT.search(text) is not None
        # Spans of the digit runs (``NUM_RUN``) of the text (a search first: most texts have none).
        self.runs: list[tuple[int, int]] = []
        first = NUM_RUN.search(text) if self.has_digit else None
        if first is not None:
            self.runs.append(first.span())
            self.runs += map(_SPAN, NUM_RUN.finditer(text, first.end()))
        self._lower: str | None = None

    @property
    def lower(self) -> str:
        """The text in lower case, for case-insensitive substring tests."""
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower


_SPAN = re.Match.span


@dataclass(frozen=True, slots=True)
class Detector:
    name: str
    prefilter: Callable[[Scan], bool]  # False: the text cannot contain a finding of this kind
    scan: Callable[[Scan], Iterable[Finding]]
    template: str  # the placeholder; "{hint}" is replaced by the finding's hint


class UnknownDetectorError(ValueError):
    """A detector name that is not in ``DETECTORS``."""


DETECTORS: dict[str, Detector] = {}
RANK: dict[str, int] = {}


def register(detector: Detector) -> None:
    RANK[detector.name] = len(DETECTORS)
    DETECTORS[detector.name] = detector


def has_digit(scan: Scan) -> bool:
    return scan.has_digit


def has_runs(scan: Scan) -> bool:
    """Whether the text has a digit run (``NUM_RUN``): what cards, phones and SSNs start from."""
    return bool(scan.runs)
