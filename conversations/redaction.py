"""The one redaction pipeline (DESIGN section 4): transcripts, tool trail and reasoning summaries.

``redact(text)`` replaces what the enabled detectors find with a placeholder that keeps the kind
and a hint (``[card ••4242]``, ``[email]``, ``[secret sk-ant-…]``); ``find(text)`` returns the
findings themselves; ``redact_value(value)`` redacts every string inside a JSON value.

Each detector finds *candidates* with a regular expression and confirms them with a validator
made for the job (Luhn and issuer ranges for cards, ``stdnum.iban`` for IBANs, ``phonenumbers``
for phones, ``ipaddress`` for IPv6), behind a cheap prefilter (no ``@``, no e-mail scan; no digit,
no card scan), so plain text costs almost nothing. When findings overlap, the longest wins; on
equal spans the detector registered first wins (``secret`` before ``card`` before ``phone``...).

Which detectors run is a deployment setting, ``REDACTION_DETECTORS`` (names; empty means all);
phone numbers written without a country code are read in ``REDACTION_PHONE_REGION``.
The functions here are pure: Django settings are read only when no explicit detectors or region
are given, and only if settings are configured (otherwise: every detector, region "US").

To add a detector: write ``_scan_<name>(text, options)`` yielding ``Finding(kind=<name>, ...)``
with a hint that reveals nothing sensitive, a prefilter that answers "cannot contain one" in
one cheap pass, and register it with ``_register(Detector(...))`` below (its position sets its
priority on equal spans). Then add its cases to ``tests/conversations/test_redaction.py`` (found
and near-misses) and its kind to the labelled corpus of ``bench/redaction.py``.
"""

from __future__ import annotations

import bisect
import ipaddress
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import phonenumbers
from phonenumbers import Leniency, PhoneNumberMatcher
from stdnum import iban as stdnum_iban
from stdnum import numdb

__all__ = [
    "DETECTORS",
    "Detector",
    "Finding",
    "Options",
    "UnknownDetectorError",
    "enabled_detectors",
    "find",
    "placeholder",
    "redact",
    "redact_value",
]

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
_DIGIT = re.compile(r"\d")
_NUM_RUN = re.compile(r"\d(?<!\w\d)(?=[\d \-.()/]{6})(?:[ \-.()/]{0,3}\d)*+")


class Scan:
    """One text being scanned: the options, and what several detectors share (found once)."""

    __slots__ = ("_runs", "has_digit", "options", "text")

    def __init__(self, text: str, options: Options) -> None:
        self.text = text
        self.options = options
        self.has_digit = _DIGIT.search(text) is not None
        self._runs: list[tuple[int, int]] | None = None

    @property
    def runs(self) -> list[tuple[int, int]]:
        """Spans of the digit runs (``_NUM_RUN``) of the text."""
        if self._runs is None:
            self._runs = [m.span() for m in _NUM_RUN.finditer(self.text)]
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
_RANK: dict[str, int] = {}


def _register(detector: Detector) -> None:
    _RANK[detector.name] = len(DETECTORS)
    DETECTORS[detector.name] = detector


def _has_digit(scan: Scan) -> bool:
    return scan.has_digit


# --- secrets: API keys and tokens by their documented prefixes --------------------------------
# One pattern per family; the "prefix" group is the hint. Each pattern runs only if its literal
# trigger occurs in the text (a substring test, far cheaper than any regex).
_KEY_START = r"(?<![A-Za-z0-9_\-])"
_SECRET_FAMILIES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (triggers, re.compile(pattern))
    for triggers, pattern in (
        # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-) and Anthropic (sk-ant-api03-...).
        (
            ("sk-",),
            _KEY_START
            + r"(?P<prefix>sk-ant-|sk-proj-|sk-svcacct-|sk-admin-|sk-)"
            + r"(?P<body>[A-Za-z0-9_\-]{20,})",
        ),
        # Stripe secret, restricted and publishable keys.
        (
            ("_live_", "_test_"),
            _KEY_START + r"(?P<prefix>(?:sk|rk|pk)_(?:live|test)_)[0-9A-Za-z]{10,}",
        ),
        # AWS access key ids (long-term AKIA, temporary ASIA).
        (("AKIA", "ASIA"), r"(?<![A-Z0-9])(?P<prefix>AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
        # GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh, fine-grained.
        (
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
            _KEY_START + r"(?P<prefix>gh[pousr]_)[A-Za-z0-9]{36,255}",
        ),
        (("github_pat_",), _KEY_START + r"(?P<prefix>github_pat_)[A-Za-z0-9_]{22,255}"),
        (("xox",), _KEY_START + r"(?P<prefix>xox[baprs]-)[A-Za-z0-9\-]{10,}"),  # Slack
        (("glpat-",), _KEY_START + r"(?P<prefix>glpat-)[A-Za-z0-9_\-]{20,}"),  # GitLab
        (("AIza",), _KEY_START + r"(?P<prefix>AIza)[0-9A-Za-z_\-]{35}"),  # Google API keys
        # JSON Web Tokens: header and payload are base64url JSON objects, hence "eyJ" twice.
        (
            ("eyJ",),
            _KEY_START
            + r"(?P<prefix>eyJ)[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        ),
        # PEM private keys. Without its END line (a truncated tool output), the base64 lines
        # that follow are taken (words of 16+ base64 characters, split by blanks or "\n").
        (
            ("-----BEGIN",),
            r"-----BEGIN (?P<prefix>(?:[A-Z0-9]+ )*PRIVATE KEY)-----"
            r"(?:(?s:.*?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
            r"|(?:(?:\s|\\n)*+[A-Za-z0-9+/=]{16,}+)*+)",
        ),
    )
)
# Bearer and basic credentials. After "Authorization:" any token; a bare "Bearer xyz" only when
# xyz looks random (16+ token characters, a digit among them), so prose about bearer tokens stays.
_AUTH_HEADER = re.compile(
    r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:(?P<scheme>bearer|basic|token))\s+"
    r"(?P<token>[A-Za-z0-9\-._~+/]{8,}=*)"
)
_BARE_BEARER = re.compile(
    r"(?<![\w-])(?i:(?P<scheme>bearer))\s+(?P<token>[A-Za-z0-9\-._~+/]{16,}=*)"
)
# Substring tests, not a case-insensitive regex: "Bearer", "bearer", "BEARER" all contain one.
_AUTH_TRIGGERS = ("earer", "EARER", "uthoriz", "UTHORIZ")


def _scan_secret(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    present = set(_SECRET_TRIGGERS.findall(text))
    known: list[Finding] = []
    for triggers, pattern in _SECRET_FAMILIES:
        if present.isdisjoint(triggers):
            continue
        for m in pattern.finditer(text):
            prefix = m.group("prefix")
            if prefix == "sk-" and not _DIGIT.search(m.group("body")):
                continue  # "sk-learn-compatible-..." is prose; keys are random, digits included
            known.append(Finding("secret", m.start(), m.end(), prefix))
    yield from known
    if present.isdisjoint(_AUTH_TRIGGERS):
        return
    for pattern in (_AUTH_HEADER, _BARE_BEARER):
        for m in pattern.finditer(text):
            start, end = m.span("token")
            if pattern is _BARE_BEARER and not _DIGIT.search(m.group("token")):
                continue
            # A token with a known prefix keeps that (more telling) hint.
            if any(f.start < end and start < f.end for f in known):
                continue
            scheme = m.group("scheme")
            known.append(Finding("secret", start, end, scheme[0].upper() + scheme[1:].lower()))
            yield known[-1]


_SECRET_TRIGGERS = re.compile(
    "|".join(
        re.escape(t)
        for t in sorted(
            {t for triggers, _ in _SECRET_FAMILIES for t in triggers} | {*_AUTH_TRIGGERS}
        )
    )
)


def _secret_prefilter(scan: Scan) -> bool:
    return _SECRET_TRIGGERS.search(scan.text) is not None


# --- payment cards: Luhn-valid numbers of a known issuer range --------------------------------
# Inside a digit run, the stretches of digits in groups joined by single spaces or dashes, at
# least 13 digits, not glued to an identifier on their left ("ORD-4111...", "1.4111...",
# "12/4111..."). Which groups form the card is decided in Python: a CVV may share the stretch.
_CARD_STRETCH = re.compile(r"\d(?:[ \-]?\d){12,}+")
_GROUP = re.compile(r"\d+")


def card_brand_ok(digits: str) -> bool:
    """Whether ``digits`` has the length of a card of the issuer range it starts with.

    Numbers starting with 0, 1, 7, 9 are no card (UATP's 1 is left out on purpose: millisecond
    timestamps start with 1); neither is 8 outside UnionPay's 81 and RuPay's 82.
    """
    n = len(digits)
    p2, p3, p4 = int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # American Express
    if 2200 <= p4 <= 2204 or 3528 <= p4 <= 3589:
        return 16 <= n <= 19  # Mir, JCB
    if 300 <= p3 <= 305 or p4 == 3095 or p2 in (36, 38, 39):
        return 14 <= n <= 19  # Diners Club
    if p2 == 50 or 56 <= p2 <= 69:
        return 12 <= n <= 19  # Maestro, Discover, UnionPay, RuPay
    if p2 in (81, 82):
        return 16 <= n <= 19  # UnionPay, RuPay
    return False


_DOUBLED = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)  # Luhn: a doubled digit, its digits summed


def luhn_ok(digits: str) -> bool:
    """``stdnum.luhn.is_valid`` for decimal digits, three times faster (it runs per candidate)."""
    total = sum(map(int, digits[-1::-2])) + sum(_DOUBLED[int(c)] for c in digits[-2::-2])
    return total % 10 == 0


def _card_ok(digits: str) -> bool:
    return 13 <= len(digits) <= 19 and card_brand_ok(digits) and luhn_ok(digits)


def _scan_card(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    for start, end in scan.runs:
        if end - start < 13:
            continue
        for stretch in _CARD_STRETCH.finditer(text, start, end):
            s, e = stretch.span()
            if s > 0 and (text[s - 1].isalnum() or text[s - 1] in "_.-/"):
                continue
            groups = [m.span() for m in _GROUP.finditer(text, s, e)]
            # A group glued on its right to a word, a slash or a decimal point ("12/27", "4111x")
            # cannot end a card.
            tail = text[e : e + 2]
            if tail[:1].isalnum() or tail[:1] in "_/" or (tail[:1] in ".," and tail[1:2].isdigit()):
                groups.pop()
            yield from _cards_in_groups(text, groups)


def _cards_in_groups(text: str, groups: list[tuple[int, int]]) -> Iterator[Finding]:
    """The cards among consecutive digit groups: from each group, the longest valid card."""
    if len(groups) == 1:  # the common case: the digits written without separators
        s, e = groups[0]
        if _card_ok(text[s:e]):
            yield Finding("card", s, e, text[e - 4 : e])
        return
    widths = [e - s for s, e in groups]
    i = 0
    while i < len(groups):
        best = -1
        digits = ""
        for j in range(i, len(groups)):
            digits += text[groups[j][0] : groups[j][1]]
            if len(digits) > 19:
                break
            if (j == i or _card_grouping_ok(text, groups, widths, i, j)) and _card_ok(digits):
                best = j
        if best < 0:
            i += 1
            continue
        yield Finding(
            "card", groups[i][0], groups[best][1], text[groups[best][1] - 4 : groups[best][1]]
        )
        i = best + 1


def _card_grouping_ok(
    text: str, groups: list[tuple[int, int]], widths: list[int], i: int, j: int
) -> bool:
    """Groups of 3+ digits, and not a slice of a longer uniformly grouped number.

    "9400 1118 9922 3344 5566 77" (a tracking number) holds "1118 9922 3344 5566", a
    plausible card shape: a neighbour group of the same width joined by the same separator says
    it is one number, not a card inside it.
    """
    if min(widths[i : j + 1]) < 3:
        return False
    sep = text[groups[i][1]]
    if i > 0 and widths[i - 1] == widths[i] and text[groups[i][0] - 1] == sep:
        return False
    return not (j + 1 < len(groups) and widths[j + 1] == widths[i] and text[groups[j][1]] == sep)


# --- IBANs: country code, check digits, BBAN; mod-97 and country format by stdnum -------------
# Upper case only, as banks print them: a case-insensitive scan costs twice as much on prose.
_IBAN_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,32}+")
_IBAN_GROUP = re.compile(r"[A-Z0-9]+")


def _mod97_ok(compact: str) -> bool:
    """ISO 13616 check digits: a quick "no" before ``stdnum.iban`` checks the country format."""
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


_IBAN_BBAN_PART = re.compile(r"(\d+)!?[nace]")


@lru_cache(maxsize=128)
def _iban_length(country: str) -> int:
    """The length of an IBAN of ``country`` from stdnum's registry (0: no such country)."""
    bban = numdb.get("iban").info(country)[0][1].get("bban")
    return 4 + sum(int(n) for n in _IBAN_BBAN_PART.findall(bban)) if bban else 0


def _scan_iban(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    for run in _IBAN_RUN.finditer(text):
        # The run may run on into the next words ("... 7654 32 FOR"): the country's IBAN length
        # says where it ends, which must be the end of a group.
        start = run.start()
        length = _iban_length(text[start : start + 2])
        if not length:
            continue
        end, count = start, 0
        for group in _IBAN_GROUP.finditer(text, start, run.end()):
            count += group.end() - group.start()
            end = group.end()
            if count >= length:
                break
        if count != length or (end < len(text) and text[end].isalnum()):
            continue
        compact = text[start:end].replace(" ", "")
        if _mod97_ok(compact) and stdnum_iban.is_valid(compact):
            yield Finding("iban", start, end, compact[-4:])


# --- e-mail addresses ---------------------------------------------------------------------------
# Found from each "@" (a substring search) outwards, rather than by a regex tried at every
# position of the text: the local part is read backwards, the domain forwards.
_EMAIL_LOCAL = re.compile(r"(?<![\w.%+\-])[\w.%+\-]{1,64}$", re.ASCII)
_EMAIL_DOMAIN = re.compile(
    r"(?:[A-Za-z0-9](?:[\w\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?![\w\-])", re.ASCII
)


def _scan_email(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    at = text.find("@")
    while at != -1:
        local = _EMAIL_LOCAL.search(text, max(0, at - 64), at)
        domain = _EMAIL_DOMAIN.match(text, at + 1) if local else None
        if local and domain:
            yield Finding("email", local.start(), domain.end(), "")
            at = text.find("@", domain.end())
        else:
            at = text.find("@", at + 1)


# --- phone numbers: phonenumbers decides, on phone-shaped runs only ---------------------------
# PhoneNumberMatcher on a whole text costs tens of microseconds per digit run, so it only sees
# runs that could hold a number: an international one ("+" and 7+ digits) or one whose digit
# groups add up to a national length of the region (10 or 11 for the US). Runs glued to an
# identifier ("ORD-", "#", "v", "$") are not phones. Leniency VALID: the number must be a valid
# number of its region, which is what keeps order numbers, dates and amounts out; stricter
# grouping would miss numbers people group their own way ("+49 301 234 5678").
_PHONE_GLUE = frozenset("+#-./$€£%_")  # before a run: an identifier, an amount, a version
_PHONE_LENIENCY = Leniency.VALID
# A bare digit run right after an identifier label is that identifier, even when its digits
# happen to form a valid number ("account 4155552671", "customer id 2125550143").
_ID_LABEL_BEFORE = re.compile(
    r"(?i)\b(?:order|account|acct|invoice|inv|ref|reference|ticket|case|customer|client|member"
    r"|user|transaction|txn|confirmation|tracking|booking|policy|id)"
    r"(?:\s*(?:#|no\.?|nr\.?|number|id))?\s*(?:is\s+)?[:#=]?\s*[\"']?$"
)


@dataclass(frozen=True, slots=True)
class _NationalShape:
    lengths: frozenset[int]  # digit counts of a national number, with or without its prefix
    prefix: str  # the national (trunk) prefix: "1" in the US, "0" in most of Europe
    pattern: re.Pattern[str] | None  # what a national significant number looks like


@lru_cache(maxsize=64)
def _national_shape(region: str) -> _NationalShape:
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.general_desc is None:
        return _NationalShape(frozenset(), "", None)
    lengths = set(metadata.general_desc.possible_length)
    prefix = metadata.national_prefix or ""
    if prefix:
        lengths |= {n + len(prefix) for n in lengths}
    source = metadata.general_desc.national_number_pattern
    return _NationalShape(frozenset(lengths), prefix, re.compile(source) if source else None)


def _phone_shaped(run: str, shape: _NationalShape) -> bool:
    """A cheap necessary condition, so the matcher only sees runs that could be a number.

    Without "+", the whole run must have the length and the leading digits of a national number:
    a number inside a longer run ("GB82 WEST 1669 0694 9772 4625 30", a tracking number in
    groups) is a slice of something else.
    """
    digits = "".join(_GROUP.findall(run))
    if "+" in run:
        return len(digits) >= 7
    if run.count(".") >= 3:
        return False  # an IPv4 address, an OID, a version: not how national numbers are written
    if len(digits) not in shape.lengths:
        return False
    if shape.pattern is None:
        return True
    if shape.prefix and digits.startswith(shape.prefix):
        return shape.pattern.fullmatch(digits[len(shape.prefix) :]) is not None
    return shape.pattern.fullmatch(digits) is not None


def _scan_phone(scan: Scan) -> Iterator[Finding]:
    text, region = scan.text, scan.options.phone_region
    shape = _national_shape(region)
    for start, end in scan.runs:
        # "+1 ...", "(415) ...", "+44 (0)20 ...": the run starts at its first digit.
        while start > 0 and text[start - 1] in "+(" and start > end - 24:
            start -= 1
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in _PHONE_GLUE):
            continue
        raw = text[start:end]
        if not _phone_shaped(raw, shape):
            continue
        if raw.isdigit() and _ID_LABEL_BEFORE.search(text, max(0, start - 40), start):
            continue
        # One character of context on each side: the matcher rejects a number glued to a letter.
        lo, hi = max(start - 1, 0), min(end + 1, len(text))
        for m in PhoneNumberMatcher(text[lo:hi], region, leniency=_PHONE_LENIENCY):
            hint = str(m.number.national_number)[-2:]
            yield Finding("phone", lo + m.start, lo + m.end, hint)


# --- US social security numbers -------------------------------------------------------------
# AAA-GG-SSSS (or with spaces) outside the never-issued ranges: area 000, 666, 900-999 (ITINs and
# advertising numbers live there), group 00, serial 0000. Nine bare digits only after "SSN".
_SSN = re.compile(r"(?<![\w\-./])(?<!\d )(\d{3})([- ])(\d{2})\2(\d{4})(?![\w\-/]|[.,]\d| \d)")
_SSN_LABELLED = re.compile(
    r"(?i:\b(?:ssn|social security(?: number| no\.?| #)?)\b[\s:#]{0,3})(\d{9})(?!\w)"
)


_SSN_LABEL_TRIGGERS = ("SSN", "ssn", "Ssn", "ocial", "OCIAL")


def _ssn_ok(area: str, group: str, serial: str) -> bool:
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _scan_ssn(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    for start, end in scan.runs:
        if end - start < 11:
            continue
        for m in _SSN.finditer(text, start, end + 2):  # + 2: the lookahead sees past the run
            if _ssn_ok(m.group(1), m.group(3), m.group(4)):
                yield Finding("ssn", m.start(), m.end(), "")
    if not any(t in text for t in _SSN_LABEL_TRIGGERS):
        return
    for m in _SSN_LABELLED.finditer(text):
        d = m.group(1)
        if _ssn_ok(d[:3], d[3:5], d[5:]):
            yield Finding("ssn", m.start(1), m.end(1), "")


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


def _octets_ok(candidate: str) -> bool:
    return all(len(o) == 1 or (o[0] != "0" and int(o) <= 255) for o in candidate.split("."))


def _scan_ip(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    for start, end in scan.runs:
        if text.count(".", start, end) < 3:
            continue
        for m in _IPV4.finditer(text, start, end + 2):  # + 2: the lookahead sees past the run
            if _octets_ok(m.group()) and not _after_version_word(text, m.start()):
                yield Finding("ip", m.start(), m.end(), "")
    if "::" in text or text.count(":") >= 7:  # compressed, or all eight groups
        for m in _IPV6.finditer(text):
            candidate = m.group().rstrip(".")
            if not _DIGIT.search(candidate):
                continue
            try:
                ipaddress.IPv6Address(candidate)
            except ValueError:
                continue
            yield Finding("ip", m.start(), m.start() + len(candidate), "")


def _after_version_word(text: str, start: int) -> bool:
    return _VERSION_BEFORE.search(text[max(0, start - 24) : start]) is not None


_register(Detector("secret", _secret_prefilter, _scan_secret, "[secret {hint}…]"))
_register(Detector("card", _has_digit, _scan_card, "[card ••{hint}]"))
_register(Detector("iban", _has_digit, _scan_iban, "[iban ••{hint}]"))
_register(Detector("email", lambda scan: "@" in scan.text, _scan_email, "[email]"))
_register(Detector("ssn", _has_digit, _scan_ssn, "[ssn]"))
_register(Detector("ip", _has_digit, _scan_ip, "[ip]"))
_register(Detector("phone", _has_digit, _scan_phone, "[phone ••{hint}]"))


# --- the pipeline ---------------------------------------------------------------------------


def enabled_detectors() -> tuple[str, ...]:
    """The detectors this deployment runs: ``settings.REDACTION_DETECTORS``, empty meaning all."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    names = tuple(getattr(settings, "REDACTION_DETECTORS", None) or ())
    try:
        return _check_names(names) if names else tuple(DETECTORS)
    except UnknownDetectorError as exc:
        raise ImproperlyConfigured(f"REDACTION_DETECTORS: {exc}") from None


def _check_names(names: Iterable[str]) -> tuple[str, ...]:
    checked = tuple(dict.fromkeys(n.strip() for n in names))
    unknown = [n for n in checked if n not in DETECTORS]
    if unknown:
        raise UnknownDetectorError(
            f"unknown detector {', '.join(map(repr, unknown))}; known: {', '.join(DETECTORS)}"
        )
    return checked


def _check_region(region: str) -> str:
    region = region.strip().upper()
    if region not in phonenumbers.SUPPORTED_REGIONS:
        raise ValueError(f"unknown phone region {region!r}: an ISO 3166 code such as 'US', 'GB'")
    return region


def _settings_configured() -> bool:
    from django.conf import settings

    return settings.configured or bool(os.environ.get("DJANGO_SETTINGS_MODULE"))


def _settings_region() -> str:
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    region = getattr(settings, "REDACTION_PHONE_REGION", None) or DEFAULT_PHONE_REGION
    try:
        return _check_region(region)
    except ValueError as exc:
        raise ImproperlyConfigured(f"REDACTION_PHONE_REGION: {exc}") from None


@lru_cache(maxsize=64)
def _options(phone_region: str) -> Options:
    return Options(phone_region=phone_region)


@lru_cache(maxsize=256)
def _detectors_named(names: tuple[str, ...]) -> tuple[Detector, ...]:
    return tuple(DETECTORS[n] for n in _check_names(names))


def _resolve(
    detectors: Iterable[str] | None, phone_region: str | None
) -> tuple[tuple[Detector, ...], Options]:
    configured = (detectors is None or phone_region is None) and _settings_configured()
    if detectors is None:
        names = enabled_detectors() if configured else tuple(DETECTORS)
    else:
        names = detectors if isinstance(detectors, tuple) else tuple(detectors)
    if phone_region is None:
        phone_region = _settings_region() if configured else DEFAULT_PHONE_REGION
    else:
        phone_region = _check_region(phone_region)
    return _detectors_named(names), _options(phone_region)


def find(
    text: str, *, detectors: Iterable[str] | None = None, phone_region: str | None = None
) -> list[Finding]:
    """What the detectors find in ``text``, without overlaps, in text order.

    ``detectors``: names from ``DETECTORS`` (default: ``enabled_detectors()``, or all of them
    when Django settings are not configured). ``phone_region``: the region national phone
    numbers are read in (default: ``settings.REDACTION_PHONE_REGION``, else "US").
    """
    chosen, options = _resolve(detectors, phone_region)
    return _find(text, chosen, options)


def _find(text: str, chosen: tuple[Detector, ...], options: Options) -> list[Finding]:
    if not text:
        return []
    scan = Scan(text, options)
    candidates = [f for d in chosen if d.prefilter(scan) for f in d.scan(scan)]
    if len(candidates) < 2:
        return candidates
    # Longest first; on equal length the detector registered first; then leftmost.
    rank = _RANK.get
    candidates.sort(key=lambda f: (f.start - f.end, rank(f.kind, 99), f.start))
    starts: list[int] = []
    kept: list[Finding] = []  # sorted by start, pairwise disjoint
    for f in candidates:
        i = bisect.bisect_left(starts, f.start)
        if i > 0 and kept[i - 1].end > f.start:
            continue
        if i < len(kept) and kept[i].start < f.end:
            continue
        starts.insert(i, f.start)
        kept.insert(i, f)
    return kept


def placeholder(finding: Finding) -> str:
    detector = DETECTORS.get(finding.kind)
    if detector is None:
        return f"[{finding.kind}]"
    return detector.template.replace("{hint}", finding.hint)


def redact(
    text: str, *, detectors: Iterable[str] | None = None, phone_region: str | None = None
) -> str:
    """``text`` with every finding replaced by its placeholder (see ``find`` for the options)."""
    chosen, options = _resolve(detectors, phone_region)
    return _apply(text, _find(text, chosen, options))


def _apply(text: str, findings: list[Finding]) -> str:
    if not findings:
        return text
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(placeholder(f))
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def redact_value(
    value: Any, *, detectors: Iterable[str] | None = None, phone_region: str | None = None
) -> Any:
    """A copy of a JSON value with every string redacted; keys are left as they are.

    A number whose digits are a valid card number (a PAN stored as a JSON number) becomes the
    card's placeholder: the only kind whose digits are distinctive enough to judge a bare number.
    """
    chosen, options = _resolve(detectors, phone_region)
    card = DETECTORS["card"] in chosen

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return _apply(v, _find(v, chosen, options))
        if isinstance(v, dict):
            return {k: walk(item) for k, item in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(item) for item in v]
        if card and isinstance(v, int) and not isinstance(v, bool) and _card_ok(str(v)):
            return placeholder(Finding("card", 0, len(str(v)), str(v)[-4:]))
        return v

    return walk(value)
