"""The one redaction pipeline (DESIGN section 4): transcripts, tool trail and reasoning summaries.

``redact(text)`` replaces what the enabled detectors find with a placeholder that keeps the kind
and a hint (``[card ••4242]``, ``[email]``, ``[secret sk-ant-…]``); ``find(text)`` returns the
findings themselves (kind, start, end, hint); ``redact_value(value)`` redacts every string
inside a JSON value.

Each detector finds *candidates* cheaply and confirms them with a validator made for the job
(Luhn and issuer ranges for cards, ``stdnum.iban`` for IBANs, ``phonenumbers`` for phones,
``ipaddress`` for IPv6). Candidates come from one shared pass over the runs of digits (cards,
phones, SSNs, IPv4), from substring searches ("@" for e-mail, key prefixes for secrets) or from
one anchored regex (IBANs), behind a prefilter per detector (no digit: no card, phone, SSN, IBAN
or IP scan), so plain text costs almost nothing. When findings overlap, the longest wins; on
equal spans, the detector registered first (the order below). ``redact`` then looks again where a
replacement changed its neighbours' context, so that redacting twice gives what once gave.

Which detectors run is a deployment setting, ``REDACTION_DETECTORS`` (names; empty means all);
phone numbers written without a country code are read in ``REDACTION_PHONE_REGION``. The
functions are pure: Django settings are read only when no explicit detectors or region are given,
and only if settings are configured (otherwise: every detector, region "US"), so the module runs
without Django (``bench/redaction.py``).

To add a detector: write ``_scan_<name>(scan: Scan)`` yielding ``Finding("<name>", start, end,
hint)`` with a hint that reveals nothing sensitive (use ``scan.runs`` if it reads numbers), a
prefilter that answers "cannot contain one" in one cheap test, and ``_register(Detector(...))``
it below with its placeholder (its position sets its priority on equal spans). Placeholders
start with "[" and end with "]", which no detector may match. Then add its cases to
``tests/conversations/test_redaction.py`` (found, and near-misses left alone) and its kind to
the labelled corpus of ``bench/redaction.py``.
"""

from __future__ import annotations

import bisect
import ipaddress
import operator
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import phonenumbers
from stdnum import iban as stdnum_iban
from stdnum import luhn, numdb

__all__ = [
    "DETECTORS",
    "Detector",
    "Finding",
    "Options",
    "UnknownDetectorError",
    "apply_findings",
    "check_detectors",
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

    __slots__ = ("_lower", "_runs", "has_digit", "options", "text")

    def __init__(self, text: str, options: Options) -> None:
        self.text = text
        self.options = options
        self.has_digit = _DIGIT.search(text) is not None
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
# Each family has literal triggers (lower case) and a pattern that matches where a trigger is
# found, at the trigger's offset: one pass of a literal alternation over the lower-cased text
# finds the triggers, and only those places are looked at, so the cost does not grow with the
# number of families. The "prefix" group is the hint.
_KEY_START = r"(?<![A-Za-z0-9_\-])"
_SECRET_FAMILIES: tuple[tuple[tuple[str, ...], int, re.Pattern[str]], ...] = tuple(
    (triggers, offset, re.compile(pattern))
    for triggers, offset, pattern in (
        # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-) and Anthropic (sk-ant-api03-...).
        (
            ("sk-",),
            0,
            _KEY_START
            + r"(?P<prefix>sk-ant-|sk-proj-|sk-svcacct-|sk-admin-|sk-)"
            + r"(?P<body>[A-Za-z0-9_\-]{20,})",
        ),
        # Stripe secret, restricted and publishable keys ("sk" / "rk" / "pk" before the trigger).
        (
            ("_live_", "_test_"),
            -2,
            _KEY_START + r"(?P<prefix>(?:sk|rk|pk)_(?:live|test)_)[0-9A-Za-z]{10,}",
        ),
        # AWS access key ids (long-term AKIA, temporary ASIA).
        (("akia", "asia"), 0, r"(?<![A-Z0-9])(?P<prefix>AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
        # GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh, fine-grained.
        (
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
            0,
            _KEY_START + r"(?P<prefix>gh[pousr]_)[A-Za-z0-9]{36,255}",
        ),
        (("github_pat_",), 0, _KEY_START + r"(?P<prefix>github_pat_)[A-Za-z0-9_]{22,255}"),
        (("xox",), 0, _KEY_START + r"(?P<prefix>xox[baprs]-)[A-Za-z0-9\-]{10,}"),  # Slack
        (("glpat-",), 0, _KEY_START + r"(?P<prefix>glpat-)[A-Za-z0-9_\-]{20,}"),  # GitLab
        (("aiza",), 0, _KEY_START + r"(?P<prefix>AIza)[0-9A-Za-z_\-]{35}"),  # Google API keys
        # JSON Web Tokens: header and payload are base64url JSON objects, hence "eyJ" twice.
        (
            ("eyj",),
            0,
            _KEY_START
            + r"(?P<prefix>eyJ)[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        ),
        # PEM private keys. Without its END line (a truncated tool output), the base64 lines
        # that follow are taken (words of 16+ base64 characters, split by blanks or "\n").
        (
            ("-----begin",),
            0,
            r"-----BEGIN (?P<prefix>(?:[A-Z0-9]+ )*PRIVATE KEY)-----"
            r"(?:(?s:.{0,16384}?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
            r"|(?:(?:\s|\\n)*+[A-Za-z0-9+/=]{16,}+)*+)",
        ),
    )
)
# The same without its END line, for a text that has none (the lazy search for it would run to
# 16 KB past each BEGIN).
_PEM_UNTERMINATED = re.compile(
    r"-----BEGIN (?P<prefix>(?:[A-Z0-9]+ )*PRIVATE KEY)-----(?:(?:\s|\\n)*+[A-Za-z0-9+/=]{16,}+)*+"
)
_FAMILIES_BY_TRIGGER = {
    t: (offset, p) for triggers, offset, p in _SECRET_FAMILIES for t in triggers
}

# Credentials without a prefix of their own, known by where they stand:
# - after "Authorization:" (any token) or a bare "Bearer" (a token that looks random: 16+ token
#   characters, a digit among them, so prose about bearer tokens stays);
# - as the value of a key or variable named like a secret ("AWS_SECRET_ACCESS_KEY=...",
#   '"client_secret": "..."', "my password is ..."), when the value does not read like a word:
#   8+ characters with a digit or a symbol in them ("password: incorrect" stays).
# A value that has a known prefix keeps that (more telling) hint.
_AUTH_HEADER = re.compile(
    r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:(?P<scheme>bearer|basic|token))\s+"
    r"(?P<token>[A-Za-z0-9\-._~+/]{8,}=*)"
)
_BARE_BEARER = re.compile(
    r"(?<![\w-])(?i:(?P<scheme>bearer))\s+(?P<token>[A-Za-z0-9\-._~+/]{16,}=*)"
)
_ASSIGNMENT = re.compile(
    r"(?i:(?<![A-Za-z])(?:[a-z]+_)*(?:secret(?:_access)?(?:_key)?|client_secret|api[_-]?key"
    r"|private_key|(?:access|auth|refresh|session)_token|token|password|passwd|pwd))"
    r"[\"']?\s*(?::|=|\bis\b)\s*[\"']?(?P<value>[^\s\"'<>,;\[\]]{8,1024})"
)
_CONTEXT_TRIGGERS: dict[str, re.Pattern[str]] = {
    "authoriz": _AUTH_HEADER,
    "bearer": _BARE_BEARER,
    **dict.fromkeys(
        ("secret", "passw", "pwd", "token", "api_key", "apikey", "api-key", "private_key"),
        _ASSIGNMENT,
    ),
}
_WORDLIKE = re.compile(r"[A-Za-z]+")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _literal_alternation(words: Iterable[str], flags: int = 0) -> re.Pattern[str]:
    """A regex matching any of ``words``, factored by first character ("s(?:ecret|k\\-)|...").

    The engine tries alternatives one by one at each position; factored, it rejects most
    positions on their first character, which makes the scan about a third faster.
    """
    by_first: dict[str, list[str]] = {}
    for word in sorted(set(words)):
        by_first.setdefault(word[0], []).append(re.escape(word[1:]))
    return re.compile(
        "|".join(f"{re.escape(c)}(?:{'|'.join(rests)})" for c, rests in by_first.items()), flags
    )


_SECRET_TRIGGERS = _literal_alternation([*_FAMILIES_BY_TRIGGER, *_CONTEXT_TRIGGERS])
_SECRET_TRIGGERS_ANY_CASE = _literal_alternation(
    [*_FAMILIES_BY_TRIGGER, *_CONTEXT_TRIGGERS], re.IGNORECASE
)


def _triggers(scan: Scan) -> Iterator[tuple[str, int]]:
    lower = scan.lower
    if len(lower) == len(scan.text):  # positions carry over (no "İ" -> "i̇" in the text)
        for m in _SECRET_TRIGGERS.finditer(lower):
            yield m.group(), m.start()
    else:
        for m in _SECRET_TRIGGERS_ANY_CASE.finditer(scan.text):
            yield m.group().lower(), m.start()


def _scan_secret(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    known: list[Finding] = []
    contextual: list[tuple[re.Pattern[str], int]] = []
    covered = 0  # triggers inside a key found already are part of it
    pem_end: bool | None = None
    for trigger, at in _triggers(scan):
        if at < covered:
            continue
        family = _FAMILIES_BY_TRIGGER.get(trigger)
        if family is None:
            contextual.append((_CONTEXT_TRIGGERS[trigger], at))
            continue
        offset, pattern = family
        if trigger == "-----begin":
            if pem_end is None:
                pem_end = "-----end" in scan.lower
            if not pem_end:
                pattern = _PEM_UNTERMINATED
        m = pattern.match(text, at + offset) if at + offset >= 0 else None
        if m is None:
            continue
        prefix = m.group("prefix")
        if prefix == "sk-" and not _DIGIT.search(m.group("body")):
            continue  # "sk-learn-compatible-..." is prose; keys are random, digits included
        known.append(Finding("secret", m.start(), m.end(), prefix))
        covered = m.end()
    yield from known
    covered = 0
    for pattern, at in contextual:
        if at < covered:
            continue
        if pattern is _ASSIGNMENT:  # "AWS_SECRET_ACCESS_KEY": the name starts before "secret"
            floor = max(0, at - 64)
            while at > floor and text[at - 1] in _NAME_CHARS:
                at -= 1
        m = pattern.match(text, at)
        if m is None:
            continue
        group = "token" if pattern is not _ASSIGNMENT else "value"
        start, end = m.span(group)
        value = m.group(group)
        if not _credible(pattern, value):
            continue
        if any(f.start <= start and end <= f.end for f in known):
            continue  # the key itself, found by its prefix: that hint tells more
        hint = m.group("scheme").capitalize() if pattern is not _ASSIGNMENT else ""
        known.append(Finding("secret", start, end, hint))
        covered = end
        yield known[-1]


def _credible(pattern: re.Pattern[str], value: str) -> bool:
    """Whether a value found by its context looks like a credential rather than a word."""
    if pattern is _AUTH_HEADER or _DIGIT.search(value):
        return True
    return pattern is _ASSIGNMENT and not _WORDLIKE.fullmatch(value)


def _secret_prefilter(scan: Scan) -> bool:
    return True  # _scan_secret finds its triggers in one pass over the lower-cased text


# --- payment cards: Luhn-valid numbers of a known issuer range --------------------------------
# Inside a digit run, the stretches of digits in groups joined by single spaces or dashes, at
# least 14 digits, not glued to an identifier on their left ("ORD-4111...", "1.4111...",
# "12/4111..."). Which groups form the card is decided in Python: a CVV may share the stretch.
_CARD_STRETCH = re.compile(r"\d(?:[ \-]?\d){13,}+")
_GROUP = re.compile(r"\d+")


def card_brand_ok(digits: str) -> bool:
    """Whether ``digits`` has the length of a card of the issuer range it starts with.

    Numbers starting with 0, 1, 7, 9 are no card (UATP's 1 is left out on purpose: millisecond
    timestamps start with 1); neither is 8 outside UnionPay's 81 and RuPay's 82. Nor is any
    13-digit number: Visa stopped issuing them decades ago, and EAN-13 barcodes have 13 digits.
    """
    n = len(digits)
    p2, p3, p4 = int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return n in (16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # American Express
    if 2200 <= p4 <= 2204 or 3528 <= p4 <= 3589:
        return 16 <= n <= 19  # Mir, JCB
    if 300 <= p3 <= 305 or p4 == 3095 or p2 in (36, 38, 39):
        return 14 <= n <= 19  # Diners Club
    if p2 == 50 or 56 <= p2 <= 69:
        return 16 <= n <= 19  # Maestro, Discover, UnionPay, RuPay
    if p2 in (81, 82):
        return 16 <= n <= 19  # UnionPay, RuPay
    return False


def _card_ok(digits: str) -> bool:
    return 14 <= len(digits) <= 19 and card_brand_ok(digits) and luhn.is_valid(digits)


def _scan_card(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    for start, end in scan.runs:
        if end - start < 14:
            continue
        for stretch in _CARD_STRETCH.finditer(text, start, end):
            s, e = stretch.span()
            if s > 0 and (text[s - 1].isalnum() or text[s - 1] in "_.-/"):
                continue
            groups = [m.span() for m in _GROUP.finditer(text, s, e)]
            # A group glued on its right to a word or a decimal point ("4111x", "1111.50") cannot
            # end a card, nor can a short one glued to a slash (the "12" of "... 1111 12/27").
            after = text[e : e + 1]
            if after and (
                after.isalnum()
                or after == "_"
                or (after == "/" and e - groups[-1][0] <= 4)
                or (after in ".," and text[e + 1 : e + 2].isdigit())
            ):
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
        if widths[i] < 3:  # a card starts with a group of 3 digits or more
            i += 1
            continue
        best = -1
        digits = ""
        for j in range(i, len(groups)):
            digits += text[groups[j][0] : groups[j][1]]
            if len(digits) > 19:
                break
            if _card_grouping_ok(text, groups, widths, i, j) and _card_ok(digits):
                best = j
        if best < 0:
            i += 1
            continue
        digits = "".join(text[s:e] for s, e in groups[i : best + 1])
        yield Finding("card", groups[i][0], groups[best][1], digits[-4:])
        i = best + 1


def _card_grouping_ok(
    text: str, groups: list[tuple[int, int]], widths: list[int], i: int, j: int
) -> bool:
    """Groups of 3+ digits, and not the middle of a longer uniformly grouped number.

    "9400 1118 9922 3344 5566 77" (a tracking number) holds "1118 9922 3344 5566", a plausible
    card shape: a neighbour group of the same width, joined by the same separator, says it is a
    slice of one longer number. A card may have such a neighbour on one side only when it
    reaches the end of the run on the other ("in 2026 4111 1111 1111 1111", "... 1111 2027"):
    missing a card costs more than flagging a tracking number.
    """
    if i == j:
        return True
    # Groups of 3+ digits; or fours with a shorter tail ("3600 0000 0000 08": 14 digits in 4s).
    if min(widths[i : j + 1]) < 3 and not all(w == 4 for w in widths[i:j]):
        return False
    sep = text[groups[i][1]]
    last = len(groups) - 1
    left_same = i > 0 and widths[i - 1] == widths[i] and text[groups[i][0] - 1] == sep
    right_same = j < last and widths[j + 1] == widths[i] and text[groups[j][1]] == sep
    return not ((left_same and j < last) or (right_same and i > 0))


# --- IBANs: country code, check digits, BBAN; mod-97 and country format by stdnum -------------
# Upper case only, as banks print them: a case-insensitive scan costs twice as much on prose.
# (The look-behind after the first letter, not before it, lets the engine skip to capitals.)
_IBAN_RUN = re.compile(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]){10,32}+")
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
    run = _IBAN_RUN.search(text)
    while run is not None:
        found = _iban_at(text, run.start(), run.end())
        if found is not None:
            yield found
        # After an IBAN, or one character on when none starts here: a run can swallow the
        # start of the next one ("GB82WEST12345698765432 DE89370400440532013000").
        run = _IBAN_RUN.search(text, found.end if found is not None else run.start() + 1)


def _iban_at(text: str, start: int, stop: int) -> Finding | None:
    # The run may run on into the next words ("... 7654 32 FOR"): the country's IBAN length
    # says where the IBAN ends, which must be the end of a group.
    length = _iban_length(text[start : start + 2])
    if not length:
        return None
    end, count = start, 0
    for group in _IBAN_GROUP.finditer(text, start, stop):
        count += group.end() - group.start()
        end = group.end()
        if count >= length:
            break
    if count != length or (end < len(text) and text[end].isalnum()):
        return None
    compact = text[start:end].replace(" ", "")
    if _mod97_ok(compact) and stdnum_iban.is_valid(compact):
        return Finding("iban", start, end, compact[-4:])
    return None


# --- e-mail addresses ---------------------------------------------------------------------------
# Found from each "@" (a substring search) outwards, rather than by a regex tried at every
# position of the text: the local part is read backwards, the domain forwards. Letters are
# Unicode letters: "josé@exämple.de" is an address too (RFC 6531, IDNA).
_EMAIL_LOCAL = re.compile(r"[\w.%+\-]{1,64}$")
_EMAIL_DOMAIN = re.compile(r"(?:[^\W_](?:[\w\-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}(?![\w\-])")
_EMAIL_LOCAL_CHARS = re.compile(r"[\w.%+\-]")


def _scan_email(scan: Scan) -> Iterator[Finding]:
    text = scan.text
    previous = 0  # where the last address ended: a local part may start there, as it would
    at = text.find("@")  # after a placeholder once that address is redacted
    while at != -1:
        lo = max(previous, at - 64)
        local = _EMAIL_LOCAL.search(text, lo, at)
        # The whole local part: not the last 64 characters of a longer run of them.
        if (
            local is not None
            and local.start() not in (0, previous)
            and _EMAIL_LOCAL_CHARS.match(text, local.start() - 1)
        ):
            local = None
        domain = _EMAIL_DOMAIN.match(text, at + 1) if local is not None else None
        if local is not None and domain is not None:
            yield Finding("email", local.start(), domain.end(), "")
            previous = domain.end()
            at = text.find("@", previous)
        else:
            at = text.find("@", at + 1)


# --- phone numbers: phonenumbers decides, on phone-shaped runs only ---------------------------
# A digit run (see ``_NUM_RUN``) is a candidate when it is an international number ("+" and 7+
# digits) or has the length and leading digits of a national number of the region (10 or 11
# digits for the US), and is not glued to an identifier ("ORD-", "#", "$", "v"), nor a date, a
# time or a dotted quad, nor a bare number right after an identifier label ("account 4155552671").
# The number must then be valid for phonenumbers (``is_valid_number``: a real country and area
# code, exchange and length): what keeps order numbers, dates and amounts out.
#
# PhoneNumberMatcher (leniency VALID) makes the same decision on these candidates at twice the
# cost (it re-scans the text with its own pattern, then parses and validates: 52 µs against
# 26 µs a candidate, a third of the pipeline's time on text dense in numbers); its checks that
# matter here (timestamps, slash dates, a letter or symbol glued to the number) are made above
# on the run. Where the country code and national number can be read off the digits (no
# national prefix of the carrier-code kind, no leading zero), the number is built without
# ``parse``, which halves the cost again; anything else goes through ``phonenumbers.parse``.
_PHONE_GLUE = frozenset("+#-./$€£%_")  # before a run: an identifier, an amount, a version
_ID_LABEL_BEFORE = re.compile(
    r"(?i)\b(?:order|account|acct|invoice|inv|ref|reference|ticket|case|customer|client|member"
    r"|user|transaction|txn|confirmation|tracking|booking|policy|id)"
    r"(?:[\s_\-]*(?:#|no\.?|nr\.?|number|id))?[\"']?\s*(?:is\s+)?[:#=]?\s*[\"']?$"
)
_TIME_AFTER = re.compile(r":\d")  # "2026-11-29 12" of "2026-11-29 12:30:45"
_DATE_START = re.compile(r"\d{4}-\d\d?-\d\d?\b|\d\d?/\d\d?/\d{2,4}\b")


@dataclass(frozen=True, slots=True)
class _NationalShape:
    country_code: int
    lengths: frozenset[int]  # digit counts of a national number, with or without its prefix
    prefix: str  # the national (trunk) prefix: "1" in the US, "0" in most of Europe
    pattern: re.Pattern[str] | None  # what a national significant number looks like
    plain_prefix: bool  # the prefix is stripped as is (no carrier codes, no transform rule)


@lru_cache(maxsize=64)
def _national_shape(region: str) -> _NationalShape:
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.general_desc is None:
        return _NationalShape(0, frozenset(), "", None, False)
    lengths = set(metadata.general_desc.possible_length)
    prefix = metadata.national_prefix or ""
    if prefix:
        lengths |= {n + len(prefix) for n in lengths}
    source = metadata.general_desc.national_number_pattern
    plain = metadata.national_prefix_for_parsing in (None, prefix) and (
        metadata.national_prefix_transform_rule is None
    )
    return _NationalShape(
        metadata.country_code or 0,
        frozenset(lengths),
        prefix,
        re.compile(source) if source else None,
        plain,
    )


def _phone_shaped(run: str, digits: str, shape: _NationalShape) -> bool:
    """A cheap necessary condition, so that phonenumbers only sees runs that could be a number.

    Without "+", the whole run must have the length and the leading digits of a national number:
    a number inside a longer run ("GB82 WEST 1669 0694 9772 4625 30", a tracking number in
    groups) is a slice of something else.
    """
    if run[0] == "+" or run[:2] == "(+":
        return len(digits) >= 7
    if run.count(".") >= 3 or _DATE_START.match(run):
        return False  # an IPv4 address, an OID, a version; a date (and the hour after it)
    return len(digits) in shape.lengths and _national_ok(digits, shape)


def _national_ok(digits: str, shape: _NationalShape) -> bool:
    """Whether ``digits`` read as a national number of the region (its prefix allowed)."""
    if shape.pattern is None:
        return True
    if shape.prefix and digits.startswith(shape.prefix):
        return shape.pattern.fullmatch(digits[len(shape.prefix) :]) is not None
    return shape.pattern.fullmatch(digits) is not None


def _phone_number(
    run: str, digits: str, shape: _NationalShape, region: str
) -> phonenumbers.PhoneNumber | None:
    country_code, national = 0, ""
    if "+" in run:
        for size in (1, 2, 3):  # country calling codes are prefix-free
            if int(digits[:size]) in phonenumbers.COUNTRY_CODE_TO_REGION_CODE:
                country_code, national = int(digits[:size]), digits[size:]
                break
    elif shape.plain_prefix:
        country_code, national = shape.country_code, digits
        if shape.prefix and digits.startswith(shape.prefix):
            national = digits[len(shape.prefix) :]
    if country_code and national and national[0] != "0":
        return phonenumbers.PhoneNumber(country_code=country_code, national_number=int(national))
    try:
        return phonenumbers.parse(run, region)
    except phonenumbers.NumberParseException:
        return None


def _scan_phone(scan: Scan) -> Iterator[Finding]:
    text, region = scan.text, scan.options.phone_region
    shape = _national_shape(region)
    shortest = min(shape.lengths, default=7)
    for start, end in scan.runs:
        # "+1 ...", "(415) ...", "(+44) ...": the run starts at its first digit.
        while start > 0 and text[start - 1] in "+(" and start > end - 24:
            start -= 1
        if end - start < shortest and text[start] != "+":
            continue
        found = _phone_in(text, start, end, shape, region)
        if found is not None:
            yield found
        elif " " in text[start:end]:
            yield from _phones_in_slices(text, start, end, shape, region)


def _phones_in_slices(
    text: str, start: int, end: int, shape: _NationalShape, region: str
) -> Iterator[Finding]:
    """Numbers that share a run with others ("4111 1111 1111 1111 (415) 555-2671 10.0.0.1").

    A slice starts and ends where a blank separates groups, and must be formatted like a number
    someone wrote on purpose (a bracket, "+", "-" or "." in it): a slice of blank-separated
    digit groups is more likely a piece of a longer number ("GB82 WEST 1669 0694 9772 4625 30").
    """
    if not any(c in text[start:end] for c in "()+-."):
        return  # no slice of it can be formatted
    groups = [m.span() for m in _GROUP.finditer(text, start, end)]
    last = len(groups) - 1
    opens = [k for k in range(1, last + 1) if " " in text[groups[k - 1][1] : groups[k][0]]]
    closes = {k for k in range(last) if " " in text[groups[k][1] : groups[k + 1][0]]}
    after = -1  # slices found so far end at this group
    for a in [0, *opens]:
        if a <= after:
            continue
        s = groups[a][0]
        while s > start and text[s - 1] in "+(":
            s -= 1
        international = text[s] == "+" or text[s : s + 2] == "(+"
        digits = ""
        for b in range(a, last + 1):
            digits += text[groups[b][0] : groups[b][1]]
            if len(digits) > 17:
                break  # longer than any phone number
            if international:
                plausible = len(digits) >= 7
            else:
                plausible = len(digits) in shape.lengths and _national_ok(digits, shape)
            if plausible and (b in closes or b == last) and (a, b) != (0, last):
                piece = text[s : groups[b][1]]
                if any(c in piece for c in "()+-.") and (
                    found := _phone_in(text, s, groups[b][1], shape, region)
                ):
                    yield found
                    after = b
                    break


def _phone_in(
    text: str, start: int, end: int, shape: _NationalShape, region: str
) -> Finding | None:
    """The phone number that ``text[start:end]`` is, if it is one."""
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] in _PHONE_GLUE):
        return None
    if text[end : end + 1].isalpha() or _TIME_AFTER.match(text, end):
        return None  # "4155552671x": part of a word; "2026-11-29 12:30": a time
    run = text[start:end]
    digits = "".join(_GROUP.findall(run))
    if not _phone_shaped(run, digits, shape):
        return None
    if run.isdigit() and _ID_LABEL_BEFORE.search(text, max(0, start - 40), start):
        return None
    number = _phone_number(run, digits, shape, region)
    if number is None or not phonenumbers.is_valid_number(number):
        return None
    if run[0] == "(" and ")" not in run:
        start += 1  # "(415 555 2671": the parenthesis is the text's, not the number's
    return Finding("phone", start, end, str(number.national_number)[-2:])


# --- US social security numbers -------------------------------------------------------------
# AAA-GG-SSSS (or with spaces) outside the never-issued ranges: area 000, 666, 900-999 (ITINs and
# advertising numbers live there), group 00, serial 0000. Nine bare digits only after "SSN".
_SSN = re.compile(r"(?<![\w\-./])(?<!\d )(\d{3})([- ])(\d{2})\2(\d{4})(?![\w\-/]|[.,]\d| \d)")
_SSN_LABELLED = re.compile(
    r"(?i:\b(?:ssn|social security(?: number| no\.?| #)?)\b[\s:#]{0,3})(\d{9})(?!\w)"
)


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
    lower = scan.lower
    if "ssn" not in lower and "social" not in lower:
        return
    labelled: Iterable[re.Match[str] | None]
    if len(lower) == len(text):  # positions carry over: try the pattern where a label starts
        labelled = (_SSN_LABELLED.match(text, at) for at in _occurrences(lower, "ssn", "social"))
    else:
        labelled = _SSN_LABELLED.finditer(text)
    for label in labelled:
        if label is not None:
            d = label.group(1)
            if _ssn_ok(d[:3], d[3:5], d[5:]):
                yield Finding("ssn", label.start(1), label.end(1), "")


def _occurrences(text: str, *needles: str) -> Iterator[int]:
    for needle in needles:
        at = text.find(needle)
        while at != -1:
            yield at
            at = text.find(needle, at + 1)


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
        for m in _ipv6_candidates(text):
            candidate = m.group().rstrip(".")
            if not _DIGIT.search(candidate):
                continue
            try:
                ipaddress.IPv6Address(candidate)
            except ValueError:
                continue
            yield Finding("ip", m.start(), m.start() + len(candidate), "")


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

    names = getattr(settings, "REDACTION_DETECTORS", None) or ()
    if isinstance(names, str):
        names = names.split(",")
    try:
        return check_detectors(names) or tuple(DETECTORS)
    except UnknownDetectorError as exc:
        raise ImproperlyConfigured(f"REDACTION_DETECTORS: {exc}") from None


def check_detectors(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` stripped and without repeats; ``UnknownDetectorError`` names any unknown one."""
    checked = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
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
    return tuple(DETECTORS[n] for n in check_detectors(names))


def _resolve(
    detectors: Iterable[str] | None, phone_region: str | None
) -> tuple[tuple[Detector, ...], Options]:
    configured = (detectors is None or phone_region is None) and _settings_configured()
    if detectors is None:
        names = enabled_detectors() if configured else tuple(DETECTORS)
    elif isinstance(detectors, str):
        names = tuple(detectors.split(","))  # "card,email", as the command and env lists have it
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


# A finding joined to more digits by a run's separators ("... 1111 12/27"): once replaced,
# those digits start a run of their own. Or glued to a character that a detector's boundary
# test looks at ("0::G@0.AA": "0::" is no address while "G" follows it, and is one before "[");
# blanks, quotes, brackets, "=", ";" and a full stop that ends a sentence are looked at by none.
_RUN_BEFORE = re.compile(r"(?:\d[ \-.()/]{0,3}|[\w+\-@%$#€£]|\w[./]|[0-9A-Fa-f:]:)$")
_RUN_AFTER = re.compile(r"[ \-.()/]{0,3}\+?\d|[,.:/]\w|::|[\w+\-@%$#€£]")
_BY_SPAN = operator.itemgetter(1, 2)  # Finding.start, Finding.end


def _find(text: str, chosen: tuple[Detector, ...], options: Options) -> list[Finding]:
    return _resolved(text, chosen, options)[0]


def _resolved(
    text: str, chosen: tuple[Detector, ...], options: Options
) -> tuple[list[Finding], bool]:
    """The findings without overlaps, and whether overlapping candidates were dropped."""
    if not text:
        return [], False
    scan = Scan(text, options)
    candidates = [f for d in chosen if d.prefilter(scan) for f in d.scan(scan)]
    if len(candidates) < 2:
        return candidates, False
    candidates.sort(key=_BY_SPAN)
    end = -1
    for f in candidates:
        if f.start < end:
            break
        end = f.end
    else:
        return candidates, False  # the usual case: nothing overlaps
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
    return kept, True


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
    return _redact(text, chosen, options)


def _redact(text: str, chosen: tuple[Detector, ...], options: Options) -> str:
    findings, dropped = _resolved(text, chosen, options)
    redacted = apply_findings(text, findings)
    # A replacement changes what is around it. It can cut a run of digits in two
    # ("4111111111111111)2012000000" is one run, not a phone number; "[card ••1111])2012000000"
    # ends with one), and what lost an overlap may be a finding once the winner is replaced
    # ("password: 00000:::4111 ..."). Redacting twice must give what redacting once gave, so
    # look again in those cases (rare in real text) until nothing changes.
    for _ in range(16):  # each pass removes text: it ends; chains longer than this are contrived
        if not dropped and not any(
            _RUN_AFTER.match(text, f.end) or _RUN_BEFORE.search(text, max(0, f.start - 4), f.start)
            for f in findings
        ):
            break
        text = redacted
        findings, dropped = _resolved(text, chosen, options)
        if not findings:
            break
        redacted = apply_findings(text, findings)
    return redacted


def apply_findings(text: str, findings: list[Finding]) -> str:
    """``text`` with ``findings`` (as ``find`` returns them: disjoint, in order) replaced."""
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
            return _redact(v, chosen, options)
        if isinstance(v, dict):
            return {k: walk(item) for k, item in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(item) for item in v]
        if card and isinstance(v, int) and not isinstance(v, bool) and _card_ok(str(v)):
            return placeholder(Finding("card", 0, len(str(v)), str(v)[-4:]))
        return v

    return walk(value)
