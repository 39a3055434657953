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


def test_match_form_drops_only_what_a_format_allows() -> None:
    item = {"type": "function_call", "status": "completed", "name": "f"}
    assert registry.match_form("openai.responses", item) == {"type": "function_call", "name": "f"}
    assert registry.match_form("anthropic.messages", item) == item
    assert json.dumps(registry.match_form("openai.chat", item)) == json.dumps(item)


def test_every_module_of_the_package_registers_one_format() -> None:
    # Adding a format is adding a module: formats/__init__.py imports each one.
    shared = {"base", "registry", "sse", "traces"}
    modules = [m.name for m in pkgutil.iter_modules(formats.__path__) if m.name not in shared]
    registered = {type(registry.get(name)).__module__ for name in registry.names()}
    assert registered == {f"conversations.formats.{m}" for m in modules}
    assert len(registry.names()) == len(modules)
    for module in modules:
        importlib.import_module(f"conversations.formats.{module}")  # already loaded: no-op


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


def test_a_format_without_a_reasoning_reader_cannot_be_registered() -> None:
    class NoReader(registry.Format):
        name = "test.no-reader"
        block_types = {
            BlockClass.VISIBLE: {"text"},
            BlockClass.AUDIT: set(),
            BlockClass.NEVER: set(),
        }

        def read(
            self, *, request: str, response: str | None, stream: str | None, cancelled: bool
        ) -> Any:
            raise AssertionError

        def message_blocks(self, raw: str) -> Any:
            raise AssertionError

    with pytest.raises(TypeError, match="reasoning"):
        registry.register(NoReader)
    assert "test.no-reader" not in registry.names()


def test_a_format_whose_shown_types_overlap_its_never_types_cannot_be_registered() -> None:
    class Overlap(registry.Format):
        name = "test.overlap"
        block_types = {
            BlockClass.VISIBLE: {"text", "think*"},
            BlockClass.AUDIT: set(),
            BlockClass.NEVER: {"thinking"},
        }

        def read(
            self, *, request: str, response: str | None, stream: str | None, cancelled: bool
        ) -> Any:
            raise AssertionError

        def message_blocks(self, raw: str) -> Any:
            raise AssertionError

        def reasoning(self, message: Any) -> Iterator[Trace]:
            yield from ()

    with pytest.raises(AssertionError, match="NEVER share"):
        registry.register(Overlap)
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
