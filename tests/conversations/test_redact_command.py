"""``manage.py redact``: standard input redacted line by line, with the configured detectors or
``--detectors``, findings on standard error, and a clear error for an unknown detector."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

INPUT = (
    "My card 4111 1111 1111 1111 was charged twice for ORD-8812345\n"
    "mail me at maria.garcia@example.com or call (415) 555-2671\n"
    "nothing to see here\n"
    "login from 203.0.113.45"  # no newline at the end: none is added
)


def run(*args: str, stdin: str, **options: Any) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("redact", *args, stdin=io.StringIO(stdin), stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def test_each_line_is_redacted_with_all_detectors_by_default() -> None:
    out, err = run(stdin=INPUT)
    assert out == (
        "My card [card ••1111] was charged twice for ORD-8812345\n"
        "mail me at [email] or call [phone ••71]\n"
        "nothing to see here\n"
        "login from [ip]"
    )
    assert err == ""


def test_detectors_option_overrides_the_setting() -> None:
    with override_settings(REDACTION_DETECTORS=["ip"]):
        out, _ = run("--detectors", "card,email", stdin=INPUT)
    assert out.splitlines() == [
        "My card [card ••1111] was charged twice for ORD-8812345",
        "mail me at [email] or call (415) 555-2671",
        "nothing to see here",
        "login from 203.0.113.45",
    ]


@override_settings(REDACTION_DETECTORS=["phone"])
def test_the_setting_chooses_the_detectors() -> None:
    out, _ = run(stdin=INPUT)
    assert "[phone ••71]" in out and "4111 1111 1111 1111" in out and "203.0.113.45" in out


def test_show_findings_writes_kind_and_span_to_stderr() -> None:
    _, err = run("--show-findings", stdin=INPUT)
    assert err.splitlines() == [
        "1:8-27 card",
        "2:11-35 email",
        "2:44-58 phone",
        "4:11-23 ip",
    ]
    assert "4111" not in err and "maria" not in err  # spans only, never the values


def test_unknown_detector_is_a_command_error() -> None:
    with pytest.raises(CommandError, match=r"unknown detector 'cards'; known: secret, card"):
        run("--detectors", "cards,email", stdin=INPUT)


@override_settings(REDACTION_DETECTORS=["card", "bogus"])
def test_unknown_detector_in_the_setting_is_a_command_error() -> None:
    with pytest.raises(CommandError, match="REDACTION_DETECTORS: unknown detector 'bogus'"):
        run(stdin=INPUT)


def test_empty_detectors_option_is_refused() -> None:
    with pytest.raises(CommandError, match="at least one detector"):
        run("--detectors", " , ", stdin=INPUT)


class LineByLine(io.StringIO):
    """Standard input that records how much output had been written when each line was read."""

    def __init__(self, lines: list[str], out: io.StringIO) -> None:
        super().__init__("".join(lines))
        self.out = out
        self.seen: list[str] = []

    def __iter__(self) -> LineByLine:
        return self

    def __next__(self) -> str:
        self.seen.append(self.out.getvalue())
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def test_each_line_is_written_before_the_next_is_read() -> None:
    out = io.StringIO()
    stdin = LineByLine(["a@example.com\n", "10.0.0.1\n", "done\n"], out)
    call_command("redact", stdin=stdin, stdout=out, stderr=io.StringIO())
    assert stdin.seen == ["", "[email]\n", "[email]\n[ip]\n", "[email]\n[ip]\ndone\n"]


def test_a_private_key_spanning_lines_is_withheld_whole() -> None:
    begin, end = "-----BEGIN " + "PRIVATE KEY-----", "-----END " + "PRIVATE KEY-----"
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
    out, _ = run(stdin=f"before\n{begin}\n{body}\n{body[:20]}\n{end}\nafter 10.0.0.1\n")
    assert out.splitlines() == [
        "before",
        "[secret PRIVATE KEY…]",
        "[secret PRIVATE KEY…]",
        "[secret PRIVATE KEY…]",
        "[secret PRIVATE KEY…]",
        "after [ip]",
    ]


def test_windows_line_endings_are_kept() -> None:
    out, _ = run(stdin="a@example.com\r\nplain\r\n")
    assert out == "[email]\r\nplain\r\n"
