"""The one pass of the redaction pipeline (conversations/projection/redaction/engine.py): the
candidates of the Hyperscan scan cover every place each detector's own Python regex matches (a
superset, exact for the digit runs), each kind's candidates reach that kind's validator and no
other, offsets stay the text's own beyond ASCII, concurrent scans keep their own scratch, and
the IBAN check gives what stdnum gives.

Secrets are assembled at run time, as in test_redaction.py.
"""

from __future__ import annotations

import re
import string
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from stdnum import iban as stdnum_iban
from stdnum import numdb

from conversations.projection.redaction import DETECTORS, Finding, Options, find, redact
from conversations.projection.redaction.base import NUM_RUN, Scan
from conversations.projection.redaction.contact import _EMAIL_DOMAIN, _EMAIL_LOCAL
from conversations.projection.redaction.engine import Candidate, Engine, stand_in
from conversations.projection.redaction.network import _IPV4, _IPV6
from conversations.projection.redaction.numbers import (
    _CARD_STRETCH,
    _IBAN_RUN,
    _SSN,
    _SSN_LABELLED,
    _iban_valid,
)
from conversations.projection.redaction.secrets import _CONTEXT_TRIGGERS, _FAMILIES_BY_TRIGGER

# Characters beyond ASCII that each stand for something else in the stand-in: a letter, an
# Arabic-Indic digit, the Kelvin sign and the long s (they fold to ASCII letters), a letter
# whose lower case is longer ("İ"), one whose folding is two letters ("ß"), an astral emoji, a
# no-break space, a full-width digit, Japanese.
UNICODE = ["é", "٤", "\u212a", "\u017f", "İ", "ß", "😀", "\u00a0", "\uff15", "電話"]
TOKENS = [
    "4111 1111 1111 1111",
    "(415) 555-2671",
    "+44 20 7946 0958",
    "123-45-6789",
    "ssn ",
    "SOCIAL SECURITY ",
    "123456789",
    "a@example.com",
    "josé@exämple.de",
    "@",
    "10.0.0.1",
    "2001:db8::1",
    "fe80::",
    "::",
    ":",
    "GB82 WEST 1234 5698 7654 32",
    "DE89370400440532013000",
    "GB82",
    "sk-",
    "SK_" + "LIVE_",
    "password: ",
    "Bearer ",
    "Authorization: ",
    "token=",
    "xoxox",
    "eyJ",
    "-----BEGIN PRIVATE KEY-----",
    " ",
    "\n",
    ".",
    "-",
    "(",
    "0",
    "7",
    "A",
    "Z",
    "_",
    *UNICODE,
]
ARABIC_INDIC = str.maketrans("0123456789", "".join(chr(0x660 + i) for i in range(10)))
texts = st.lists(st.sampled_from(TOKENS) | st.text(max_size=4), max_size=16).map("".join)
PROPERTIES = settings(max_examples=300, deadline=None)


def _hit_starts(text: str, name: str) -> set[int]:
    return {start for start, _ in Scan(text, Options()).hits.get(name, ())}


@PROPERTIES
@given(texts)
@example("İ 4111 1111 1111 1111")
@example("é4111111111111111 ٤٤٤-٤٤-٤٤٤٤")
@example("4111111111111111")
def test_digit_runs_are_exactly_those_of_num_run(text: str) -> None:
    assert Scan(text, Options()).runs == [m.span() for m in NUM_RUN.finditer(text)]


@PROPERTIES
@given(texts)
@example("éGB82WEST12345698765432")
@example("٤GB82 WEST 1234 5698 7654 32")
def test_iban_candidates_cover_every_iban_run(text: str) -> None:
    runs = {p for p in range(len(text)) if _IBAN_RUN.match(text, p)}
    assert runs <= _hit_starts(text, "iban")


@PROPERTIES
@given(texts)
@example("josé@exämple.de")
@example("٤@٤x.de")
@example("a@@b.co")
def test_email_candidates_cover_every_at_with_a_local_part_and_a_domain(text: str) -> None:
    ats = {
        at
        for at, c in enumerate(text)
        if c == "@"
        and _EMAIL_LOCAL.search(text, max(0, at - 64), at)
        and _EMAIL_DOMAIN.match(text, at + 1)
    }
    assert ats <= _hit_starts(text, "email")


@PROPERTIES
@given(texts)
@example("to\u212aen=abc12345")  # the Kelvin sign: lower() makes it "k"
@example("İ sk-ant-aZ3kQ9xR2mT7vW1pL8sN4bY6")  # the lower-cased text is longer
@example("xoxoxb-")
def test_secret_candidates_cover_every_trigger(text: str) -> None:
    triggers = {*_FAMILIES_BY_TRIGGER, *_CONTEXT_TRIGGERS}
    lower = text.lower()
    if len(lower) == len(text):
        found = {p for p in range(len(text)) for t in triggers if lower.startswith(t, p)}
    else:
        pattern = re.compile("|".join(map(re.escape, triggers)), re.IGNORECASE)
        found = {m.start() for m in pattern.finditer(text)}
    assert found <= _hit_starts(text, "secret")


@PROPERTIES
@given(texts)
@example("\u017fsn 123456789")  # the long s folds to "s": Python's (?i) reads "ssn"
@example("SOCIAL SECURITY 123456789")
def test_ssn_label_candidates_cover_every_labelled_ssn(text: str) -> None:
    labelled = {p for p in range(len(text)) if _SSN_LABELLED.match(text, p)}
    assert labelled <= _hit_starts(text, "ssn-label")


@PROPERTIES
@given(texts)
@example("2001:db8::1")
@example("1:abcde:2:3:4:5:6")
def test_an_ipv6_match_always_has_a_candidate(text: str) -> None:
    if any(_IPV6.match(text, p) for p in range(len(text))):
        assert "ipv6" in Scan(text, Options()).hits


@PROPERTIES
@given(texts)
@example("4111 1111 1111 1111")
@example("٤١١١١١١١١١١١١١١١")  # other scripts' digits: "5" in the stand-in
@example("123-45-6789 and 10.0.0.1")
@example("123-45-6789 10.0.0.1".translate(ARABIC_INDIC))
def test_presence_candidates_cover_cards_ssns_and_dotted_quads(text: str) -> None:
    # The card, SSN and IP prefilters ask only whether the pass saw one of these shapes.
    hits = Scan(text, Options()).hits
    assert _CARD_STRETCH.search(text) is None or "card" in hits
    assert _SSN.search(text) is None or "ssn" in hits
    assert _IPV4.search(text) is None or "ipv4" in hits


def test_stand_in_keeps_one_byte_a_character() -> None:
    text = "".join(UNICODE) + " 4111"
    standin = stand_in(text)
    assert len(standin) == 1 + len(text)
    # " ", é (Latin-1, as it is), ٤ (a digit), Kelvin -> k, long s -> s, İ -> i, ß (Latin-1)
    assert standin[:7] == b" \xe95ksi\xdf"
    assert stand_in("plain ascii") == b" plain ascii"


def test_stand_in_table_is_pythons_reading() -> None:
    # Every code point beyond ASCII: a decimal digit stands in as a digit, a character that
    # Python's case-insensitive matching takes for an ASCII letter as that letter, anything
    # else as a byte no pattern takes for a word character (a superset: the Python regex
    # decides on the real text).
    letter = re.compile(r"(?i)[a-z]")
    for code in range(0x80, 0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        byte = stand_in(char)[1:]
        assert len(byte) == 1, hex(code)
        if char.isdecimal():
            assert byte.isdigit(), hex(code)
        elif letter.fullmatch(char):
            assert byte.isalpha() and re.fullmatch(f"(?i){byte.decode()}", char), hex(code)
        else:
            assert not byte.isalnum() and byte != b"_", hex(code)


# --- offsets beyond ASCII ------------------------------------------------------------------------

UNICODE_TEXT = (
    "😀 İstanbul: kart 4111 1111 1111 1111, e-posta josé.müller@exämple.de, "
    "電話 +81 3-1234-5678 、IBAN DE89 3704 0044 0532 0130 00 ve \u017fsn 123-45-6789. "
    "IP 2001:db8::8a2e:370:7334 — Kundennummer 40119378 am 29.11.2026 (1.234,56 €)."
)


def test_offsets_are_the_texts_own_beyond_ascii() -> None:
    found = [(f.kind, UNICODE_TEXT[f.start : f.end]) for f in find(UNICODE_TEXT)]
    assert found == [
        ("card", "4111 1111 1111 1111"),
        ("email", "josé.müller@exämple.de"),
        ("phone", "+81 3-1234-5678"),
        ("iban", "DE89 3704 0044 0532 0130 00"),
        ("ssn", "123-45-6789"),
        ("ip", "2001:db8::8a2e:370:7334"),
    ]
    assert redact(UNICODE_TEXT) == (
        "😀 İstanbul: kart [card ••1111], e-posta [email], "
        "電話 [phone ••78] 、IBAN [iban ••3000] ve \u017fsn [ssn]. "
        "IP [ip] — Kundennummer 40119378 am 29.11.2026 (1.234,56 €)."
    )


# --- each kind's candidates reach its own validator ---------------------------------------------

KEY = "ghp_" + "aZ3kQ9xR2mT7vW1pL8sN4bY6cH0dJ5fG0123"
MIXED = (
    f"a@example.com wrote from 10.0.0.1: pay GB82 WEST 1234 5698 7654 32 with "
    f"4111 1111 1111 1111, ssn 123-45-6789, call (415) 555-2671, token {KEY}, "
    "order 4111111111111112 on 2026-11-29 at 12:30:45, v1.2.3.4, dead::beef"
)
EXPECTED = {
    "email": ["a@example.com"],
    "ip": ["10.0.0.1"],
    "iban": ["GB82 WEST 1234 5698 7654 32"],
    "card": ["4111 1111 1111 1111"],
    "ssn": ["123-45-6789"],
    "phone": ["(415) 555-2671"],
    "secret": [KEY],
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_detector_alone_finds_its_own_and_nothing_else(kind: str) -> None:
    # One engine per choice: a detector chosen alone gets only its candidates; were the hits of
    # one kind handed to another's validator, this or the whole list below would differ.
    found = find(MIXED, detectors=[kind])
    assert [MIXED[f.start : f.end] for f in found] == EXPECTED[kind]
    assert {f.kind for f in found} == {kind}


def test_all_detectors_together_find_each_once() -> None:
    found = find(MIXED)
    assert sorted((f.kind, MIXED[f.start : f.end]) for f in found) == sorted(
        (kind, value) for kind, values in EXPECTED.items() for value in values
    )


def test_overlapping_candidates_of_two_kinds_go_to_the_longest_finding() -> None:
    # The digits of the e-mail's local part are a phone-shaped digit run, and a card-shaped one
    # sits inside the IBAN's BBAN: both kinds get candidates, the longer finding wins each span;
    # without the e-mail and IBAN detectors, the phone and the card are what is left.
    bban = "4111111111111111" + "00"
    compact = "DE" + stdnum_iban.calc_check_digits("DE00" + bban) + bban
    grouped = " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    text = f"4155552671@example.com and {grouped}"
    assert [(f.kind, text[f.start : f.end]) for f in find(text)] == [
        ("email", "4155552671@example.com"),
        ("iban", grouped),
    ]
    assert [(f.kind, text[f.start : f.end]) for f in find(text, detectors=["phone", "card"])] == [
        ("phone", "4155552671"),
        ("card", "4111 1111 1111 1111"),
    ]


def test_a_detector_without_candidates_still_scans(monkeypatch: pytest.MonkeyPatch) -> None:
    from conversations.projection import redaction

    def scan_word(scan: Scan) -> list[Finding]:
        at = scan.text.find("word")
        return [Finding("bare_word", at, at + 4, "")] if at >= 0 else []

    # A name of its own: the choices are cached by the detectors' names, and another test
    # registers a detector called "word" with other rules.
    word = redaction.Detector("bare_word", lambda scan: True, scan_word, "[word]")
    monkeypatch.setitem(redaction.DETECTORS, "bare_word", word)
    monkeypatch.setitem(redaction._RANK, "bare_word", len(redaction._RANK))
    got = redact("a word and a@example.com", detectors=["bare_word", "email"])
    assert got == "a [word] and [email]"


def test_one_name_one_pattern() -> None:
    with pytest.raises(ValueError, match="'digits' defined twice"):
        Engine([Candidate("digits", "[0-9]"), Candidate("digits", "[0-9]{2}")])


def test_concurrent_scans_each_use_their_own_scratch() -> None:
    # Hyperscan's scratch may not be shared by scans at the same time, and the binding lets
    # go of the GIL while it scans: threads that shared one would fail or mix their hits.
    from bench.redaction_chat import corpus

    inputs = [s.text for s in corpus(300, seed=3)]
    alone = [find(t) for t in inputs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):
            assert list(pool.map(find, inputs)) == alone


# --- the IBAN check is stdnum's -----------------------------------------------------------------

COUNTRIES = sorted(
    cc
    for cc in ("GB", "DE", "FR", "NL", "BE", "ES", "NO", "ME", "IT", "PL", "CH", "SE", "TR")
    if numdb.get("iban").info(cc)[0][1]
)


@st.composite
def ibans(draw: st.DrawFn) -> str:
    """A compact IBAN of a known country with the right length, right check digits more often
    than not, then perhaps one character changed."""
    country = draw(st.sampled_from(COUNTRIES))
    bban = numdb.get("iban").info(country)[0][1]["bban"]
    body = ""
    for count, kind in re.findall(r"(\d+)!([nac])", bban):
        alphabet = {"n": string.digits, "a": string.ascii_uppercase}.get(
            kind, string.digits + string.ascii_uppercase
        )
        body += "".join(
            draw(st.lists(st.sampled_from(alphabet), min_size=int(count), max_size=int(count)))
        )
    number = country + stdnum_iban.calc_check_digits(country + "00" + body) + body
    if draw(st.booleans()):
        at = draw(st.integers(0, len(number) - 1))
        number = number[:at] + draw(st.sampled_from(string.digits + "AZ٤")) + number[at + 1 :]
    return number


@settings(max_examples=500, deadline=None)
@given(ibans() | st.from_regex(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}", fullmatch=True))
@example("GB82WEST12345698765432")
@example("BE68539007547034")  # Belgium: stdnum's own module checks the national number
@example("BE68539007547035")
@example("NO9386011117947")
@example("ES9121000418450200051332")
@example("XX82WEST12345698765432")  # no such country
@example("GB٨٢WEST12345698765432")  # other digits where the check digits are
def test_iban_valid_is_stdnum(compact: str) -> None:
    assert _iban_valid(compact) is stdnum_iban.is_valid(compact)


def test_every_detector_declares_its_candidates() -> None:
    # A registered detector without candidates would still run (its prefilter decides), but
    # the pipeline's own seven are all in the one pass.
    assert all(d.candidates for d in DETECTORS.values())
