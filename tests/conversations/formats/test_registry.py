"""The registry and what every format is: each format re-parses each stored message into the
blocks ingest gave it, declares its block types and a reader of its reasoning, and shares one
preamble (one error code for the same mistake)."""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from conversations import formats
from conversations.blocks import BlockClass, classify
from conversations.formats import FormatError, registry
from conversations.formats.live import LiveFilter
from conversations.formats.profile import prompt_form
from conversations.formats.traces import Trace
from conversations.reviews.reasoning import reasoning_of
from conversations.services import ExchangeInput, exchange_parse
from tests.conversations.requests import body_for
from tests.providers import fixture_files, load


@pytest.mark.parametrize("file_name", fixture_files())
def test_message_blocks_of_each_stored_message_equal_the_ingest_blocks(file_name: str) -> None:
    for recorded in load(file_name):
        body = body_for(recorded, conversation="c")
        data = ExchangeInput(
            conversation="c",
            customer="u",
            format=body["format"],
            request=body["request"],
            response=body.get("response"),
            stream=body.get("stream"),
        )
        parsed = exchange_parse(data)
        for message in [*parsed.history, *parsed.output]:
            again = registry.message_blocks(data.format, message.raw)
            # A tool input cut off by max_tokens is invalid JSON: the stored message keeps the
            # start's input, so only the ingest-time block had the partial text.
            expected = tuple(
                replace(b, input={}) if parsed.params.truncated and isinstance(b.input, str) else b
                for b in message.blocks
            )
            assert again == expected


def test_names_lists_the_four_formats() -> None:
    assert registry.names() == [
        "ai-sdk.ui",
        "anthropic.messages",
        "openai.chat",
        "openai.responses",
    ]


def test_what_the_model_never_sees_is_the_profile_s_not_the_match_form() -> None:
    # A Responses item's status only says how its generation went: the profile lists it as
    # unseen (with its citation), so the prompt form drops it and the canonical form keeps it.
    item = {"type": "function_call", "status": "completed", "name": "f"}
    for fmt in registry.names():
        assert json.dumps(registry.match_form(fmt, item)) == json.dumps(item)
    unseen = registry.get("openai.responses").profile.unseen
    assert prompt_form(unseen, item) == {"type": "function_call", "name": "f"}
    assert prompt_form(registry.get("anthropic.messages").profile.unseen, item) == item


def test_every_package_of_formats_registers_one_format_from_its_own_parts() -> None:
    # Adding a format is adding a package: formats/__init__.py imports each one, and the
    # package's __init__ registers its parser, live filter and profile.
    packages = [m.name for m in pkgutil.iter_modules(formats.__path__) if m.ispkg]
    assert len(registry.names()) == len(packages)
    by_package = {}
    for name in registry.names():
        fmt = registry.get(name)
        package = type(fmt).__module__.rsplit(".", 1)[0]
        assert type(fmt).__module__ == f"{package}.parser"
        assert type(fmt.live).__module__ == f"{package}.live"
        assert importlib.import_module(f"{package}.profile").PROFILE is fmt.profile
        by_package[package] = name
    assert set(by_package) == {f"conversations.formats.{m}" for m in packages}


@pytest.mark.parametrize("fmt", registry.names())
def test_each_format_declares_its_block_types(fmt: str) -> None:
    declared = registry.get(fmt).block_types
    assert set(declared) == {BlockClass.VISIBLE, BlockClass.AUDIT, BlockClass.NEVER}
    assert declared[BlockClass.VISIBLE] and declared[BlockClass.NEVER]
    for cls, names in declared.items():
        for name in names:
            if "*" not in name:
                assert classify(fmt, name) is cls, (fmt, name)
    assert classify(fmt, "a-type-nobody-declared") is BlockClass.UNKNOWN


# One stored message with reasoning per format: a format added without a case here (and so,
# most likely, without a reader that was ever run) fails below.
REASONING_SAMPLES: dict[str, Any] = {
    "anthropic.messages": {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "weigh it", "signature": "s"}],
    },
    "openai.responses": {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "weigh it"}],
    },
    "openai.chat": {"role": "assistant", "content": "hi", "reasoning_content": "weigh it"},
    "ai-sdk.ui": {
        "id": "a",
        "role": "assistant",
        "parts": [{"type": "reasoning", "text": "weigh it", "state": "done"}],
    },
}


@pytest.mark.parametrize("fmt", registry.names())
def test_each_format_reads_its_reasoning(fmt: str) -> None:
    assert fmt in REASONING_SAMPLES, f"{fmt} has no reasoning sample: add one and a reader"
    traces = reasoning_of(fmt, json.dumps(REASONING_SAMPLES[fmt]))
    assert [t.text for t in traces] == ["weigh it"]
    assert reasoning_of(fmt, json.dumps({"role": "user", "content": "no reasoning"})) == []
    assert reasoning_of(fmt, "not json") == []


def _profile(name: str) -> Any:
    """A whole profile under another name (the registry checks parts, not their truth)."""
    return replace(registry.get("openai.chat").profile, format=name)


class _Live(LiveFilter):
    format = "test.no-reader"

    def event(self, out: Any, data: dict[str, Any]) -> None:
        raise AssertionError


def test_a_format_without_a_reasoning_reader_cannot_be_registered() -> None:
    class NoReader(registry.Format):
        name = "test.no-reader"

        def read(
            self, *, request: str, response: str | None, stream: str | None, cancelled: bool
        ) -> Any:
            raise AssertionError

        def message_blocks(self, raw: str) -> Any:
            raise AssertionError

    with pytest.raises(TypeError, match="reasoning"):
        registry.register(NoReader, profile=_profile("test.no-reader"), live=_Live())
    assert "test.no-reader" not in registry.names()


def test_a_format_whose_shown_types_overlap_its_never_types_cannot_be_registered() -> None:
    class Overlap(registry.Format):
        name = "test.overlap"

        def read(
            self, *, request: str, response: str | None, stream: str | None, cancelled: bool
        ) -> Any:
            raise AssertionError

        def message_blocks(self, raw: str) -> Any:
            raise AssertionError

        def reasoning(self, message: Any) -> Iterator[Trace]:
            yield from ()

    overlap = replace(
        _profile("test.overlap"),
        block_types={
            BlockClass.VISIBLE: frozenset({"text", "think*"}),
            BlockClass.AUDIT: frozenset(),
            BlockClass.NEVER: frozenset({"thinking"}),
        },
        inline=None,
    )
    live = _Live()
    live.format = "test.overlap"
    with pytest.raises(AssertionError, match="NEVER share"):
        registry.register(Overlap, profile=overlap, live=live)
    assert "test.overlap" not in registry.names()


# --- the preamble every format shares ---------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("fmt", registry.names())
@pytest.mark.parametrize(
    ("response", "stream"), [(None, None), ("{}", "data: {}\n\n")], ids=["neither", "both"]
)
def test_exactly_one_of_response_and_stream(
    fmt: str, response: str | None, stream: str | None
) -> None:
    with pytest.raises(FormatError) as info:
        registry.get(fmt).parse(request="{}", response=response, stream=stream)
    assert (info.value.field, info.value.at, info.value.code) == (
        "response",
        "$",
        "response_or_stream",
    )


@pytest.mark.parametrize("fmt", registry.names())
@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"request": None, "response": "{}"}, "request"),
        ({"request": "{}", "response": b"{}"}, "response"),
        ({"request": "{}", "stream": 12}, "stream"),
    ],
    ids=["request-none", "response-bytes", "stream-int"],
)
def test_bodies_must_be_strings(fmt: str, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(FormatError) as info:
        registry.get(fmt).parse(**kwargs)
    assert (info.value.field, info.value.code) == (field, "wrong_type")


@pytest.mark.parametrize("fmt", registry.names())
@pytest.mark.parametrize("field", ["request", "response"])
def test_nesting_past_the_decoder_is_too_deep_naming_the_body(fmt: str, field: str) -> None:
    request = '{"model":"m","max_tokens":1,"messages":[],"input":[]}'
    bodies = {"request": request, "response": "{}", field: DEEP}
    with pytest.raises(FormatError) as info:
        registry.get(fmt).parse(**bodies)
    assert (info.value.field, info.value.code) == (field, "too_deep")
