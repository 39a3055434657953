"""The one redaction pipeline (DESIGN section 4): transcripts, tool trail and reasoning summaries.

``redact(text)`` replaces what the enabled detectors find with a placeholder that keeps the kind
and a hint (``[card ••4242]``, ``[email]``, ``[secret sk-ant-…]``); ``find(text)`` returns the
findings themselves (kind, start, end, hint); ``redact_value(value)`` redacts every string
inside a JSON value.

Each detector finds *candidates* cheaply and confirms them with a validator made for the job (Luhn
and issuer ranges for cards, ``stdnum``'s IBAN formats for IBANs, ``phonenumbers`` for phones,
``ipaddress`` for IPv6). The candidates of every detector come from one Hyperscan pass over the text
(``engine.py``: each detector declares its ``Candidate`` patterns in the registry, the engine
compiles those of the chosen detectors into one database): the digit runs that cards, phones, SSNs
and IPv4 read, country codes with check digits for IBANs, "@" between a local and a domain
character, the literal triggers of secrets and labelled SSNs, "x:y:" for IPv6. Each detector then
runs its Python regex at its candidates' offsets only, and its validator on what that regex
confirms; a prefilter per detector answers "cannot contain one" from the pass's hits (no candidate
of its own), so plain text and most live deltas cost one scan. The dear validations (phonenumbers,
the IBAN formats) are not memoised: a memo would keep customers' phone numbers and IBANs in the
process, out of reach of an erasure. When findings overlap, the longest wins; on equal spans, the
detector registered first (the order below). ``redact`` then looks again where a replacement changed
its neighbours' context, so that redacting twice gives what once gave.

Which detectors run is a deployment setting, ``REDACTION_DETECTORS`` (names; empty means all);
phone numbers written without a country code are read in ``REDACTION_PHONE_REGION``. The
functions are pure: Django settings are read only when no explicit detectors or region are given,
and only if settings are configured (otherwise: every detector, region "US"), so the module runs
without Django (``bench/redaction.py``).

The package: ``engine.py`` (the one pass), ``base.py`` (findings, options, the scan, the
registry), one module per family of
detectors (``secrets.py``, ``numbers.py``: cards, IBANs, SSNs; ``contact.py``: e-mail, phones;
``network.py``: IPs) and ``pipeline.py`` (their order, the settings, ``find``/``redact``).

To add a detector: write ``_scan_<name>(scan: Scan)`` in the module of its family, returning (or
yielding) ``Finding("<name>", start, end, hint)`` with a hint that reveals nothing sensitive (use
``scan.runs`` if it reads numbers; else its own candidates, ``scan.hits["<candidate>"]``, declared
as ``Candidate`` patterns in Hyperscan's syntax that match wherever its regex can, a test in
``tests/conversations/test_redaction_engine.py`` holding them a superset), a prefilter that answers
"cannot contain one" in one cheap test (never where the scan would find one:
``test_prefilters_skip_nothing`` runs every detector on every text and compares), and
``register(Detector(...))`` it in ``pipeline.py`` with its placeholder (its position sets its
priority on equal spans). Placeholders start with "[" and end with "]", which no detector may match.
Then add its cases to ``tests/conversations/test_redaction.py`` (found, and near-misses left alone)
and its kind to the labelled corpus of ``bench/redaction.py``."""

from __future__ import annotations

from .base import DETECTORS, Detector, Finding, Options, UnknownDetectorError
from .base import RANK as _RANK  # noqa: F401  (the detectors' priority; tests adjust it)
from .pipeline import (
    apply_findings,
    check_detectors,
    enabled_detectors,
    find,
    placeholder,
    redact,
    redact_value,
)

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
