"""IP addresses: IPv4 from the digit runs, IPv6 validated by ``ipaddress``."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from .base import (
    DIGIT,
    Finding,
    Scan,
)
from .engine import Candidate

# --- IP addresses -------------------------------------------------------------------------------
# IPv4: four decimal octets 0-255 without leading zeros, not part of a longer dotted number
# (OIDs, "10.0.19045.3803"). A dotted quad right after a version word ("version 1.2.3.4",
# "build: 4.1.0.12", "updated to 4.1.0.12", "v1.2.3.4") is read as a version, not an
# address: an address labelled as a version is rarer in support text than a four-part version.
_IPV4 = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w]|\.\d)")
_VERSION_BEFORE = re.compile(
    r"(?i)(?:\b(?:version|ver|build|release|firmware|fw|sdk|rev|revision)\b\.?"
    r"|\b(?:update|upgrade|downgrade)d?\s+to)[\"']?\s*[:=#]?\s*"
    r"[\"']?$"
)
# IPv6: 2 to 7 colon-separated hex groups (possibly empty, "::"), an optional last group or
# embedded IPv4; ipaddress decides. At least one digit, so "dead::beef" in code is not flagged.
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}+[0-9A-Fa-f.]*+(?![\w:])")
# Its candidates in the one pass: two colons with at most four hex digits between them, which
# every match of ``_IPV6`` holds (IPv4 comes from the digit runs).
IPV6_CANDIDATE = Candidate("ipv6", r":[0-9A-Fa-f]{0,4}:")


def _octets_ok(candidate: str) -> bool:
    return all(len(o) == 1 or (o[0] != "0" and int(o) <= 255) for o in candidate.split("."))


def _scan_ip(scan: Scan) -> list[Finding]:
    text = scan.text
    found: list[Finding] = []
    for start, end in scan.runs:
        if text.count(".", start, end) < 3:
            continue
        for m in _IPV4.finditer(text, start, end + 2):  # + 2: the lookahead sees past the run
            if _octets_ok(m.group()) and not _after_version_word(text, m.start()):
                found.append(Finding("ip", m.start(), m.end(), ""))
    if "ipv6" in scan.hits and ("::" in text or text.count(":") >= 7):  # compressed, or 8 groups
        for m in _ipv6_candidates(text):
            candidate = m.group().rstrip(".")
            if not DIGIT.search(candidate):
                continue
            try:
                ipaddress.IPv6Address(candidate)
            except ValueError:
                continue
            found.append(Finding("ip", m.start(), m.start() + len(candidate), ""))
    return found


_HEX_OR_COLON = frozenset("0123456789abcdefABCDEF:")


def _ipv6_candidates(text: str) -> Iterator[re.Match[str]]:
    """``_IPV6`` tried at each colon's group (a regex pass over all text costs 3x as much)."""
    at = text.find(":")
    while at != -1:
        start = at
        while start > 0 and text[start - 1] in _HEX_OR_COLON and at - start < 40:
            start -= 1
        m = _IPV6.match(text, start)
        if m is not None:
            yield m
        at = text.find(":", m.end() if m is not None else at + 1)


def _ip_prefilter(scan: Scan) -> bool:
    """What ``_scan_ip`` needs: a digit run with three dots (IPv4), or the colons of an IPv6."""
    text = scan.text
    if bool(scan.runs) and text.count(".") >= 3:
        return True
    return "ipv6" in scan.hits and ("::" in text or text.count(":") >= 7)


def _after_version_word(text: str, start: int) -> bool:
    return _VERSION_BEFORE.search(text[max(0, start - 24) : start]) is not None
