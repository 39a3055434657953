"""The pipeline: the detectors in their order of priority, their choice per deployment, and
``find`` / ``redact`` / ``redact_value``.

The choice (detectors, region, the scans grouped by prefilter) is checked and built once per
distinct arguments or settings and kept (``_Choice``): a call on a live delta of 25 characters
should cost microseconds, and checking names and regions on every call was a sizeable part of
that."""

from __future__ import annotations

import bisect
import operator
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import phonenumbers

from .base import (
    DEFAULT_PHONE_REGION,
    DETECTORS,
    DIGIT_RUNS,
    RANK,
    Detector,
    Finding,
    Options,
    Scan,
    UnknownDetectorError,
    has_runs,
    register,
)
from .contact import EMAIL_CANDIDATE, _scan_email, _scan_phone
from .engine import Engine, engine_for
from .network import IPV6_CANDIDATE, _ip_prefilter, _scan_ip
from .numbers import (
    IBAN_CANDIDATE,
    SSN_LABEL_CANDIDATE,
    _card_ok,
    _iban_prefilter,
    _scan_card,
    _scan_iban,
    _scan_ssn,
)
from .secrets import SECRET_CANDIDATE, _scan_secret, _secret_prefilter


def _has_at(scan: Scan) -> bool:
    return "email" in scan.hits


# The detectors, in their order of priority on equal spans, each with its candidates in the one
# pass (engine.py).
register(
    Detector("secret", _secret_prefilter, _scan_secret, "[secret {hint}…]", (SECRET_CANDIDATE,))
)
register(Detector("card", has_runs, _scan_card, "[card ••{hint}]", (DIGIT_RUNS,)))
register(Detector("iban", _iban_prefilter, _scan_iban, "[iban ••{hint}]", (IBAN_CANDIDATE,)))
register(Detector("email", _has_at, _scan_email, "[email]", (EMAIL_CANDIDATE,)))
register(Detector("ssn", has_runs, _scan_ssn, "[ssn]", (DIGIT_RUNS, SSN_LABEL_CANDIDATE)))
register(Detector("ip", _ip_prefilter, _scan_ip, "[ip]", (DIGIT_RUNS, IPV6_CANDIDATE)))
register(Detector("phone", has_runs, _scan_phone, "[phone ••{hint}]", (DIGIT_RUNS,)))


# --- the pipeline ---------------------------------------------------------------------------


def enabled_detectors() -> tuple[str, ...]:
    """The detectors this deployment runs: ``settings.REDACTION_DETECTORS``, empty meaning all."""
    return _enabled(getattr(_settings(), "REDACTION_DETECTORS", None) or ())


def _enabled(names: Iterable[str] | str) -> tuple[str, ...]:
    from django.core.exceptions import ImproperlyConfigured

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


@lru_cache(maxsize=1)
def _settings() -> Any:
    """``django.conf.settings``, imported on first use (the module runs without Django)."""
    from django.conf import settings

    return settings


_configured = False  # settings once configured stay so: no need to ask again


def _settings_configured() -> bool:
    global _configured
    if not _configured:
        _configured = _settings().configured
    return _configured or bool(os.environ.get("DJANGO_SETTINGS_MODULE"))


def _settings_region() -> str:
    return _region_setting(getattr(_settings(), "REDACTION_PHONE_REGION", None))


def _region_setting(region: str | None) -> str:
    from django.core.exceptions import ImproperlyConfigured

    try:
        return _check_region(region or DEFAULT_PHONE_REGION)
    except ValueError as exc:
        raise ImproperlyConfigured(f"REDACTION_PHONE_REGION: {exc}") from None


@dataclass(frozen=True, slots=True, eq=False)  # eq=False: hashed by identity, cheaply
class _Choice:
    """What one call runs: the detectors and the options."""

    detectors: tuple[Detector, ...]
    options: Options
    engine: Engine  # the one pass over the chosen detectors' candidates
    # The detectors' scans grouped by prefilter, each prefilter asked once per text ("has a
    # digit run" serves cards, SSNs and phones). The order of the candidates does not matter:
    # overlaps are resolved by span, length and rank.
    steps: tuple[
        tuple[Callable[[Scan], bool], tuple[Callable[[Scan], Iterable[Finding]], ...]], ...
    ]


@lru_cache(maxsize=256)
def _choice(names: tuple[str, ...], phone_region: str) -> _Choice:
    chosen = tuple(DETECTORS[n] for n in check_detectors(names))
    return _choice_of(chosen, Options(phone_region=phone_region))


def _choice_of(chosen: tuple[Detector, ...], options: Options) -> _Choice:
    steps: dict[Callable[[Scan], bool], list[Callable[[Scan], Iterable[Finding]]]] = {}
    for d in chosen:
        steps.setdefault(d.prefilter, []).append(d.scan)
    return _Choice(
        chosen,
        options,
        engine_for(tuple(c for d in chosen for c in d.candidates)),
        tuple((prefilter, tuple(scans)) for prefilter, scans in steps.items()),
    )


def _resolve(detectors: Iterable[str] | None, phone_region: str | None) -> _Choice:
    # The choice is checked once per distinct arguments (or settings), not on every call.
    if isinstance(detectors, (tuple, str)) and isinstance(phone_region, str):
        return _resolve_explicit(detectors, phone_region)
    if detectors is None and phone_region is None:  # the deployment's (the live filter's)
        if not _settings_configured():
            return _resolve_explicit(tuple(DETECTORS), DEFAULT_PHONE_REGION)
        settings = _settings()
        names = getattr(settings, "REDACTION_DETECTORS", None) or ()
        return _resolve_settings(
            names if isinstance(names, str) else tuple(names),
            getattr(settings, "REDACTION_PHONE_REGION", None),
            tuple(DETECTORS),
        )
    return _resolve_checked(detectors, phone_region)


@lru_cache(maxsize=64)
def _resolve_settings(
    names: tuple[str, ...] | str, region: str | None, known: tuple[str, ...]
) -> _Choice:
    # ``known``: the registry's names, in the key because empty settings mean all of them.
    return _choice(_enabled(names), _region_setting(region))


@lru_cache(maxsize=256)
def _resolve_explicit(detectors: tuple[str, ...] | str, phone_region: str) -> _Choice:
    return _resolve_checked(detectors, phone_region)


def _resolve_checked(detectors: Iterable[str] | None, phone_region: str | None) -> _Choice:
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
    return _choice(names, phone_region)


def find(
    text: str, *, detectors: Iterable[str] | None = None, phone_region: str | None = None
) -> list[Finding]:
    """What the detectors find in ``text``, without overlaps, in text order.

    ``detectors``: names from ``DETECTORS`` (default: ``enabled_detectors()``, or all of them
    when Django settings are not configured). ``phone_region``: the region national phone
    numbers are read in (default: ``settings.REDACTION_PHONE_REGION``, else "US").
    """
    return _resolved(text, _resolve(detectors, phone_region))[0]


# A finding joined to more digits by a run's separators ("... 1111 12/27"): once replaced,
# those digits start a run of their own. Or glued to a character that a detector's boundary
# test looks at ("0::G@0.AA": "0::" is no address while "G" follows it, and is one before "[");
# blanks, quotes, brackets, "=", ";" and a full stop that ends a sentence are looked at by none.
_RUN_BEFORE = re.compile(r"(?:\d[ \-.()/]{0,3}|[\w+\-@%$#€£]|\w[./]|[0-9A-Fa-f:]:)$")
_RUN_AFTER = re.compile(r"[ \-.()/]{0,3}\+?\d|[,.:/]\w|::|[\w+\-@%$#€£]")
_BY_SPAN = operator.itemgetter(1, 2)  # Finding.start, Finding.end


def _resolved(text: str, choice: _Choice) -> tuple[list[Finding], bool]:
    """The findings without overlaps, and whether overlapping candidates were dropped."""
    if not text:
        return [], False
    scan = Scan(text, choice.options, choice.engine)
    candidates: list[Finding] = []
    for prefilter, scans in choice.steps:
        if prefilter(scan):
            for detector_scan in scans:
                candidates += detector_scan(scan)
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
    rank = RANK.get
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
    return _redact(text, _resolve(detectors, phone_region))


def _redact(text: str, choice: _Choice) -> str:
    findings, dropped = _resolved(text, choice)
    if not findings:
        return text  # the usual answer (``dropped`` implies findings kept)
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
        findings, dropped = _resolved(text, choice)
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
    choice = _resolve(detectors, phone_region)
    card = DETECTORS["card"] in choice.detectors

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return _redact(v, choice)
        if isinstance(v, dict):
            return {k: walk(item) for k, item in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(item) for item in v]
        if card and isinstance(v, int) and not isinstance(v, bool) and _card_ok(str(v)):
            return placeholder(Finding("card", 0, len(str(v)), str(v)[-4:]))
        return v

    return walk(value)
