"""The registry and what every format is: each format re-parses each stored message into the
blocks ingest gave it, declares its block types and a reader of its reasoning, and shares one
preamble (one error code for the same mistake)."""

from __future__ import annotations

import base64
import importlib
import json
import pkgutil
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from conversations import blocks, formats
from conversations.blocks import BlockClass, classify
from conversations.formats import FormatError, base, registry
from conversations.formats.live import LiveFilter
from conversations.formats.profile import Endpoint, EndpointRule, prompt_form
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
            endpoint=body.get("endpoint"),
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


def test_names_lists_every_format_package_s_format_by_name() -> None:
    # The registry's names are exactly the formats the packages' kits declare, sorted: a
    # package that does not register, or registers under another name, fails.
    packages = [m.name for m in pkgutil.iter_modules(formats.__path__) if m.ispkg]
    kits = [importlib.import_module(f"conversations.formats.{p}.kit").KIT for p in packages]
    assert registry.names() == sorted(kit.format for kit in kits)
    assert len(set(registry.names())) == len(packages)


def test_what_the_model_never_sees_is_the_profile_s_not_the_match_form() -> None:
    # A Responses item's status only says how its generation went: the profile lists it as
    # unseen (with its citation), so the prompt form drops it and the canonical form keeps it.
    item = {"type": "function_call", "status": "completed", "name": "f"}
    for fmt in ("anthropic.messages", "openai.chat", "openai.responses"):
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


# One stored message with reasoning per format, from its kit (``reasoning``): a format cannot be
# registered without one, and its reader must read it.
@pytest.mark.parametrize("fmt", registry.names())
def test_each_format_reads_its_reasoning(fmt: str) -> None:
    sample = registry.get(fmt).kit.reasoning
    assert sample.texts, f"{fmt} has no reasoning sample: add one and a reader"
    traces = reasoning_of(fmt, json.dumps(sample.message))
    assert [t.text for t in traces] == list(sample.texts)
    assert reasoning_of(fmt, json.dumps({"role": "user", "content": "no reasoning"})) == []
    assert reasoning_of(fmt, "not json") == []


def _profile(name: str) -> Any:
    """A whole profile under another name (the registry checks parts, not their truth)."""
    return replace(registry.get("openai.chat").profile, format=name)


def _kit(name: str) -> Any:
    kit = registry.get("openai.chat").kit
    return replace(kit, format=name, example={**kit.example, "format": name})


class _Live(LiveFilter):
    format = "test.no-reader"
    browser = "TestFilter"

    def event(self, out: Any, data: dict[str, Any]) -> None:
        raise AssertionError


class _NoReasoning(registry.Format):
    """A format's parser with every reader but ``reasoning``, none of them ever called."""

    def read(
        self, *, request: str, response: str | None, stream: str | None, cancelled: bool
    ) -> Any:
        raise AssertionError

    def message_blocks(self, raw: str) -> Any:
        raise AssertionError


def test_a_format_without_a_reasoning_reader_cannot_be_registered() -> None:
    class NoReader(_NoReasoning):
        name = "test.no-reader"

    with pytest.raises(TypeError, match="reasoning"):
        registry.register(
            NoReader, profile=_profile("test.no-reader"), live=_Live(), kit=_kit("test.no-reader")
        )
    assert "test.no-reader" not in registry.names()


def test_a_format_whose_shown_types_overlap_its_never_types_cannot_be_registered() -> None:
    class Overlap(_NoReasoning):
        name = "test.overlap"

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
        registry.register(Overlap, profile=overlap, live=live, kit=_kit("test.overlap"))
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
    # A format that reads its model from the endpoint is given one (its example's).
    endpoint = registry.get(fmt).kit.example.get("endpoint")
    with pytest.raises(FormatError) as info:
        registry.get(fmt).parse(**bodies, endpoint=endpoint)
    assert (info.value.field, info.value.code) == (field, "too_deep")


# --- the endpoint and the binary stream (DESIGN section 19) -----------------------------------


class _ModelInPath(type(registry.get("anthropic.messages"))):  # type: ignore[misc]
    """A format whose provider puts the model in the URL, and streams binary frames: the
    contract's preamble, tested without a provider that does (the real ones test it too)."""

    name = "test.model-in-path"
    binary_stream = True
    seen: list[Any] = []

    def read_binary(self, *, request: str, data: bytes, endpoint: Any, cancelled: bool) -> Any:
        self.seen.append((data, endpoint))
        if data.startswith(b"\x00bad"):
            raise FormatError(
                "bad frame", field="stream_base64", at=base.byte_at(3), code="invalid"
            )
        return self.read(
            request=request,
            response=_ANSWER,
            stream=None,
            endpoint=endpoint,
            cancelled=cancelled,
        )


_ANSWER = json.dumps(
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "x"}],
        "stop_reason": "end_turn",
    }
)
_REQUEST = json.dumps({"max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]})


def _model_in_path() -> Any:
    def model(endpoint: Endpoint) -> str | None:
        if "/models/" not in endpoint.path:
            return None
        return endpoint.path.rpartition("/models/")[2].split(":", 1)[0] or None

    anthropic = registry.get("anthropic.messages")
    prof = replace(anthropic.profile, format=_ModelInPath.name, endpoint=EndpointRule(model=model))
    live = _Live()
    live.format = _ModelInPath.name
    return _ModelInPath, prof, live, _kit(_ModelInPath.name)


@pytest.fixture
def model_in_path() -> Iterator[registry.Format]:
    cls, prof, live, kit = _model_in_path()
    registry.register(cls, profile=prof, live=live, kit=kit)
    try:
        yield registry.get(cls.name)
    finally:
        registry._FORMATS.pop(cls.name, None)
        blocks._TYPES.pop(cls.name, None)


@pytest.mark.parametrize(
    ("endpoint", "model"),
    [
        ("/v1beta/models/gem-3:streamGenerateContent?alt=sse", "gem-3"),
        ("/gateway/v1/models/gem%2D3:generateContent", "gem-3"),
    ],
)
def test_the_model_is_read_from_the_endpoint(
    model_in_path: registry.Format, endpoint: str, model: str
) -> None:
    data = base64.b64encode(b"frames").decode()
    parsed = model_in_path.parse(request=_REQUEST, stream_base64=data, endpoint=endpoint)
    assert parsed.params.requested_model == model
    assert _ModelInPath.seen[-1][0] == b"frames"
    assert _ModelInPath.seen[-1][1].query.get("alt") == ("sse" if "alt" in endpoint else None)


@pytest.mark.parametrize(
    "endpoint", [None, "/v1beta/cachedContents", "https://host/v1/models/x:y", "/a b"]
)
def test_an_endpoint_naming_no_model_is_refused_at_its_path(
    model_in_path: registry.Format, endpoint: str | None
) -> None:
    with pytest.raises(FormatError) as info:
        model_in_path.parse(request=_REQUEST, stream_base64="AAAA", endpoint=endpoint)
    assert (info.value.field, info.value.at, info.value.code) == (
        "endpoint",
        "$.endpoint",
        "endpoint",
    )


def test_a_binary_stream_format_refuses_text_and_bad_base64(
    model_in_path: registry.Format,
) -> None:
    endpoint = "/v1/models/m:x"
    with pytest.raises(FormatError) as info:
        model_in_path.parse(request=_REQUEST, stream="data: {}\n\n", endpoint=endpoint)
    assert (info.value.field, info.value.code) == ("stream", "stream_kind")
    for bad in ("not base64!", "AAA", "AA=A"):
        with pytest.raises(FormatError) as info:
            model_in_path.parse(request=_REQUEST, stream_base64=bad, endpoint=endpoint)
        assert (info.value.field, info.value.code) == ("stream_base64", "not_base64")
    with pytest.raises(FormatError) as info:
        data = base64.b64encode(b"\x00bad frame").decode()
        model_in_path.parse(request=_REQUEST, stream_base64=data, endpoint=endpoint)
    assert (info.value.field, info.value.at) == ("stream_base64", "$[3]")


@pytest.mark.parametrize("fmt", [f.name for f in registry.formats() if f.binary_stream])
def test_a_binary_format_refuses_a_text_stream(fmt: str) -> None:
    endpoint = registry.get(fmt).kit.example.get("endpoint")
    with pytest.raises(FormatError) as info:
        registry.get(fmt).parse(request="{}", stream="data: {}\n\n", endpoint=endpoint)
    assert (info.value.field, info.value.code) == ("stream", "stream_kind")


@pytest.mark.parametrize("fmt", [f.name for f in registry.formats() if not f.binary_stream])
def test_a_text_format_refuses_a_binary_stream_and_ignores_an_endpoint(fmt: str) -> None:
    with pytest.raises(FormatError) as info:
        registry.get(fmt).parse(request="{}", stream_base64="AAAA")
    assert (info.value.field, info.value.code) == ("stream_base64", "stream_kind")
    sample = registry.get(fmt).kit.finish(next(iter(registry.get(fmt).profile.finishes)))
    plain = registry.get(fmt).parse(**sample.parse_args())
    if registry.get(fmt).profile.endpoint is None:
        with_endpoint = registry.get(fmt).parse(**{**sample.parse_args(), "endpoint": "/v1/x"})
        assert with_endpoint.params == plain.params


@pytest.mark.parametrize("fmt", registry.names())
@pytest.mark.parametrize(
    "outputs",
    [{"response": "{}", "stream_base64": "AAAA"}, {"stream": "x", "stream_base64": "AAAA"}],
    ids=["response-and-binary", "stream-and-binary"],
)
def test_exactly_one_of_the_three_outputs(fmt: str, outputs: dict[str, str]) -> None:
    with pytest.raises(FormatError) as info:
        registry.get(fmt).parse(request="{}", **outputs)  # type: ignore[arg-type]
    assert (info.value.field, info.value.code) == ("response", "response_or_stream")
