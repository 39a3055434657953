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
    """One text being scanned: the options, and what several detectors share (found once)."""

    __slots__ = ("_lower", "_runs", "has_digit", "options", "text")

    def __init__(self, text: str, options: Options) -> None:
        self.text = text
        self.options = options
        self.has_digit = DIGIT.search(text) is not None
        self._runs: list[tuple[int, int]] | None = None
        self._lower: str | None = None

    @property
    def lower(self) -> str:
        """The text in lower case, for case-insensitive substring tests."""
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    @property
    def runs(self) -> list[tuple[int, int]]:
        """Spans of the digit runs (``NUM_RUN``) of the text."""
        if self._runs is None:
            self._runs = [m.span() for m in NUM_RUN.finditer(self.text)]
        return self._runs


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
    return scan.has_digit and bool(scan.runs)
