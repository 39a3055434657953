"""Redaction (``conversations.projection.redaction``) against Presidio's pattern recognizers.

What it measures, on two labelled corpora in the same run, each beside Presidio:

- the project's corpus: support text generated from a fixed seed (customer
  messages, assistant replies, tool inputs and results as JSON, log lines, curl commands, config
  snippets), with the true spans of every card, IBAN, e-mail, phone, SSN, secret and IP address
  known by construction: cards of several brands with a computed Luhn digit, IBANs of 13
  countries with computed check digits, phone numbers that ``phonenumbers`` calls valid (US
  national forms, international forms of 13 other countries), SSNs outside the never-issued
  ranges, keys of each known prefix, JWTs, PEM keys, bearer tokens and secrets assigned to
  ``password`` / ``*_secret`` names, IPv4 and IPv6 (with ports, CIDR, brackets). Beside them,
  unlabelled near-misses: order numbers, 16-digit order ids that fail Luhn, account numbers,
  EAN-13 barcodes, ISBNs, dates, log timestamps, times, versions (``v1.2.3.4``, ``10.0.19045``,
  ``version 1.2.3.4``: a version, see the module), OIDs, tracking numbers, prices, invoice ids,
  ZIP and UK postcodes, millisecond timestamps, UUIDs, hashes, MAC addresses, CVE ids;
- the support-chat corpus (``bench/redaction_chat.py``): paragraphs from templates that no test
  uses, in ten languages, a third of them without personal data, with local near-misses (a
  corpus written beside the code flatters it: this one was not).

How to read the output: per kind, ``tp`` counts labelled spans found (a finding of the same kind
overlapping them), ``fn`` labelled spans missed, ``fp`` findings overlapping no labelled span of
their kind; precision = found / (found + fp), recall = tp / (tp + fn). ``MB/s`` per kind is that
detector alone over the corpus; ``all`` is detection with every detector (``find``), the
counterpart of Presidio's ``analyze``; ``redact`` adds the replacing. Presidio: ``AnalyzerEngine``
with a ``NoOpNlpEngine`` (no spaCy model) and only its pattern recognizers for the six kinds it
has (no secret recognizer), best of two passes; ours best of five, each pass timed in CPU time of
this process (on a shared machine wall-clock time counts the waits for a core, for either side).
Per kind MB/s on the project's corpus only. Targets, on both corpora: precision and recall 1.00
for every kind, no snippet without personal data flagged (near-miss precision 1.00), throughput
>= 50x Presidio's; the script exits 1 when one is missed. The ratio is the figure to track:
absolute MB/s vary with the machine and with what else runs on it.

Delta-sized inputs (live streams, conversations/live/): the same corpus cut in pieces of 5 to 50
characters, ``find`` and ``redact`` on each piece, the live hold-back over them in order, and
Presidio's ``analyze`` on each piece (``--deltas-only`` runs just that part); each in MB/s and in
microseconds a delta, with ``find``, ``redact`` and the hold-back over Presidio. The target
(>= 50x) is ``find``'s. The hold-back costs several times a delta's ``find``: on each delta it
looks for findings over all the text it holds (48 characters and more), then redacts what it
releases.

Last measured (December 2026, a shared 2-CPU machine; ratios of runs a minute apart swing by
about 20%): on deltas, find 59-61x Presidio (7.5-7.9 µs a delta against 460-470), redact
54-56x, hold-back 9-11x (42-55 µs a delta); before the work of issue 15, find 41-65x (median
48), hold-back 8-10x. The whole snippets: 52x (before: 44-48x). Precision and recall 1.0 for
every kind, before and after. No validation is memoised (a memo would keep customers' numbers).

    .venv/bin/python bench/redaction.py [--snippets 3000] [--seed 20261129] [--quick] [--misses]
        [--deltas-only] [--no-presidio]
"""

from __future__ import annotations

import argparse
import base64
import functools
import ipaddress
import json
import logging
import random
import re
import string
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import phonenumbers
from stdnum import iban as stdnum_iban
from stdnum import luhn

from conversations.projection.redaction import (
    DETECTORS,
    Finding,
    find,
    redact,
)

KINDS = ("card", "iban", "email", "phone", "ssn", "secret", "ip")
PRESIDIO_KINDS = {
    "CREDIT_CARD": "card",
    "IBAN_CODE": "iban",
    "EMAIL_ADDRESS": "email",
    "PHONE_NUMBER": "phone",
    "US_SSN": "ssn",
    "IP_ADDRESS": "ip",
}
TARGET_PRECISION = 1.0
TARGET_RECALL = 1.0
TARGET_RATIO = 50.0

Span = tuple[str, int, int]  # kind, start, end


@dataclass
class Snippet:
    text: str
    spans: list[Span] = field(default_factory=list)


# --- generators of true values ---------------------------------------------------------------

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _with_luhn(partial: str) -> str:
    return partial + luhn.calc_check_digit(partial)


CARD_BRANDS: tuple[tuple[str, Callable[[random.Random], str], int], ...] = (
    # No 13-digit Visa: not issued for decades, and 13 digits are what EAN-13 barcodes have.
    ("visa", lambda r: "4", 16),
    ("visa19", lambda r: "4", 19),
    ("mastercard", lambda r: str(r.randint(51, 55)), 16),
    ("mastercard2", lambda r: str(r.randint(2221, 2720)), 16),
    ("amex", lambda r: r.choice(["34", "37"]), 15),
    ("discover", lambda r: r.choice(["6011", "65", str(r.randint(644, 649))]), 16),
    ("jcb", lambda r: str(r.randint(3528, 3589)), 16),
    ("diners", lambda r: r.choice(["36", "38", str(r.randint(300, 305))]), 14),
    ("unionpay", lambda r: "62", 16),
    ("unionpay19", lambda r: "62", 19),
)


def card(rng: random.Random) -> str:
    _, prefix, length = rng.choice(CARD_BRANDS)
    p = prefix(rng)
    number = _with_luhn(p + _digits(rng, length - len(p) - 1))
    style = rng.random()
    if style < 0.35:
        return number
    sep = " " if style < 0.8 else "-"
    if length == 15:
        return sep.join((number[:4], number[4:10], number[10:]))
    if length == 14:
        return sep.join((number[:4], number[4:10], number[10:]))
    if length == 13:
        return sep.join((number[:4], number[4:7], number[7:10], number[10:]))
    return sep.join(number[i : i + 4] for i in range(0, length, 4))


IBAN_COUNTRIES = ("GB", "DE", "FR", "NL", "IT", "CH", "AT", "IE", "PL", "SE", "DK", "FI", "PT")
_BBAN_PART = re.compile(r"(\d+)!?([nace])")


def iban(rng: random.Random) -> str:
    country = rng.choice(IBAN_COUNTRIES)
    structure = next(info for _, info in stdnum_iban._ibandb.info(country))["bban"]
    while True:
        bban = ""
        for count, kind in _BBAN_PART.findall(structure):
            chars = {"n": string.digits, "a": string.ascii_uppercase, "c": ALNUM.upper()}[kind]
            bban += "".join(rng.choice(chars) for _ in range(int(count)))
        number = country + stdnum_iban.calc_check_digits(country + "00" + bban) + bban
        if stdnum_iban.is_valid(number):
            break
    if rng.random() < 0.6:
        return " ".join(number[i : i + 4] for i in range(0, len(number), 4))
    return number


FIRST = ("maria", "john", "li", "fatima", "pierre", "anna", "tom", "sofia", "raj", "kenji", "olga")
LAST = ("garcia", "smith", "wang", "khan", "dubois", "novak", "oconnor", "rossi", "patel", "sato")
DOMAINS = (
    "gmail.com",
    "outlook.com",
    "yahoo.co.uk",
    "example.com",
    "acme-corp.io",
    "mail.example.org",
    "proton.me",
    "uni-hamburg.de",
    "company.com.au",
)


def email(rng: random.Random) -> str:
    f, la = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice(
        [
            f"{f}.{la}",
            f"{f}{la[0]}{rng.randint(1, 99)}",
            f"{f}+orders",
            f"{f[0]}_{la}",
            f"{la}.{f}.{rng.randint(1970, 2005)}",
        ]
    )
    if rng.random() < 0.15:
        local = local.capitalize()
    return f"{local}@{rng.choice(DOMAINS)}"


US_AREAS = ("212", "415", "646", "312", "617", "206", "303", "512", "305", "702", "213", "919")
INTL_REGIONS = ("GB", "DE", "FR", "AU", "IN", "JP", "ES", "BR", "MX", "IT", "NL", "IE", "CA")


def _valid_number(rng: random.Random, region: str) -> phonenumbers.PhoneNumber:
    kind = rng.choice(
        [phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE]
    )
    example = phonenumbers.example_number_for_type(region, kind)
    assert example is not None
    nsn = phonenumbers.national_significant_number(example)
    while True:
        keep = max(2, len(nsn) - 5)
        candidate = nsn[:keep] + _digits(rng, len(nsn) - keep)
        number = phonenumbers.parse("+" + str(example.country_code) + candidate)
        if phonenumbers.is_valid_number(number):
            return number


def phone(rng: random.Random) -> str:
    if rng.random() < 0.55:  # US, as US customers write them
        while True:
            area, exchange = rng.choice(US_AREAS), str(rng.randint(200, 999))
            line = _digits(rng, 4)
            number = phonenumbers.parse(f"+1{area}{exchange}{line}")
            if phonenumbers.is_valid_number(number):
                break
        return rng.choice(
            [
                f"({area}) {exchange}-{line}",
                f"{area}-{exchange}-{line}",
                f"{area}.{exchange}.{line}",
                f"{area} {exchange} {line}",
                f"{area}{exchange}{line}",
                f"1-{area}-{exchange}-{line}",
                f"+1 {area} {exchange} {line}",
                f"+1 ({area}) {exchange}-{line}",
                f"+1{area}{exchange}{line}",
                f"+1-{area}-{exchange}-{line}",
                f"({area}){exchange}-{line}",
            ]
        )
    number = _valid_number(rng, rng.choice(INTL_REGIONS))
    style = rng.random()
    if style < 0.6:
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    if style < 0.85:
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    # As people type them: the international prefix, then the national digits in pairs/fours.
    nsn = phonenumbers.national_significant_number(number)
    return f"+{number.country_code} " + " ".join(nsn[i : i + 3] for i in range(0, len(nsn), 3))


def ssn(rng: random.Random, sep: str | None = None) -> str:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            break
    group, serial = rng.randint(1, 99), rng.randint(1, 9999)
    if sep is None:
        sep = "-" if rng.random() < 0.85 else " "
    return f"{area:03d}{sep}{group:02d}{sep}{serial:04d}"


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value):  # random keys of this length carry digits
            return value


def jwt(rng: random.Random) -> str:
    def b64(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    header = b64({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
    payload = b64({"sub": _digits(rng, 8), "iat": 1732900000 + rng.randint(0, 10**6)})
    return f"{header}.{payload}.{_rand(rng, B64URL, 43)}"


def pem(rng: random.Random) -> str:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    alphabet = ALNUM + "+/"
    lines = [_rand(rng, alphabet, 64) for _ in range(rng.randint(2, 5))]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


SECRETS: tuple[Callable[[random.Random], str], ...] = (
    lambda r: "sk-ant-api03-" + _rand(r, B64URL, 93) + "AA",
    lambda r: "sk-proj-" + _rand(r, B64URL, 120),
    lambda r: "sk-" + _rand(r, ALNUM, 48),
    lambda r: "AKIA" + _rand(r, string.ascii_uppercase + string.digits, 16),
    lambda r: "ghp_" + _rand(r, ALNUM, 36),
    lambda r: "gho_" + _rand(r, ALNUM, 36),
    lambda r: "ghs_" + _rand(r, ALNUM, 36),
    lambda r: "github_pat_" + _rand(r, ALNUM, 22) + "_" + _rand(r, ALNUM, 59),
    lambda r: (
        r.choice(["xoxb-", "xoxp-", "xoxa-"]) + f"{_digits(r, 12)}-{_digits(r, 13)}-"
        f"{_rand(r, ALNUM, 24)}"
    ),
    lambda r: "glpat-" + _rand(r, B64URL, 20),
    lambda r: "AIza" + _rand(r, B64URL, 35),
    lambda r: r.choice(["sk_live_", "rk_live_", "pk_live_"]) + _rand(r, ALNUM, 24),
    jwt,
)


def password(rng: random.Random) -> str:
    word = rng.choice(["Summer", "Winter", "Blue", "Tiger", "Acme", "Hunter", "Sunshine"])
    return word + str(rng.randint(1, 9999)) + rng.choice(["!", "#", "", "$", "?"])


def secret(rng: random.Random) -> str:
    return rng.choice(SECRETS)(rng)


def bearer(rng: random.Random) -> str:
    return rng.choice([jwt(rng), _rand(rng, ALNUM + "-._", 40), secret(rng)])


def ipv4(rng: random.Random) -> str:
    first = rng.choice([10, 172, 192, 203, 198, 81, 93, 151, 185, 100, 8])
    return ".".join(
        str(o) for o in (first, rng.randint(0, 255), rng.randint(0, 255), rng.randint(1, 254))
    )


def ipv6(rng: random.Random) -> str:
    groups = ["2001", "db8" if rng.random() < 0.5 else f"{rng.randint(0x2400, 0x2A0F):x}"]
    groups += [f"{rng.randint(0, 0xFFFF):x}" for _ in range(6)]
    if rng.random() < 0.4:
        groups[rng.randint(2, 5)] = "0"
        groups[3] = "0"
    address = ipaddress.IPv6Address(":".join(groups))
    return address.compressed if rng.random() < 0.7 else address.exploded


def ip(rng: random.Random) -> str:
    return ipv4(rng) if rng.random() < 0.75 else ipv6(rng)


# --- near-misses: never labelled --------------------------------------------------------------


def ean13(rng: random.Random) -> str:
    """A product barcode with its EAN check digit (a tenth of them pass Luhn too)."""
    body = rng.choice(["400", "500", "501", "590", "761", "871", "978", "030"]) + _digits(rng, 9)
    weighted = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body))
    return body + str(-weighted % 10)


def mac(rng: random.Random) -> str:
    return ":".join(f"{rng.randint(0, 255):02X}" for _ in range(6))


def order16(rng: random.Random) -> str:
    """A 16-digit order id that fails Luhn (some start like cards do)."""
    partial = rng.choice(["4", "5", "3", "6", "1", "2", "8"]) + _digits(rng, 14)
    good = int(luhn.calc_check_digit(partial))
    return partial + str((good + rng.randint(1, 9)) % 10)


def account(rng: random.Random) -> str:
    return str(rng.randint(2, 9)) + _digits(rng, 9)  # 10 digits, a valid US phone shape often


def version4(rng: random.Random) -> str:
    return ".".join(str(rng.randint(0, 20)) for _ in range(4))


NEAR: dict[str, Callable[[random.Random], str]] = {
    "order": lambda r: f"ORD-{r.randint(1000000, 9999999)}",
    "order_hash": lambda r: f"#{r.randint(10000000, 99999999)}",
    "order16": order16,
    "account": account,
    "date": lambda r: r.choice(
        [
            f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
            f"{r.randint(1, 12)}/{r.randint(1, 28)}/2026",
            f"{r.randint(1, 28):02d}.{r.randint(1, 12):02d}.2026",
            f"Nov {r.randint(1, 28)}, 2026",
        ]
    ),
    "iso": lambda r: (
        f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T"
        f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z"
    ),
    "time": lambda r: f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}",
    "version": lambda r: r.choice(
        [
            f"v{version4(r)}",
            f"10.0.{r.randint(10240, 22631)}",
            f"{r.randint(1, 5)}.{r.randint(0, 30)}.{r.randint(0, 9)}",
            f"10.0.{r.randint(19041, 22631)}.{r.randint(1000, 4000)}",
        ]
    ),
    "version_word": lambda r: (
        r.choice(["version ", "build ", "firmware ", "updated to "]) + version4(r)
    ),
    "chrome": lambda r: f"{r.randint(100, 131)}.0.{r.randint(5000, 6999)}.{r.randint(10, 250)}",
    "tracking": lambda r: r.choice(
        [
            "1Z" + _rand(r, string.ascii_uppercase + string.digits, 6) + _digits(r, 10),
            "94001" + _digits(r, 17),
            "9400 1" + " ".join(_digits(r, 4) for _ in range(4)) + " " + _digits(r, 1),
            _digits(r, 12),
        ]
    ),
    "price": lambda r: r.choice(
        [
            f"${r.randint(1, 4999):,}.{r.randint(0, 99):02d}",
            f"€{r.randint(5, 900)},{r.randint(0, 99):02d}",
            f"{r.randint(1000, 99999):,}.00 EUR",
            f"USD {r.randint(10, 5000)}",
        ]
    ),
    "invoice": lambda r: r.choice(
        [f"INV-2026-{r.randint(1, 99999):05d}", f"INV{r.randint(100000000, 999999999)}"]
    ),
    "zip": lambda r: r.choice(
        [f"{r.randint(10000, 99999)}", f"{r.randint(10000, 99999)}-{_digits(r, 4)}"]
    ),
    "ts_ms": lambda r: str(1700000000000 + r.randint(0, 10**11)),
    "ts": lambda r: str(1700000000 + r.randint(0, 10**8)),
    "uuid": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "sha": lambda r: "".join(r.choice("0123456789abcdef") for _ in range(40)),
    "masked": lambda r: r.choice(["**** **** **** ", "ending in ", "xxxx-"]) + _digits(r, 4),
    "qty": lambda r: str(r.randint(1, 12)),
    "sku": lambda r: (
        f"SKU-{r.randint(1000, 9999)}-{r.choice(string.ascii_uppercase)}{r.randint(10, 99)}"
    ),
    "oid": lambda r: f"1.3.6.1.4.1.{r.randint(100, 60000)}.{r.randint(1, 9)}",
    "ean": ean13,
    "isbn": lambda r: (
        f"978-{r.randint(0, 1)}-{r.randint(100, 999)}-{r.randint(10000, 99999)}-{r.randint(0, 9)}"
    ),
    "mac": mac,
    "logts": lambda r: (
        f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d} "
        f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
        f",{r.randint(0, 999):03d}"
    ),
    "duration": lambda r: f"00:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}",
    "postcode": lambda r: r.choice(["SW1A 1AA", "EC1A 1BB", "M1 1AE", "B33 8TH", "DN55 1PT"]),
    "cve": lambda r: f"CVE-{r.randint(2019, 2026)}-{r.randint(1000, 49999)}",
    "latlon": lambda r: f"{r.uniform(-60, 60):.4f}, {r.uniform(-150, 150):.4f}",
    "kernel": lambda r: f"5.{r.randint(4, 19)}.0-{r.randint(20, 120)}-generic",
    "pct": lambda r: f"{r.randint(1, 99)}.{r.randint(0, 9)}%",
    "eur": lambda r: f"{r.randint(1, 999)}.{r.randint(100, 999)},{r.randint(0, 99):02d} €",
    "jira": lambda r: f"SUP-{r.randint(100, 99999)}",
    "port": lambda r: str(r.choice([80, 443, 5432, 6379, 8080, 8443])),
    "name": lambda r: f"{r.choice(FIRST).capitalize()} {r.choice(LAST).capitalize()}",
    "product": lambda r: r.choice(
        ["Pro plan", "wireless headphones", "standing desk", "the annual subscription", "Model X2"]
    ),
    "city": lambda r: r.choice(["Austin", "Leeds", "Lyon", "Osaka", "Porto", "Denver"]),
}

TRUE: dict[str, tuple[str, Callable[[random.Random], str]]] = {
    "card": ("card", card),
    "iban": ("iban", iban),
    "email": ("email", email),
    "phone": ("phone", phone),
    "ssn": ("ssn", ssn),
    "secret": ("secret", secret),
    "bearer": ("secret", bearer),
    "pem": ("secret", pem),
    "ip": ("ip", ip),
    "ssn_bare": ("ssn", lambda r: ssn(r, sep="")),
    "aws_secret": ("secret", lambda r: _rand(r, ALNUM + "/+", 40)),
    "password": ("secret", password),
    "ipv4": ("ip", ipv4),
    "ipv6": ("ip", ipv6),
}

# Support text as it arrives: customer messages, assistant answers, tool inputs and results,
# log excerpts. Slots in braces; a slot used twice gets two values.
TEMPLATES: tuple[str, ...] = (
    "My card {card} was charged twice for {order}.",
    "Hi, I was billed {price} on {date} but I cancelled {product}. Card is {card}, exp 12/27.",
    "Please refund to my card {card}. Order {order_hash}, placed {date} at {time}.",
    "The charge on {card} for {price} is not mine!! my number is {phone}",
    "Can you update my billing card to {card}? The old one ended {masked}.",
    "Refund {price} to IBAN {iban} please, invoice {invoice}.",
    "Bank details for the transfer: {name}, IBAN {iban}, reference {invoice}",
    "I paid by bank transfer from {iban} on {date}, amount {price}.",
    "You can reach me at {email} or {phone} after {time}.",
    "Hello, it's {name} ({email}). I never got my {product}, tracking {tracking}.",
    "Change the account email from {email} to {email} please",
    "call me back on {phone}, thanks",
    "My phone number changed, it's now {phone}. Old one was {phone}.",
    "For verification my SSN is {ssn} and my date of birth {date}.",
    "The form asks for SSN ({ssn}), zip {zip} and phone {phone}. Is that safe?",
    "I accidentally pasted my key {secret} in the chat, can you delete it?",
    "Our integration uses {secret} and fails since {date} with error 401.",
    "Here's my config:\nOPENAI_API_KEY={secret}\nTIMEOUT=30\nRETRIES={qty}",
    "curl -H 'Authorization: Bearer {bearer}' https://api.example.com/v1/orders/{order}",
    "Request headers: Authorization: Bearer {bearer}\nX-Request-Id: {uuid}",
    "I generated this key, is the format right?\n{pem}\nit fails on version {version}",
    "Login from {ip} was blocked on {iso}. My IP at home is {ipv4}.",
    "{iso} WARN auth failed user={email} ip={ip} attempts={qty}",
    '{iso} INFO GET /api/orders/{order} 200 {qty}ms client={ipv4} ua="Chrome/{chrome}"',
    "Our servers are {ipv4} and {ipv6}, both on build {version}.",
    "The app ({version_word}) keeps crashing on Windows {version}.",
    "I'm on {version_word}, the changelog says {version} fixed it.",
    "Order {order} shipped via UPS, tracking {tracking}, total {price}, invoice {invoice}.",
    "Your order {order16} is confirmed. Expected delivery {date}. Tracking: {tracking}.",
    "My account number is {account} and the order id is {order16}.",
    "Account {account}: balance {price} as of {date}, last login {iso}.",
    "customer id {account}, ticket {order_hash}, created {ts}",
    "Shipping to {name}, 123 Main St, {city}, {zip}. Order {order}, {qty} x {sku}.",
    "Event at {ts_ms}: payment_intent.succeeded amount={price} ref={sha}",
    "Deploy {sha} rolled out at {iso}; OID {oid} changed.",
    "Thanks, that worked! Have a great day.",
    "Still waiting for the refund for {product}, it's been two weeks.",
    "The {product} I got is broken, the left side makes no sound. Can I get a replacement?",
    "Can you explain the difference between the {product} and the {product}?",
    "I'd like to cancel my subscription at the end of the month please.",
    "Order {order} was placed on {date} for {price}. Your card ending {masked} was charged.",
    '{{"order_id": "{order}", "status": "shipped", "tracking": "{tracking}", "customer": '
    '{{"email": "{email}", "phone": "{phone}"}}, "total": "{price}", "created_at": "{iso}"}}',
    '{{"customer_id": "cus_{sha}", "name": "{name}", "email": "{email}", "ssn_last4": "{qty}",'
    ' "payment_method": {{"card": "{card}", "exp": "04/28"}}, "zip": "{zip}"}}',
    '{{"payout": {{"iban": "{iban}", "amount": "{price}", "invoice": "{invoice}"}}, '
    '"requested_at": {ts_ms}}}',
    '{{"session": {{"ip": "{ip}", "user_agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) '
    'Chrome/{chrome}", "started": "{iso}"}}, "events": {qty}}}',
    '{{"results": [{{"sku": "{sku}", "qty": {qty}, "price": "{price}"}}, {{"sku": "{sku}", '
    '"qty": {qty}, "price": "{price}"}}], "order": "{order}"}}',
    'search_orders(email="{email}") -> 2 results: {order} ({date}), {order} ({date})',
    'lookup_customer(phone="{phone}") -> {name}, {city} {zip}, since {date}',
    "Your order {order} contains {qty} x EAN {ean} and {qty} x ISBN {isbn}.",
    '{{"sku": "{sku}", "gtin": "{ean}", "stock": {qty}, "warehouse": "{postcode}"}}',
    "{logts} ERROR payment declined for {email} from {ipv4}:{port} (case {jira})",
    "{logts} INFO login ok user_id={account} ip={ip} took {duration}",
    "Device {mac} on firmware {version} lost its lease from [{ipv6}]:{port}",
    "Server {ipv4}/24 patched for {cve}; kernel {kernel}; CPU at {pct}.",
    "Store located at {latlon}, open since {date}. Ticket {jira}, total {eur}.",
    "SSN: {ssn_bare}, DOB {date}. Please update my tax form.",
    "Write to <{email}> or mailto:{email}, phone tel:{phone}.",
    "AWS_ACCESS_KEY_ID={secret}\nAWS_SECRET_ACCESS_KEY={aws_secret}\nAWS_REGION=us-east-1",
    'login(username="{email}", password="{password}") -> 401 after {duration}',
    "My password is {password} and it doesn't work since the update to {version}.",
    '{{"config": {{"api_key": "{secret}", "client_secret": "{aws_secret}", "retries": {qty}}}}}',
    "I'll look up order {order} for you. I can see it was paid with the card "
    "{masked} and shipped on {date}.",
    "I've sent a confirmation to {email}. Your case number is {order_hash}.",
    "For security, please don't share full card numbers here. I've noted order {order}.",
)

_SLOT = re.compile(r"\{(\w+)\}|\{\{|\}\}")


def build(
    template: str,
    rng: random.Random,
    true: dict[str, tuple[str, Callable[[random.Random], str]]] | None = None,
    near: dict[str, Callable[[random.Random], str]] | None = None,
) -> Snippet:
    true = TRUE if true is None else true
    near = NEAR if near is None else near
    parts: list[str] = []
    spans: list[Span] = []
    pos = 0
    length = 0
    for m in _SLOT.finditer(template):
        literal = template[pos : m.start()]
        parts.append(literal)
        length += len(literal)
        pos = m.end()
        if m.group(0) in ("{{", "}}"):
            parts.append(m.group(0)[0])
            length += 1
            continue
        slot = m.group(1)
        if slot in true:
            kind, make = true[slot]
            value = make(rng)
            spans.append((kind, length, length + len(value)))
        else:
            value = near[slot](rng)
        parts.append(value)
        length += len(value)
    parts.append(template[pos:])
    return Snippet("".join(parts), spans)


def corpus(size: int, seed: int) -> list[Snippet]:
    rng = random.Random(seed)
    return [build(TEMPLATES[i % len(TEMPLATES)], rng) for i in range(size)]


# --- scoring ---------------------------------------------------------------------------------


@dataclass
class Score:
    tp: int = 0
    fn: int = 0
    found: int = 0  # findings that overlap a labelled span of their kind
    fp: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.found / (self.found + self.fp) if self.found + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def score(snippets: list[Snippet], predictions: list[list[Span]]) -> dict[str, Score]:
    scores = {kind: Score() for kind in KINDS}
    for snippet, predicted in zip(snippets, predictions, strict=True):
        for kind, start, end in snippet.spans:
            hit = any(k == kind and s < end and start < e for k, s, e in predicted)
            s = scores[kind]
            if hit:
                s.tp += 1
            else:
                s.fn += 1
                s.misses.append(f"FN {snippet.text[start:end]!r} in {snippet.text!r}")
        for kind, start, end in predicted:
            hit = any(k == kind and s < end and start < e for k, s, e in snippet.spans)
            s = scores[kind]
            if hit:
                s.found += 1
            else:
                s.fp += 1
                s.misses.append(f"FP {snippet.text[start:end]!r} in {snippet.text!r}")
    return scores


def timed(fn: Callable[[str], object], texts: Iterable[str], repeat: int) -> float:
    """The best CPU time of this process over ``repeat`` passes of ``fn`` over ``texts``: on a
    machine shared with other work, wall-clock time counts the waits for a core (the same work
    measured minutes apart swung by 2x); CPU time counts the work, for both pipelines alike."""
    texts = list(texts)
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for text in texts:
            fn(text)
        best = min(best, time.process_time() - start)
    return best


# --- the two pipelines -----------------------------------------------------------------------

ALL = tuple(DETECTORS)


def detect(detectors: tuple[str, ...]) -> Callable[[str], list[Finding]]:
    return functools.partial(find, detectors=detectors, phone_region="US")


def ours(text: str) -> list[Span]:
    return [(f.kind, f.start, f.end) for f in find(text, detectors=ALL, phone_region="US")]


def presidio_engine() -> Any:  # presidio_analyzer ships no type information
    # tldextract (used by the e-mail recognizer) tries to download the public suffix list and
    # logs a traceback when offline before falling back to its bundled copy: keep it quiet.
    logging.getLogger("tldextract").setLevel(logging.CRITICAL)
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import NoOpNlpEngine
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        EmailRecognizer,
        IbanRecognizer,
        IpRecognizer,
        PhoneRecognizer,
        UsSsnRecognizer,
    )

    registry = RecognizerRegistry(supported_languages=["en"])
    for recognizer in (
        CreditCardRecognizer(),
        IbanRecognizer(),
        EmailRecognizer(),
        PhoneRecognizer(),
        UsSsnRecognizer(),
        IpRecognizer(),
    ):
        registry.add_recognizer(recognizer)
    nlp = NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "none"}])
    engine = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=["en"])
    engine.analyze("warm up a@example.com 4111 1111 1111 1111", language="en")
    return engine


def presidio_spans(engine: Any, text: str, entities: list[str] | None = None) -> list[Span]:
    return [
        (PRESIDIO_KINDS[r.entity_type], r.start, r.end)
        for r in engine.analyze(text, language="en", entities=entities)
        if r.entity_type in PRESIDIO_KINDS
    ]


# --- report ----------------------------------------------------------------------------------


def table(
    title: str, scores: dict[str, Score], mbs: dict[str, float], kinds: Iterable[str]
) -> None:
    print(f"\n{title}")
    print(f"  {'kind':<7} {'tp':>5} {'fp':>5} {'fn':>5} {'precision':>9} {'recall':>7} {'MB/s':>8}")
    for kind in kinds:
        s = scores[kind]
        flag = "" if s.precision >= TARGET_PRECISION and s.recall >= TARGET_RECALL else "  <"
        print(
            f"  {kind:<7} {s.tp:>5} {s.fp:>5} {s.fn:>5} {s.precision:>9.4f} {s.recall:>7.4f}"
            f" {mbs.get(kind, float('nan')):>8.2f}{flag}"
        )
    print(f"  {'all':<7} {'':>5} {'':>5} {'':>5} {'':>9} {'':>7} {mbs['all']:>8.2f}")


def deltas_of(texts: list[str], seed: int) -> list[str]:
    """The corpus cut as a provider streams it: pieces of 5 to 50 characters."""
    rng = random.Random(seed)
    out = []
    for text in texts:
        i = 0
        while i < len(text):
            n = rng.randint(5, 50)
            out.append(text[i : i + n])
            i += n
    return out


def delta_sized(
    texts: list[str],
    seed: int,
    repeat: int,
    presidio_repeat: int,
    with_presidio: bool,
    engine: Any = None,
) -> int:
    """Throughput on delta-sized inputs (5-50 characters): the live filter redacts what it
    releases a few words at a time (conversations/live/holdback.py), so the cost per call
    matters more than the cost per byte. Ours: ``find`` and ``redact`` on each piece, and the
    hold-back itself (``hold`` over the pieces in order, each text its own block); Presidio's
    ``analyze`` on each piece."""
    from conversations.live.holdback import flush, hold

    pieces = deltas_of(texts, seed)
    megabytes = sum(len(p.encode()) for p in pieces) / 1e6
    find_mbs = megabytes / timed(detect(ALL), pieces, repeat)
    redact_mbs = megabytes / timed(
        functools.partial(redact, detectors=ALL, phone_region="US"), pieces, repeat
    )

    def held(_: str) -> None:
        pending = ""
        for piece in pieces:
            _out, pending = hold(pending, piece)
        flush(pending)

    hold_mbs = megabytes / timed(held, [""], max(1, repeat // 2))

    def per_delta(mbs: float) -> str:  # the mean cost of one delta, in microseconds
        return f"{megabytes / mbs / len(pieces) * 1e6:.1f} µs a delta"

    print(
        f"\ndelta-sized inputs: {len(pieces)} pieces of 5-50 characters, {megabytes:.3f} MB\n"
        f"  ours find:      {find_mbs:.2f} MB/s, {per_delta(find_mbs)}\n"
        f"  ours redact:    {redact_mbs:.2f} MB/s, {per_delta(redact_mbs)}\n"
        f"  ours hold-back: {hold_mbs:.2f} MB/s, {per_delta(hold_mbs)} "
        "(the live filter's path: hold, then flush)"
    )
    if not with_presidio:
        print("  Presidio: skipped")
        return 0
    try:
        engine = engine or presidio_engine()
    except ImportError:
        print("  Presidio: not installed (pip install -e '.[bench]')")
        return 0
    presidio_mbs = megabytes / timed(
        functools.partial(presidio_spans, engine), pieces, presidio_repeat
    )
    ratio = find_mbs / presidio_mbs
    print(
        f"  Presidio analyze: {presidio_mbs:.3f} MB/s, {per_delta(presidio_mbs)}\n"
        f"  ours find / Presidio on delta-sized inputs: {ratio:.1f}x "
        f"(target >= {TARGET_RATIO:.0f}x: {'met' if ratio >= TARGET_RATIO else 'NOT met'}); "
        f"redact / Presidio: {redact_mbs / presidio_mbs:.1f}x; "
        f"hold-back / Presidio: {hold_mbs / presidio_mbs:.1f}x"
    )
    return 0


def corpus_run(
    name: str,
    snippets: list[Snippet],
    repeat: int,
    presidio_repeat: int,
    engine: Any,
    *,
    per_kind: bool,
    misses: bool,
) -> tuple[float | None, list[str]]:
    """One corpus: our precision and recall per kind, the near-misses left alone, MB/s, and
    Presidio's on the same texts. Returns the ratio (None without Presidio) and what failed."""
    texts = [s.text for s in snippets]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    labelled = {k: sum(1 for s in snippets for span in s.spans if span[0] == k) for k in KINDS}
    plain = [t for t, s in zip(texts, snippets, strict=True) if not s.spans]
    print(
        f"\n=== {name}: {len(snippets)} snippets, {megabytes:.3f} MB; labelled: "
        + ", ".join(f"{k} {n}" for k, n in labelled.items())
    )
    predictions = [ours(t) for t in texts]
    our_scores = score(snippets, predictions)
    our_mbs: dict[str, float] = {}
    if per_kind:
        our_mbs = {kind: megabytes / timed(detect((kind,)), texts, repeat) for kind in KINDS}
    # "all" is detection (find), as Presidio's analyze is; redact adds the replacing.
    our_mbs["all"] = megabytes / timed(detect(ALL), texts, repeat)
    shared = tuple(k for k in ALL if k != "secret")  # the kinds Presidio has recognizers for
    shared_mbs = megabytes / timed(detect(shared), texts, repeat)
    redact_mbs = megabytes / timed(
        functools.partial(redact, detectors=ALL, phone_region="US"), texts, repeat
    )
    flagged = sum(1 for t in plain if find(t, detectors=ALL, phone_region="US"))
    table(f"ours (conversations.projection.redaction), {name}", our_scores, our_mbs, KINDS)
    print(f"  without secret (Presidio's six kinds): {shared_mbs:.2f} MB/s")
    print(f"  redact (find and replace), all kinds:  {redact_mbs:.2f} MB/s")
    print(
        f"  snippets without personal data (near-misses and plain text): {len(plain)}, "
        f"flagged {flagged} (near-miss precision {1 - flagged / max(1, len(plain)):.4f})"
    )
    if misses:
        for kind in KINDS:
            for line in our_scores[kind].misses:
                print(f"  {kind}: {line}")
    failing = [
        f"{name} {k}"
        for k in KINDS
        if our_scores[k].precision < TARGET_PRECISION or our_scores[k].recall < TARGET_RECALL
    ]
    if flagged:
        failing.append(f"{name} near-misses")
    if engine is None:
        return None, failing
    presidio_predictions = [presidio_spans(engine, t) for t in texts]
    presidio_scores = score(snippets, presidio_predictions)
    presidio_mbs = {
        "all": megabytes / timed(functools.partial(presidio_spans, engine), texts, presidio_repeat)
    }
    if per_kind:
        for entity, kind in PRESIDIO_KINDS.items():
            presidio_mbs[kind] = megabytes / timed(
                functools.partial(presidio_spans, engine, entities=[entity]), texts, 1
            )
    table(
        f"Presidio pattern recognizers (NoOpNlpEngine; no secret recognizer), {name}",
        presidio_scores,
        presidio_mbs,
        [k for k in KINDS if k != "secret"],
    )
    ratio = our_mbs["all"] / presidio_mbs["all"]
    print(
        f"  {name}: ours (7 kinds) / Presidio (6 kinds) {ratio:.1f}x; "
        f"on the same six kinds {shared_mbs / presidio_mbs['all']:.1f}x"
    )
    if ratio < TARGET_RATIO:
        failing.append(f"{name} ratio")
    return ratio, failing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snippets", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--quick", action="store_true", help="600 snippets, one timing pass")
    parser.add_argument("--misses", action="store_true", help="print every FP and FN of ours")
    parser.add_argument("--no-presidio", action="store_true", help="skip the baseline")
    parser.add_argument(
        "--deltas-only", action="store_true", help="only the delta-sized inputs (live streams)"
    )
    args = parser.parse_args(argv)
    size = 600 if args.quick else args.snippets
    repeat = 1 if args.quick else 5  # best of: ours is fast enough to be timed repeatedly
    presidio_repeat = 1 if args.quick else 2

    from bench import redaction_chat

    snippets = corpus(size, args.seed)
    texts = [s.text for s in snippets]
    if args.deltas_only:
        return delta_sized(texts, args.seed, repeat, presidio_repeat, not args.no_presidio)
    engine = None if args.no_presidio else presidio_engine()
    corpora = (
        ("project corpus", snippets, True),
        ("support-chat corpus", redaction_chat.corpus(size, args.seed), False),
    )
    ratios: dict[str, float | None] = {}
    failing: list[str] = []
    for name, corpus_snippets, per_kind in corpora:
        ratio, failed = corpus_run(
            name,
            corpus_snippets,
            repeat,
            presidio_repeat,
            engine,
            per_kind=per_kind,
            misses=args.misses,
        )
        ratios[name] = ratio
        failing += failed
    if engine is not None:
        delta_sized(texts, args.seed, repeat, presidio_repeat, True, engine=engine)
    print()
    for name, ratio in ratios.items():
        if ratio is not None:
            print(
                f"throughput ours / Presidio, {name}: {ratio:.1f}x "
                f"(target >= {TARGET_RATIO:.0f}x: {'met' if ratio >= TARGET_RATIO else 'NOT met'})"
            )
    print(
        "precision and recall 1.00 for every kind, near-misses left alone, on both corpora: "
        + ("met" if not [f for f in failing if not f.endswith("ratio")] else "NOT met")
    )
    if failing:
        print(f"failing: {', '.join(failing)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
