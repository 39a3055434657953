"""Numbers with a check: payment cards (issuer ranges and Luhn), IBANs (mod-97 and the
country's format, by stdnum) and US social security numbers."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from stdnum import numdb
from stdnum.util import get_cc_module

from .base import (
    DIGIT_GROUP,
    Finding,
    Scan,
)
from .engine import Candidate

# --- payment cards: Luhn-valid numbers of a known issuer range --------------------------------
# Inside a digit run, the stretches of digits in groups joined by single spaces or dashes, at
# least 14 digits, not glued to an identifier on their left ("ORD-4111...", "1.4111...",
# "12/4111..."). Which groups form the card is decided in Python: a CVV may share the stretch.
_CARD_STRETCH = re.compile(r"\d(?:[ \-]?\d){13,}+")


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


# The digit sum of twice each digit ("7" -> 14 -> "5"), for the Luhn check.
_LUHN_DOUBLED = str.maketrans("0123456789", "0246813579")


def luhn_ok(digits: str) -> bool:
    """``stdnum.luhn.is_valid(digits)`` for decimal digits, at a fraction of its cost; False for
    anything but ASCII digits (a run's ``\\d`` also matches other scripts' digits)."""
    if not (digits.isascii() and digits.isdigit()):
        return False
    total = sum(map(int, digits[-1::-2])) + sum(map(int, digits[-2::-2].translate(_LUHN_DOUBLED)))
    return total % 10 == 0


def _card_ok(digits: str) -> bool:
    return 14 <= len(digits) <= 19 and card_brand_ok(digits) and luhn_ok(digits)


def _scan_card(scan: Scan) -> list[Finding]:
    text = scan.text
    found: list[Finding] = []
    for start, end in scan.runs:
        if end - start < 14:
            continue
        for stretch in _CARD_STRETCH.finditer(text, start, end):
            s, e = stretch.span()
            if s > 0 and (text[s - 1].isalnum() or text[s - 1] in "_.-/"):
                continue
            groups = [m.span() for m in DIGIT_GROUP.finditer(text, s, e)]
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
            found += _cards_in_groups(text, groups)
    return found


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
            if len(digits) < 14:
                continue  # too short for a card: the grouping need not be looked at
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
# Its candidates in the one pass: a country code and check digits (the look-behind is the
# Python regex's to confirm).
IBAN_CANDIDATE = Candidate("iban", r"[A-Z]{2}[0-9]{2}")
_IBAN_GROUP = re.compile(r"[A-Z0-9]+")


# Letters as ISO 13616 numbers them for the check ("A" -> "10" ... "Z" -> "35").
_IBAN_LETTER_VALUES = {ord(c): str(10 + i) for i, c in enumerate(string.ascii_uppercase)}


def _mod97_ok(compact: str) -> bool:
    """ISO 13616 check digits: a quick "no" before ``stdnum.iban`` checks the country format."""
    rearranged = compact[4:] + compact[:4]
    return int(rearranged.translate(_IBAN_LETTER_VALUES)) % 97 == 1


_IBAN_BBAN_PART = re.compile(r"(\d+)!?[nace]")


@lru_cache(maxsize=128)
def _iban_length(country: str) -> int:
    """The length of an IBAN of ``country`` from stdnum's registry (0: no such country)."""
    bban = numdb.get("iban").info(country)[0][1].get("bban")
    return 4 + sum(int(n) for n in _IBAN_BBAN_PART.findall(bban)) if bban else 0


def _iban_prefilter(scan: Scan) -> bool:
    """A country code and check digits somewhere: what ``_IBAN_RUN`` starts with."""
    return "iban" in scan.hits


def _scan_iban(scan: Scan) -> list[Finding]:
    text = scan.text
    ibans: list[Finding] = []
    after = 0  # where the next IBAN may start
    for start, _ in scan.hits.get("iban", ()):
        if start < after:
            continue
        run = _IBAN_RUN.match(text, start)
        if run is None:
            continue
        found = _iban_at(text, start, run.end())
        # After an IBAN, or one character on when none starts here: a run can swallow the
        # start of the next one ("GB82WEST12345698765432 DE89370400440532013000").
        if found is not None:
            ibans.append(found)
            after = found.end
        else:
            after = start + 1
    return ibans


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
    if _iban_valid(compact):
        return Finding("iban", start, end, compact[-4:])
    return None


def _iban_valid(compact: str) -> bool:
    """``stdnum.iban.is_valid(compact)`` for a compact upper-case IBAN, without its cost (about
    100 µs: stdnum walks its bank registry with the whole number for a format that depends on the
    country alone). The same checks: the check digits (mod 97), a known country, the
    country's BBAN format from stdnum's registry, then the country's own module where stdnum has
    one (Belgium, Spain, Montenegro, Norway). Kept per country, never per number: a memo would
    keep the IBANs. ``test_iban_valid_is_stdnum`` holds the two equal (other scripts' digits in
    the check digits included: stdnum reads them as digits, and so does ``int``)."""
    country = _iban_country(compact[:2])
    if country is None or not _mod97_ok(compact):
        return False
    bban, module = country
    if bban.fullmatch(compact[4:]) is None:
        return False
    return module is None or bool(module.is_valid(compact))


_IBAN_BBAN_SHAPE = re.compile(r"([1-9][0-9]*)!([nac])")
_IBAN_BBAN_CHARS = {"n": "[0-9]", "a": "[A-Z]", "c": "[A-Za-z0-9]"}


@lru_cache(maxsize=128)
def _iban_country(country: str) -> tuple[re.Pattern[str], Any] | None:
    """The BBAN format and the module of ``country`` (None: stdnum knows no such country)."""
    info = numdb.get("iban").info(country)[0][1]
    if not info:
        return None
    bban = _IBAN_BBAN_SHAPE.sub(
        lambda m: f"{_IBAN_BBAN_CHARS[m.group(2)]}{{{m.group(1)}}}", info.get("bban", "")
    )
    return re.compile(bban), get_cc_module(country.lower(), "iban")


# --- US social security numbers -------------------------------------------------------------
# AAA-GG-SSSS (or with spaces) outside the never-issued ranges: area 000, 666, 900-999 (ITINs and
# advertising numbers live there), group 00, serial 0000. Nine bare digits only after "SSN".
_SSN = re.compile(r"(?<![\w\-./])(?<!\d )(\d{3})([- ])(\d{2})\2(\d{4})(?![\w\-/]|[.,]\d| \d)")
_SSN_LABELLED = re.compile(
    r"(?i:\b(?:ssn|social security(?: number| no\.?| #)?)\b[\s:#]{0,3})(\d{9})(?!\w)"
)
SSN_LABEL_CANDIDATE = Candidate("ssn-label", r"ssn|social", caseless=True)


def _ssn_ok(area: str, group: str, serial: str) -> bool:
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _scan_ssn(scan: Scan) -> list[Finding]:
    text = scan.text
    found: list[Finding] = []
    for start, end in scan.runs:
        if end - start < 11:
            continue
        for m in _SSN.finditer(text, start, end + 2):  # + 2: the lookahead sees past the run
            if _ssn_ok(m.group(1), m.group(3), m.group(4)):
                found.append(Finding("ssn", m.start(), m.end(), ""))
    for at, _ in scan.hits.get("ssn-label", ()):
        label = _SSN_LABELLED.match(text, at)
        if label is not None:
            d = label.group(1)
            if _ssn_ok(d[:3], d[3:5], d[5:]):
                found.append(Finding("ssn", label.start(1), label.end(1), ""))
    return found
