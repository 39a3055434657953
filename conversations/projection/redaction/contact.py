"""Contact details: e-mail addresses, and phone numbers (phonenumbers decides, on phone-shaped
runs only)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import phonenumbers

from .base import (
    DIGIT_GROUP,
    Finding,
    Scan,
)
from .engine import Candidate

# --- e-mail addresses ---------------------------------------------------------------------------
# Found from each "@" (a substring search) outwards, rather than by a regex tried at every
# position of the text: the local part is read backwards, the domain forwards. Letters are
# Unicode letters: "josé@exämple.de" is an address too (RFC 6531, IDNA).
_EMAIL_LOCAL = re.compile(r"[\w.%+\-]{1,64}$")
_EMAIL_DOMAIN = re.compile(r"(?:[^\W_](?:[\w\-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}(?![\w\-])")
_EMAIL_LOCAL_CHARS = re.compile(r"[\w.%+\-]")
# Its candidates in the one pass: an "@" between a character of a local part and one that may
# start a domain (in the stand-in, a byte above 0x7f or "?" is a character beyond ASCII, "5"
# another script's digit).
EMAIL_CANDIDATE = Candidate("email", r"[0-9A-Za-z_.%+\-?\x80-\xff]@[0-9A-Za-z?\x80-\xff]", skip=1)


def _scan_email(scan: Scan) -> list[Finding]:
    text = scan.text
    found: list[Finding] = []
    previous = 0  # where the last address ended: a local part may start there, as it would
    for at, _ in scan.hits.get("email", ()):  # after a placeholder once that address is redacted
        if at < previous:
            continue
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
            found.append(Finding("email", local.start(), domain.end(), ""))
            previous = domain.end()
    return found


# --- phone numbers: phonenumbers decides, on phone-shaped runs only ---------------------------
# A digit run (see ``NUM_RUN``) is a candidate when it is an international number ("+" and 7+
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
# What a run holds besides its digits (``NUM_RUN``'s separators, and the "+(" before one).
_NOT_DIGITS = str.maketrans("", "", " -.()/+")
_TIME_AFTER = re.compile(r":\d")  # "2026-11-29 12" of "2026-11-29 12:30:45"
_DATE_START = re.compile(r"\d{4}-\d\d?-\d\d?\b|\d\d?/\d\d?/\d{2,4}\b")


@dataclass(frozen=True, slots=True)
class _NationalShape:
    country_code: int
    lengths: frozenset[int]  # digit counts of a national number, with or without its prefix
    prefix: str  # the national (trunk) prefix: "1" in the US, "0" in most of Europe
    pattern: re.Pattern[str] | None  # what a national significant number looks like
    plain_prefix: bool  # the prefix is stripped as is (no carrier codes, no transform rule)
    shortest: int  # the fewest digits of a national number (7 when the region has none)


@lru_cache(maxsize=64)
def _national_shape(region: str) -> _NationalShape:
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.general_desc is None:
        return _NationalShape(0, frozenset(), "", None, False, 7)
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
        min(lengths, default=7),
    )


def _phone_shaped(run: str, digits: str, shape: _NationalShape) -> bool:
    """A cheap necessary condition, so that phonenumbers only sees runs that could be a number.

    Without "+", the whole run must have the length and the leading digits of a national number:
    a number inside a longer run ("GB82 WEST 1669 0694 9772 4625 30", a tracking number in
    groups) is a slice of something else.
    """
    if run[0] == "+" or run[:2] == "(+":
        return len(digits) >= 7
    if len(digits) not in shape.lengths:
        return False
    if run.count(".") >= 3 or _DATE_START.match(run):
        return False  # an IPv4 address, an OID, a version; a date (and the hour after it)
    return _national_ok(digits, shape)


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


def _scan_phone(scan: Scan) -> list[Finding]:
    text, region = scan.text, scan.options.phone_region
    shape = _national_shape(region)
    shortest = shape.shortest
    phones: list[Finding] = []
    for start, end in scan.runs:
        # "+1 ...", "(415) ...", "(+44) ...": the run starts at its first digit.
        while start > 0 and text[start - 1] in "+(" and start > end - 24:
            start -= 1
        if end - start < shortest and text[start] != "+":
            continue
        found = _phone_in(text, start, end, shape, region)
        if found is not None:
            phones.append(found)
        elif " " in text[start:end]:
            phones += _phones_in_slices(text, start, end, shape, region)
    return phones


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
    groups = [m.span() for m in DIGIT_GROUP.finditer(text, start, end)]
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
    run = text[start:end]
    digits = run.translate(_NOT_DIGITS)
    if not _phone_shaped(run, digits, shape):
        return None
    if text[end : end + 1].isalpha() or _TIME_AFTER.match(text, end):
        return None  # "4155552671x": part of a word; "2026-11-29 12:30": a time
    if run.isdigit() and _ID_LABEL_BEFORE.search(text, max(0, start - 40), start):
        return None
    national = _valid_national_number(run, region)
    if national is None:
        return None
    if run[0] == "(" and ")" not in run:
        start += 1  # "(415 555 2671": the parenthesis is the text's, not the number's
    return Finding("phone", start, end, str(national)[-2:])


def _valid_national_number(run: str, region: str) -> int | None:
    """The national number of the phone number ``run`` is, when phonenumbers calls it valid
    (the dearest step of a phone, about 25 µs; not memoised: a memo would keep the numbers)."""
    number = _phone_number(run, run.translate(_NOT_DIGITS), _national_shape(region), region)
    if number is None or not phonenumbers.is_valid_number(number):
        return None
    return number.national_number
