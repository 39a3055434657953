"""The one redaction pipeline (DESIGN section 4): transcripts, tool trail and reasoning summaries.

``redact(text)`` replaces what the enabled detectors find with a placeholder that keeps the kind
and a hint (``[card ••4242]``, ``[email]``, ``[secret sk-ant-…]``); ``find(text)`` returns the
findings themselves (kind, start, end, hint); ``redact_value(value)`` redacts every string
inside a JSON value.

Each detector finds *candidates* cheaply and confirms them with a validator made for the job
(Luhn and issuer ranges for cards, ``stdnum.iban`` for IBANs, ``phonenumbers`` for phones,
``ipaddress`` for IPv6). Candidates come from one shared pass over the runs of digits (cards,
phones, SSNs, IPv4), from substring searches ("@" for e-mail, key prefixes for secrets) or from
one anchored regex (IBANs), behind a prefilter per detector that answers "cannot contain one"
from what the scan found once (no digit run: no card, phone or SSN; no digit or no capital: no
IBAN; no trigger: no secret), each prefilter asked once per text, so plain text and most live
deltas cost a few regex searches. The dear validations (phonenumbers, stdnum's IBAN formats)
are not memoised: a memo would keep customers' phone numbers and IBANs in the process, out of
reach of an erasure. When findings overlap, the longest wins; on equal
spans, the detector registered first (the order below). ``redact`` then looks again where a
replacement changed its neighbours' context, so that redacting twice gives what once gave.

Which detectors run is a deployment setting, ``REDACTION_DETECTORS`` (names; empty means all);
phone numbers written without a country code are read in ``REDACTION_PHONE_REGION``. The
functions are pure: Django settings are read only when no explicit detectors or region are given,
and only if settings are configured (otherwise: every detector, region "US"), so the module runs
without Django (``bench/redaction.py``).

The package: ``base.py`` (findings, options, the scan, the registry), one module per family of
detectors (``secrets.py``, ``numbers.py``: cards, IBANs, SSNs; ``contact.py``: e-mail, phones;
``network.py``: IPs) and ``pipeline.py`` (their order, the settings, ``find``/``redact``).

To add a detector: write ``_scan_<name>(scan: Scan)`` in the module of its family, returning
(or yielding) ``Finding("<name>", start, end, hint)`` with a hint that reveals nothing sensitive
(use ``scan.runs`` if it reads numbers), a prefilter that answers "cannot contain one" in one
cheap test (never where the scan would find one: ``test_prefilters_skip_nothing`` runs every
detector on every text and compares), and ``register(Detector(...))`` it in ``pipeline.py`` with
its placeholder (its position sets its priority on equal spans). Placeholders start with "[" and
end with "]", which no detector may match. Then add its cases to
``tests/conversations/test_redaction.py`` (found, and near-misses left alone) and its kind to the
labelled corpus of ``bench/redaction.py``.
"""

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
