"""Every registered format's profile, walked: a format cannot be registered with a part missing,
and the one finish table of each format decides the parser's flags, the signals' finish column
and the page's words alike, for every raw value it lists."""

from __future__ import annotations

import json
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


def _anthropic(raw: str) -> ParsedExchange:
    request = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "x"}],
        "stop_reason": raw,
    }
    return get("anthropic.messages").parse(
        request=json.dumps(request), response=json.dumps(response)
    )


def _responses(raw: str) -> ParsedExchange:
    incomplete = raw in ("max_output_tokens", "content_filter")
    response = {
        "id": "resp_1",
        "object": "response",
        "model": "m",
        "status": "incomplete" if incomplete else raw,
        "incomplete_details": {"reason": raw} if incomplete else None,
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "x", "annotations": []}],
            }
        ],
    }
    return get("openai.responses").parse(
        request=json.dumps({"model": "m", "input": "hi"}), response=json.dumps(response)
    )


def _chat(raw: str) -> ParsedExchange:
    response = {
        "id": "c1",
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": raw}
        ],
    }
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    return get("openai.chat").parse(request=json.dumps(request), response=json.dumps(response))


def _ai_sdk(raw: str) -> ParsedExchange:
    chunks = [
        {"type": "start", "messageId": "a1"},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "x"},
        {"type": "text-end", "id": "t"},
        {"type": "finish", "finishReason": raw},
    ]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    request = {"messages": [user]}
    return get("ai-sdk.ui").parse(request=json.dumps(request), stream=stream)


# One exchange per format whose answer ends with a given raw stop value: a format registered
# without a builder here fails below (its finish table would go unwalked).
BUILDERS: dict[str, Callable[[str], ParsedExchange]] = {
    "anthropic.messages": _anthropic,
    "openai.responses": _responses,
    "openai.chat": _chat,
    "ai-sdk.ui": _ai_sdk,
}

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
    params = _ai_sdk("content-filter").params
    assert params.refusal and not params.truncated
    assert FINISHES[finish_kind("ai-sdk.ui", "content-filter", truncated=False, refusal=True)] == (
        "refusal"
    )
