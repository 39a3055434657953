"""Secrets: API keys and tokens by their documented prefixes, authorization headers and
assignments to secret-sounding names."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .base import (
    DIGIT,
    Finding,
    Scan,
)
from .engine import Candidate

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


# Its candidates in the one pass: every trigger, in any case (the family's or context's own
# pattern confirms at the trigger's offset).
SECRET_CANDIDATE = Candidate(
    "secret",
    "|".join(re.escape(t) for t in sorted({*_FAMILIES_BY_TRIGGER, *_CONTEXT_TRIGGERS})),
    caseless=True,
)


def _triggers(scan: Scan) -> Iterator[tuple[str, int]]:
    """The triggers of the text (lower case) and their offsets, in text order. A trigger is read
    off the stand-in (engine.py): a character that matches an ASCII letter in any case is it."""
    folded = scan.folded
    for start, end in scan.hits.get("secret", ()):
        yield folded(start, end), start


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
        if prefix == "sk-" and not DIGIT.search(m.group("body")):
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
    if pattern is _AUTH_HEADER or DIGIT.search(value):
        return True
    return pattern is _ASSIGNMENT and not _WORDLIKE.fullmatch(value)


def _secret_prefilter(scan: Scan) -> bool:
    """Whether the one pass found a trigger."""
    return "secret" in scan.hits
