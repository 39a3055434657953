"""Every registered format's profile, walked: a format cannot be registered with a part missing,
and the one finish table of each format decides the parser's flags, the signals' finish column
and the page's words alike, for every raw value it lists."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from conversations import blocks
from conversations.blocks import ParsedExchange
from conversations.formats import formats, get, names, registry
from conversations.formats.kit import Kit
from conversations.formats.kit import ReasoningSample as KitReasoning
from conversations.formats.live import LiveFilter
from conversations.formats.profile import FINISH_ORDER, Finish, Inline, Profile
from conversations.live.filters import FILTERS
from conversations.monitoring.facts import FINISHES, finish_kind
from conversations.workspace.words import FINISH_REASONS, TOOL_STATES, finish_words


class _Live(LiveFilter):
    format = "test.part-missing"
    browser = "TestFilter"

    def event(self, out: Any, data: dict[str, Any]) -> None:
        raise AssertionError


def _parser() -> type[registry.Format]:
    class Parser(type(get("openai.chat"))):  # type: ignore[misc]
        name = "test.part-missing"

    return Parser


def _profile(**changes: Any) -> Profile:
    return replace(get("openai.chat").profile, **{"format": "test.part-missing", **changes})


def _kit(**changes: Any) -> Kit:
    kit = get("openai.chat").kit
    example = {**kit.example, "format": "test.part-missing"}
    return replace(kit, **{"format": "test.part-missing", "example": example, **changes})


class _Unnamed(_Live):
    browser = ""


@pytest.mark.parametrize(
    ("profile", "live", "message"),
    [
        (None, _Live(), "no profile"),
        (_profile(), None, "no live filter"),
        (_profile(), _Unnamed(), "no browser class"),
        (_profile(label=""), _Live(), "lacks label"),
        (_profile(finishes={}), _Live(), "lacks finishes"),
        (
            _profile(finishes={"stop": get("openai.chat").profile.finishes["stop"]}),
            _Live(),
            "a finished and a truncated value",
        ),
        (
            _profile(continuation=replace(get("openai.chat").profile.continuation, rules=())),
            _Live(),
            "continuation",
        ),
        (_profile(inline=Inline(frozenset({"content"}), never_type="t")), _Live(), "inline"),
        (_profile(format="openai.chat"), _Live(), "name other formats"),
        (_profile(probe=None, summary=None, transport=None), _Live(), None),
        (
            _profile(summary=get("openai.responses").profile.summary, transport=None),
            _Live(),
            "transport",
        ),
        (_profile(roles={"model": "speaker"}), _Live(), "roles"),
    ],
    ids=[
        "no-profile",
        "no-live-filter",
        "no-browser-class",
        "no-label",
        "no-finish-table",
        "finish-table-without-truncated",
        "uncited-continuation",
        "inline-span-not-never",
        "parts-of-another-format",
        "a-whole-profile-without-a-transport-but-nothing-to-call",
        "a-summary-fetch-without-a-transport",
        "roles-the-console-has-not",
    ],
)
def test_a_format_with_a_part_missing_cannot_be_registered(
    profile: Any, live: Any, message: str | None
) -> None:
    if message is None:  # the control: the same parts, whole, are accepted (then taken out)
        try:
            registry.register(_parser(), profile=profile, live=live, kit=_kit())
            assert "test.part-missing" in names()
        finally:
            registry._FORMATS.pop("test.part-missing", None)
            blocks._TYPES.pop("test.part-missing", None)
        return
    with pytest.raises(TypeError, match=message):
        registry.register(_parser(), profile=profile, live=live, kit=_kit())
    assert "test.part-missing" not in names()


@pytest.mark.parametrize(
    ("kit", "message"),
    [
        (None, "no kit"),
        (_kit(format="openai.chat"), "name other formats"),
        (_kit(minimal_request={}), "kit lacks minimal_request"),
        (_kit(example={}), "kit lacks example"),
        (_kit(example={**get("openai.chat").kit.example}), "kit lacks example"),
        (
            _kit(reasoning=KitReasoning(get("openai.chat").kit.reasoning.message, ())),
            "kit lacks reasoning",
        ),
        (_kit(live=replace(get("openai.chat").kit.live, idle="")), "kit lacks live"),
    ],
    ids=[
        "no-kit",
        "kit-of-another-format",
        "no-minimal-request",
        "no-example",
        "an-example-of-another-format",
        "no-reasoning-read",
        "no-idle-live-chunk",
    ],
)
def test_a_format_without_its_kit_cannot_be_registered(kit: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        registry.register(_parser(), profile=_profile(), live=_Live(), kit=kit)
    assert "test.part-missing" not in names()


def test_a_binary_stream_format_without_its_binary_reader_cannot_be_registered() -> None:
    class Binary(_parser()):  # type: ignore[misc, valid-type]
        binary_stream = True

    with pytest.raises(TypeError, match="read_binary"):
        registry.register(Binary, profile=_profile(), live=_Live(), kit=_kit())
    assert "test.part-missing" not in names()


def test_every_registered_format_can_be_watched_live() -> None:
    assert set(FILTERS) == set(names())
    for fmt in formats():
        assert FILTERS[fmt.name] is fmt.live and fmt.live.format == fmt.name


# --- the one finish table ---------------------------------------------------------------------


def _built(fmt: str) -> Callable[[str], ParsedExchange]:
    def build(raw: str) -> ParsedExchange:
        return get(fmt).parse(**get(fmt).kit.finish(raw).parse_args())

    return build


# One exchange per format whose answer ends with a given raw stop value, from its kit
# (``finish``): a format cannot be registered without one, so its finish table is always walked.
BUILDERS: dict[str, Callable[[str], ParsedExchange]] = {name: _built(name) for name in names()}

RAW_VALUES = [(fmt.name, raw) for fmt in formats() for raw in fmt.profile.finishes]


def test_every_format_has_a_finish_walk() -> None:
    assert set(BUILDERS) == set(names())


@pytest.mark.parametrize(("fmt", "raw"), RAW_VALUES, ids=[f"{f}:{r}" for f, r in RAW_VALUES])
def test_one_finish_table_serves_the_parser_the_signals_and_the_page(fmt: str, raw: str) -> None:
    rule = get(fmt).profile.finishes[raw]
    params = BUILDERS[fmt](raw).params
    assert params.stop_reason == raw
    # The parser's flags (the alerts count them: truncated answers, refusals).
    assert params.truncated is (rule.kind is Finish.TRUNCATED), (fmt, raw)
    assert params.refusal is (rule.kind is Finish.REFUSED), (fmt, raw)
    # The signals' finish column, from the stored row.
    column = finish_kind(fmt, raw, truncated=params.truncated, refusal=params.refusal)
    assert FINISHES[column] == FINISHES[FINISH_ORDER.index(rule.kind)]
    assert finish_kind(fmt, raw, truncated=False, refusal=False) == FINISH_ORDER.index(rule.kind)
    # The page's words.
    assert finish_words(raw, fmt) == rule.words


def test_a_value_two_formats_share_means_the_same_in_both() -> None:
    seen: dict[str, tuple[str, Any]] = {}
    for fmt in formats():
        for raw, rule in fmt.profile.finishes.items():
            first = seen.setdefault(raw, (fmt.name, rule))
            assert first[1] == rule, (raw, first[0], fmt.name)
            assert FINISH_REASONS[raw] == rule.words
    states: dict[str, tuple[str, str]] = {}
    for fmt in formats():
        for raw, words in fmt.profile.tool_states.items():
            assert states.setdefault(raw, words) == words, (raw, fmt.name)
    assert states == TOOL_STATES


def test_a_stop_value_no_table_lists_is_other_and_shown_as_received() -> None:
    for fmt in names():
        assert finish_kind(fmt, "a-new-reason", truncated=False, refusal=False) == len(FINISHES) - 1
        assert finish_words("a-new-reason", fmt) == "finish reason “a-new-reason”"
    assert finish_kind("a.format.since.removed", "stop", truncated=False, refusal=False) == 4


def test_the_ai_sdk_content_filter_finish_is_a_refusal() -> None:
    params = BUILDERS["ai-sdk.ui"]("content-filter").params
    assert params.refusal and not params.truncated
    assert FINISHES[finish_kind("ai-sdk.ui", "content-filter", truncated=False, refusal=True)] == (
        "refusal"
    )


# --- one meaning of "input" -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", names())
def test_every_format_counts_input_as_every_token_billed(fmt: str) -> None:
    usage = get(fmt).profile.usage
    counted = usage.counted(1000, 400, 100)
    assert counted.cached == 400 and counted.written == 100
    # The cached parts are inside the total, whatever the provider's own count holds.
    assert counted.total is not None and counted.total >= 500
    assert counted.fresh == counted.total - 500
    if usage.count is None:
        assert counted.total == (1000 if usage.input_includes_cache else 1500)
    assert usage.counted(None, 5, None).total is None
    assert usage.counted(10, None, None).total == 10


def test_a_format_since_removed_is_counted_as_received() -> None:
    from conversations.formats.profile import count_input

    assert count_input(None, 1000, 400, None).total == 1000
