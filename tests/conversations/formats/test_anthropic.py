"""anthropic.messages: requests, JSON responses and SSE streams (pure Python, no database)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversations.blocks import Block, BlockClass, Message, ParsedExchange
from conversations.formats import FormatError, get
from conversations.formats.anthropic import FORMAT
from tests.conversations.formats.json_paths import paths, replaced
from tests.providers import Recorded, fixture_files, format_of, load
from tests.scaling import growth

PARSER = get(FORMAT)

MIN_REQUEST = json.dumps(
    {"model": "claude-test", "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}]}
)

RECORDED: list[Recorded] = [
    r for name in fixture_files() if format_of(name) == FORMAT for r in load(name)
]
BY_NAME = {r.name: r for r in RECORDED}


def parse(
    *, request: str = MIN_REQUEST, response: str | None = None, stream: str | None = None
) -> ParsedExchange:
    return PARSER.parse(request=request, response=response, stream=stream)


def parse_recorded(r: Recorded) -> ParsedExchange:
    return parse(request=r.request or MIN_REQUEST, response=r.response, stream=r.stream)


def recorded(prefix: str) -> list[Recorded]:
    found = [r for r in RECORDED if r.name.split("__", 1)[1].startswith(prefix)]
    assert found, prefix
    return found


def sse(*events: dict[str, Any] | tuple[str, str]) -> str:
    """Raw SSE text: a dict becomes ``event: <its type>`` + its JSON; a tuple is (name, data)."""
    out = []
    for event in events:
        if isinstance(event, tuple):
            name, data = event
        else:
            name, data = event["type"], json.dumps(event)
        out.append(f"event: {name}\ndata: {data}\n\n")
    return "".join(out)


def message_start(msg_id: str = "msg_1", **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-test-1",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    message.update(extra)
    return {"type": "message_start", "message": message}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **d: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str = "end_turn", **usage: Any) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": usage or {"output_tokens": 5},
    }


STOP = {"type": "message_stop"}


def text_stream(*pieces: str) -> list[dict[str, Any]]:
    return [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        *(delta(0, type="text_delta", text=p) for p in pieces),
        block_stop(0),
        message_delta(),
        STOP,
    ]


# --- every recording --------------------------------------------------------------------------


def _walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


def _strings(value: Any) -> Iterator[str]:
    for v in _walk(value):
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            yield from (k for k in v if isinstance(k, str))


def _never_strings(message_json: Any) -> set[str]:
    """The deliberation inside a message object: thinking text, signatures, redacted data.

    Strings shorter than 8 characters are skipped: a thinking of "4" (opus 4.6 fixture) also
    occurs in the answer "2 + 2 = **4**", and proves nothing either way."""
    found = set()
    for v in _walk(message_json):
        if isinstance(v, dict) and v.get("type") in ("thinking", "redacted_thinking"):
            for key in ("thinking", "signature", "data"):
                if isinstance(v.get(key), str) and len(v[key]) >= 8:
                    found.add(v[key])
    return found


def _all_messages(px: ParsedExchange) -> list[Message]:
    return [*px.history, *px.output]


@pytest.mark.parametrize("r", RECORDED, ids=[r.name for r in RECORDED])
def test_every_recording_parses(r: Recorded) -> None:
    px = parse_recorded(r)
    assert len(px.output) == 1
    (out,) = px.output
    assert out.role == "assistant"
    body = json.loads(out.raw)
    assert list(body) == ["role", "content"]
    assert body["role"] == "assistant"
    assert len(out.blocks) == len(body["content"])
    for block, source in zip(out.blocks, body["content"], strict=True):
        assert block.type == source["type"]
    request = json.loads(r.request or MIN_REQUEST)
    assert len(px.history) == len(request["messages"])
    assert px.params.response_model
    assert px.params.response_id
    assert px.params.stop_reason
    assert px.params.usage.input_tokens is not None
    assert px.params.usage.output_tokens is not None


@pytest.mark.parametrize("r", RECORDED, ids=[r.name for r in RECORDED])
def test_history_raw_is_the_exact_element_text(r: Recorded) -> None:
    request = r.request or MIN_REQUEST
    px = parse(request=request, response=r.response, stream=r.stream)
    elements = json.loads(request)["messages"]
    for message, element in zip(px.history, elements, strict=True):
        # tests/providers.py serialises cassette bodies with json.dumps(ensure_ascii=False), so
        # each element's source text is exactly its json.dumps with the same settings.
        assert message.raw == json.dumps(element, ensure_ascii=False)
        assert message.raw in request
        assert message.role == element["role"]


def _content_source(response: str) -> str:
    """The exact source text of the top-level "content" array, found independently of the code
    under test: the first "content" key of these bodies is the top-level one (checked)."""
    decoder = json.JSONDecoder()
    start = response.index('"content"') + len('"content"')
    start = response.index(":", start) + 1
    while response[start] in " \t\r\n":
        start += 1
    value, end = decoder.raw_decode(response, start)
    assert value == json.loads(response)["content"]
    return response[start:end]


NON_STREAMED = [r for r in RECORDED if r.response is not None]
STREAMED = [r for r in RECORDED if r.stream is not None]


@pytest.mark.parametrize("r", NON_STREAMED, ids=[r.name for r in NON_STREAMED])
def test_response_output_raw_is_the_content_array_bytes(r: Recorded) -> None:
    assert r.response is not None
    (out,) = parse_recorded(r).output
    assert out.raw == '{"role":"assistant","content":' + _content_source(r.response) + "}"


def test_response_raw_keeps_whitespace_and_escapes() -> None:
    response = (
        '{ "id" : "msg_x", "type":"message", "role":"assistant", "model":"m",\n'
        '  "content" : [ {"type" : "text", "text":"caf\\u00e9 \\/ \\ud83d\\ude00"} ,\n'
        '   {"type":"thinking","thinking":"","signature":"c2ln"} ] ,\n'
        '  "stop_reason":"end_turn", "usage":{"input_tokens":1,"output_tokens":2}}'
    )
    (out,) = parse(response=response).output
    assert out.raw == (
        '{"role":"assistant","content":[ {"type" : "text", '
        '"text":"caf\\u00e9 \\/ \\ud83d\\ude00"} ,\n'
        '   {"type":"thinking","thinking":"","signature":"c2ln"} ]}'
    )
    assert out.blocks[0].text == "café / \U0001f600"


def test_history_raw_keeps_whitespace_and_escapes() -> None:
    first = '{ "role" : "user" ,\n "content" : "caf\\u00e9" }'
    second = '{"role":"assistant","content":[{"type":"text","text":"\\"ok\\""}]}'
    request = '{"model":"m","max_tokens":5,"messages":[  ' + first + " ,\n\t" + second + " ]}"
    history = parse(request=request, response=_response([])).history
    assert [m.raw for m in history] == [first, second]
    assert history[0].blocks == (Block("text", BlockClass.VISIBLE, text="café"),)
    assert history[1].blocks[0].text == '"ok"'


def _reference_accumulate(stream: str) -> dict[str, Any]:
    """A deliberately naive accumulator (what the SDKs do), to cross-check the real one."""
    content: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for line in stream.splitlines():
        if not line.startswith("data:"):
            continue
        event = json.loads(line[5:])
        kind, index = event["type"], event.get("index")
        if kind == "message_start":
            content, partial = {}, {}
        elif kind == "content_block_start":
            content[index] = event["content_block"]
        elif kind == "content_block_delta":
            block, d = content[index], event["delta"]
            if d["type"] == "text_delta":
                block["text"] += d["text"]
            elif d["type"] == "thinking_delta":
                block["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                block["signature"] = d["signature"]
            elif d["type"] == "input_json_delta":
                partial[index] = partial.get(index, "") + d["partial_json"]
            elif d["type"] == "citations_delta":
                block["citations"] = (block.get("citations") or []) + [d["citation"]]
        elif kind == "content_block_stop" and partial.get(index, "").strip():
            content[index]["input"] = json.loads(partial[index])
    return {"role": "assistant", "content": [content[k] for k in sorted(content)]}


@pytest.mark.parametrize("r", STREAMED, ids=[r.name for r in STREAMED])
def test_stream_output_equals_a_naive_accumulation(r: Recorded) -> None:
    # Anthropic's message_stop carries no final object: the reference is an independent
    # accumulation of the same events. Equal bytes also means: compact, keys in stream order.
    assert r.stream is not None
    (out,) = parse_recorded(r).output
    reference = _reference_accumulate(r.stream)
    assert json.loads(out.raw) == reference
    assert out.raw == json.dumps(reference, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("r", RECORDED, ids=[r.name for r in RECORDED])
def test_never_content_stays_out_of_blocks(r: Recorded) -> None:
    px = parse_recorded(r)
    secrets: set[str] = set()
    for message in _all_messages(px):
        secrets |= _never_strings(json.loads(message.raw))
    for message in _all_messages(px):
        for block in message.blocks:
            haystack = "\n".join(
                [repr(block), *_strings([block.text, block.tool_name, block.input, block.output])]
            )
            leaked = [s for s in secrets if s in haystack]
            assert not leaked, (block.type, leaked[0][:60])
            if block.cls in (BlockClass.NEVER, BlockClass.UNKNOWN):
                assert (block.text, block.input, block.output, block.tool_name) == (None,) * 4


def test_never_check_has_something_to_find() -> None:
    # the leak test above is only meaningful if the recordings hold deliberation to look for
    found = set()
    for r in RECORDED:
        for message in _all_messages(parse_recorded(r)):
            found |= _never_strings(json.loads(message.raw))
    assert len(found) > 20


# --- replayed assistant turns -----------------------------------------------------------------


@pytest.mark.parametrize(
    "cassette",
    [
        "test_anthropic_tool_with_thinking.yaml",
        "test_anthropic_model_thinking_part_redacted.yaml",
        "test_pause_turn_web_search_vcr.yaml",
    ],
    ids=["tool-with-thinking", "thinking-redacted", "pause-turn"],
)
def test_next_request_replays_the_previous_output(cassette: str) -> None:
    first, second = (parse_recorded(r) for r in recorded(cassette))
    (previous,) = first.output
    replayed = second.history[1]
    assert replayed.role == "assistant"
    assert json.loads(replayed.raw) == json.loads(previous.raw)
    assert replayed.blocks == previous.blocks


def test_pause_turn_continuation_starts_with_the_dangling_call_result() -> None:
    first, second = (parse_recorded(r) for r in recorded("test_pause_turn_web_search_vcr"))
    dangling = first.output[0].blocks[-1]
    assert (dangling.type, dangling.cls) == ("server_tool_use", BlockClass.AUDIT)
    assert first.params.stop_reason == "pause_turn"
    assert first.params.server_tool_counts == {"web_search": 10}
    result = second.output[0].blocks[0]
    assert result.type == "web_search_tool_result"
    assert result.call_id == dangling.call_id
    assert result.is_error is False
    assert isinstance(result.output, list) and result.output


# --- blocks and params from recordings --------------------------------------------------------


def test_tool_loop_blocks_and_params() -> None:
    first, second = (parse_recorded(r) for r in recorded("test_anthropic_tool_with_thinking"))
    thinking, text, call = first.output[0].blocks
    assert (thinking.cls, thinking.redacted) == (BlockClass.NEVER, False)
    assert text.text and text.text.startswith("I'll help you find")
    assert (call.type, call.tool_name, call.call_id, call.input) == (
        "tool_use",
        "get_user_country",
        "toolu_01YGzqpRE16Vricda3Aqcejo",
        {},
    )
    (result,) = second.history[2].blocks
    assert (result.type, result.cls, result.call_id, result.output, result.is_error) == (
        "tool_result",
        BlockClass.AUDIT,
        call.call_id,
        "Mexico",
        False,
    )
    p = first.params
    assert (p.requested_model, p.response_model, p.thinking, p.budget_tokens, p.max_tokens) == (
        "claude-sonnet-4-0",
        "claude-sonnet-4-20250514",
        "enabled",
        3000,
        4096,
    )
    assert p.stop_reason == "tool_use"
    assert (p.usage.input_tokens, p.usage.output_tokens) == (398, 155)
    assert (p.usage.cache_read_tokens, p.usage.cache_write_tokens) == (0, 0)


def test_effort_adaptive_thinking_and_thinking_tokens() -> None:
    (r,) = recorded("test_anthropic_opus_5_features")
    p = parse_recorded(r).params
    assert (p.thinking, p.effort, p.budget_tokens) == ("adaptive", "xhigh", None)
    assert p.usage.reasoning_tokens == 33


def test_text_before_thinking_keeps_its_order() -> None:
    (r,) = recorded("test_anthropic_opus_46_features")
    blocks = parse_recorded(r).output[0].blocks
    assert [(b.type, b.cls) for b in blocks] == [
        ("text", BlockClass.VISIBLE),
        ("thinking", BlockClass.NEVER),
        ("text", BlockClass.VISIBLE),
    ]
    assert blocks[0].text == "\n\n"


def test_redacted_thinking_is_marked_redacted() -> None:
    for r in recorded("test_anthropic_model_thinking_part_redacted"):
        blocks = parse_recorded(r).output[0].blocks
        redacted = [b for b in blocks if b.type == "redacted_thinking"]
        assert redacted and all(b.cls is BlockClass.NEVER and b.redacted for b in redacted)


def test_thinking_omitted_by_provider_is_redacted_and_summarised_is_not() -> None:
    (generic,) = recorded("anthropic-claude-sonnet-5-reasoning-generic")
    (summarized,) = recorded("anthropic-claude-sonnet-5-reasoning-summarized")
    omitted = parse_recorded(generic)
    shown = parse_recorded(summarized)
    assert (omitted.output[0].blocks[0].type, omitted.output[0].blocks[0].redacted) == (
        "thinking",
        True,
    )
    assert json.loads(omitted.output[0].raw)["content"][0]["thinking"] == ""
    assert omitted.params.usage.reasoning_tokens == 62
    assert shown.output[0].blocks[0].redacted is False


def test_refusal_with_empty_content_is_one_message() -> None:
    (r,) = recorded("anthropic-refusal")
    px = parse_recorded(r)
    assert [(m.role, m.raw, m.blocks) for m in px.output] == [
        ("assistant", '{"role":"assistant","content":[]}', ())
    ]
    assert (px.params.refusal, px.params.stop_reason, px.params.truncated) == (
        True,
        "refusal",
        False,
    )


def test_mcp_blocks() -> None:
    (r,) = recorded("anthropic-mcp")
    px = parse_recorded(r)
    use, result, text = px.output[0].blocks
    assert (use.type, use.cls, use.tool_name, use.call_id, use.input) == (
        "mcp_tool_use",
        BlockClass.AUDIT,
        "echo",
        "mcptoolu_015oTj2fXVKLrDohFetJd5UL",
        {"message": "hello world"},
    )
    assert (result.type, result.call_id, result.is_error) == ("mcp_tool_result", use.call_id, False)
    assert result.output == [{"type": "text", "text": "Tool echo: hello world"}]
    assert text.cls is BlockClass.VISIBLE
    assert px.params.server_tool_counts == {}  # zero counts are dropped


def test_web_search_blocks_and_counts() -> None:
    (r,) = recorded("anthropic-web-search-tool")
    px = parse_recorded(r)
    results = [b for b in px.output[0].blocks if b.type == "web_search_tool_result"]
    assert [len(b.output) for b in results] == [10, 0]  # the second search found nothing
    assert all(b.is_error is False for b in results)
    assert px.params.server_tool_counts == {"web_search": 2}


# --- synthetic blocks and params --------------------------------------------------------------


def _response(content: list[Any], **fields: Any) -> str:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-1",
        "content": content,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    body.update(fields)
    return json.dumps(body)


def _request(messages: list[Any], **fields: Any) -> str:
    return json.dumps({"model": "claude-test", "max_tokens": 100, "messages": messages, **fields})


def test_request_block_types_are_classified() -> None:
    content = [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA"}},
        {"type": "document", "source": {"type": "text", "data": "doc"}},
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}]},
        {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
        {"type": "thinking", "thinking": "secret plan", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "compaction", "content": "summary of earlier turns"},
    ]
    history = parse(
        request=_request([{"role": "user", "content": content}]), response=_response([])
    )
    blocks = history.history[0].blocks
    assert [(b.type, b.cls) for b in blocks] == [
        ("text", BlockClass.VISIBLE),
        ("image", BlockClass.UNKNOWN),
        ("document", BlockClass.UNKNOWN),
        ("tool_result", BlockClass.AUDIT),
        ("tool_result", BlockClass.AUDIT),
        ("thinking", BlockClass.NEVER),
        ("redacted_thinking", BlockClass.NEVER),
        ("compaction", BlockClass.UNKNOWN),
    ]
    assert blocks[1] == Block("image", BlockClass.UNKNOWN)
    assert (blocks[3].call_id, blocks[3].is_error) == ("t1", False)
    assert (blocks[4].call_id, blocks[4].output, blocks[4].is_error) == ("t2", "boom", True)
    assert [b.redacted for b in blocks[5:7]] == [False, True]


@pytest.mark.parametrize(
    ("result", "is_error"),
    [
        (
            {
                "type": "web_search_tool_result",
                "tool_use_id": "s1",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses"},
            },
            True,
        ),
        ({"type": "web_fetch_tool_result", "tool_use_id": "s1", "content": {"type": "x"}}, False),
        ({"type": "mcp_tool_result", "tool_use_id": "s1", "is_error": True, "content": []}, True),
    ],
    ids=["web-search-error", "web-fetch-ok", "mcp-error"],
)
def test_server_tool_result_errors(result: dict[str, Any], is_error: bool) -> None:
    use = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "x"}}
    blocks = parse(response=_response([use, result])).output[0].blocks
    assert (blocks[0].tool_name, blocks[0].call_id, blocks[0].input) == (
        "web_search",
        "s1",
        {"q": "x"},
    )
    assert (blocks[1].call_id, blocks[1].is_error) == ("s1", is_error)


@pytest.mark.parametrize(
    ("thinking", "effort", "expected"),
    [
        ({"type": "enabled", "budget_tokens": 2048}, None, ("enabled", 2048, None)),
        ({"type": "adaptive", "display": "omitted"}, "low", ("adaptive", None, "low")),
        ({"type": "disabled"}, None, ("disabled", None, None)),
        (None, "max", (None, None, "max")),
    ],
    ids=["enabled", "adaptive", "disabled", "effort-only"],
)
def test_thinking_params(
    thinking: dict[str, Any] | None, effort: str | None, expected: tuple[Any, ...]
) -> None:
    fields: dict[str, Any] = {}
    if thinking is not None:
        fields["thinking"] = thinking
    if effort is not None:
        fields["output_config"] = {"effort": effort}
    request = _request([{"role": "user", "content": "x"}], **fields)
    p = parse(request=request, response=_response([])).params
    assert (p.thinking, p.budget_tokens, p.effort) == expected


def test_usage_split_and_truncation() -> None:
    usage = {
        "input_tokens": 11,
        "cache_read_input_tokens": 22,
        "cache_creation_input_tokens": None,
        "output_tokens": 33,
        "output_tokens_details": {"thinking_tokens": 7},
        "server_tool_use": {
            "web_search_requests": 1,
            "web_fetch_requests": 3,
            "x_requests": 0,  # zero: dropped
            "code_execution": {"seconds": 4},  # not a count: ignored, not refused
        },
    }
    response = _response([{"type": "text", "text": "cut"}], stop_reason="max_tokens", usage=usage)
    p = parse(response=response).params
    u = p.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens) == (11, 22, None)
    assert (u.output_tokens, u.reasoning_tokens) == (33, 7)
    assert p.server_tool_counts == {"web_search": 1, "web_fetch": 3}
    assert (p.truncated, p.refusal, p.stop_reason) == (True, False, "max_tokens")


# --- stream edge cases ------------------------------------------------------------------------


def test_ping_and_empty_thinking_delta_inside_a_block() -> None:
    (r,) = recorded("anthropic-clear-thinking")
    assert r.stream is not None
    assert '"thinking":""}}' in r.stream and '{"type":"ping"}' in r.stream
    (out,) = parse_recorded(r).output
    thinking = json.loads(out.raw)["content"][0]
    assert list(thinking) == ["type", "thinking", "signature"]
    assert thinking["thinking"] == (
        "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185"
    )
    assert thinking["signature"].startswith("EvQBCkYICxgCKkAxhD4NUKFz")
    assert out.blocks[1].text == "925 ÷ 5 = 185"


def test_signature_delta_adds_the_key_when_the_start_has_none() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "thinking", "thinking": ""}),
        delta(0, type="thinking_delta", thinking="a"),
        {"type": "ping"},
        delta(0, type="thinking_delta", thinking=""),
        delta(0, type="signature_delta", signature="c2ln"),
        block_stop(0),
        message_delta(),
        STOP,
    ]
    (out,) = parse(stream=sse(*events)).output
    assert out.raw == (
        '{"role":"assistant","content":[{"type":"thinking","thinking":"a","signature":"c2ln"}]}'
    )


def test_tool_input_cut_off_by_max_tokens() -> None:
    (r,) = recorded("incomplete_partial_json_response")
    assert r.stream is not None and not r.stream.endswith("\n")  # the recording ends mid-line
    px = parse_recorded(r)
    (out,) = px.output
    text, call = out.blocks
    assert text.text == (
        "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a "
        "file called taxes.txt. Let me do that for you now."
    )
    assert json.loads(out.raw)["content"][1] == {
        "type": "tool_use",
        "id": "toolu_01EKqbqmZrGRXy18eN7m9kvY",
        "name": "make_file",
        "input": {},
    }
    assert isinstance(call.input, str)
    assert call.input.startswith('{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE')
    assert call.input.endswith('\n"Filing taxes')
    assert (px.params.stop_reason, px.params.truncated) == ("max_tokens", True)
    assert (px.params.usage.input_tokens, px.params.usage.output_tokens) == (450, 124)


def test_tool_input_is_parsed_at_block_stop() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}),
        delta(0, type="input_json_delta", partial_json=""),
        delta(0, type="input_json_delta", partial_json='{"order_id": '),
        delta(0, type="input_json_delta", partial_json='"A-1"}'),
        block_stop(0),
        message_delta("tool_use"),
        STOP,
    ]
    px = parse(stream=sse(*events))
    (call,) = px.output[0].blocks
    assert (call.tool_name, call.call_id, call.input) == ("lookup", "t1", {"order_id": "A-1"})
    assert px.params.truncated is False


def test_blocks_whole_in_their_start_event() -> None:
    (redacted,) = recorded("test_anthropic_model_thinking_part_redacted_stream")
    (search,) = recorded("test_anthropic_model_web_search_tool_stream")
    (mcp,) = recorded("test_anthropic_mcp_servers_stream")
    blocks = parse_recorded(redacted).output[0].blocks
    assert [(b.type, b.redacted) for b in blocks] == [
        ("redacted_thinking", True),
        ("redacted_thinking", True),
        ("text", False),
    ]
    search_blocks = parse_recorded(search).output[0].blocks
    use, result = search_blocks[1], search_blocks[2]
    assert use.input == {"query": "San Francisco weather today"}
    assert (result.type, result.call_id, len(result.output)) == (
        "web_search_tool_result",
        use.call_id,
        len(result.output),
    )
    assert result.output and all(item["type"] == "web_search_result" for item in result.output)
    mcp_blocks = parse_recorded(mcp).output[0].blocks
    assert [(b.type, b.tool_name) for b in mcp_blocks[1:3]] == [
        ("mcp_tool_use", "ask_question"),
        ("mcp_tool_result", None),
    ]
    assert mcp_blocks[2].call_id == mcp_blocks[1].call_id


def test_citations_delta_appends_to_the_block() -> None:
    (search,) = recorded("test_anthropic_model_web_search_tool_stream")
    content = json.loads(parse_recorded(search).output[0].raw)["content"]
    cited = [b for b in content if b["type"] == "text" and b.get("citations")]
    assert cited and cited[0]["citations"][0]["type"] == "web_search_result_location"
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0}
    events = [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="citations_delta", citation=citation),
        delta(0, type="text_delta", text="cited"),
        delta(0, type="citations_delta", citation=citation),
        block_stop(0),
        message_delta(),
        STOP,
    ]
    raw = parse(stream=sse(*events)).output[0].raw
    assert json.loads(raw)["content"] == [
        {"type": "text", "text": "cited", "citations": [citation, citation]}
    ]


def test_error_event_mid_stream_keeps_what_arrived() -> None:
    events: list[dict[str, Any] | tuple[str, str]] = [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="Half an "),
        delta(0, type="text_delta", text="answer"),
        ("error", '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    ]
    stream = sse(*events) + "event: content_block_delta\ndata: not even JSON\n\n"
    px = parse(stream=stream)
    (out,) = px.output
    assert out.raw == '{"role":"assistant","content":[{"type":"text","text":"Half an answer"}]}'
    assert (px.params.stream_error, px.params.truncated) == ("overloaded_error", True)
    assert px.params.response_id == "msg_1"


def test_error_event_mid_tool_input_keeps_the_partial_input() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}),
        delta(0, type="input_json_delta", partial_json='{"a": [1, '),
        {"type": "error", "error": {"type": "api_error", "message": "Internal"}},
    ]
    px = parse(stream=sse(*events))
    assert px.output[0].blocks[0].input == '{"a": [1, '
    assert json.loads(px.output[0].raw)["content"][0]["input"] == {}
    assert px.params.stream_error == "api_error"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ('{"type":"error","error":{"type":"overloaded_error"}}', "overloaded_error"),
        ('{"type":"error","error":"Overloaded"}', "error"),
        ('{"type":"error"}', "error"),
    ],
    ids=["typed", "string-error", "no-error-object"],
)
def test_error_event_before_message_start_leaves_no_message(error: str, expected: str) -> None:
    px = parse(stream=sse({"type": "ping"}, ("error", error)))
    assert px.output == []
    assert (px.params.stream_error, px.params.truncated) == (expected, True)
    assert len(px.history) == 1


def test_unknown_events_and_delta_types_are_ignored() -> None:
    events: list[dict[str, Any] | tuple[str, str]] = [
        message_start(),
        ("content_block_flux", "this is not JSON and is never read"),
        {"type": "brand_new_event", "index": 0, "whatever": [1, 2]},
        ("message", '{"type": "data_only_new_event", "index": 0}'),  # no `event:` name to go by
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="kept"),
        delta(0, type="sparkle_delta", sparkle="dropped"),
        block_stop(0),
        message_delta(),
        STOP,
        {"type": "ping"},
    ]
    (out,) = parse(stream=sse(*events)).output
    assert out.raw == '{"role":"assistant","content":[{"type":"text","text":"kept"}]}'


def test_unknown_block_type_in_a_stream_is_unknown_and_empty() -> None:
    events = [
        message_start(),
        block_start(0, {"type": "compaction", "content": "earlier turns, summarised"}),
        block_stop(0),
        message_delta(),
        STOP,
    ]
    (out,) = parse(stream=sse(*events)).output
    assert out.blocks == (Block("compaction", BlockClass.UNKNOWN),)
    assert "earlier turns" in out.raw


def test_spliced_message_start_starts_over() -> None:
    (r,) = recorded("spliced-message-start")
    px = parse_recorded(r)
    (out,) = px.output
    assert out.raw == (
        '{"role":"assistant","content":['
        '{"type":"thinking","thinking":"Let me call the tool.","signature":"sig-second"},'
        '{"type":"tool_use","id":"toolu_second","name":"test-tool","input":{"value":"Sparkle Day"}}'
        "]}"
    )
    assert "first" not in out.raw
    assert px.params.response_id == "msg_second"
    assert (px.params.stop_reason, px.params.truncated) == ("tool_use", False)
    assert out.blocks[1].input == {"value": "Sparkle Day"}


def test_usage_is_cumulative_latest_wins() -> None:
    events = [
        message_start(usage={"input_tokens": 9, "cache_read_input_tokens": 4, "output_tokens": 1}),
        message_delta(output_tokens=3, server_tool_use={"web_search_requests": 1}),
        message_delta(output_tokens=8, server_tool_use={"web_search_requests": 2}),
        STOP,
    ]
    p = parse(stream=sse(*events)).params
    assert (p.usage.input_tokens, p.usage.cache_read_tokens, p.usage.output_tokens) == (9, 4, 8)
    assert p.server_tool_counts == {"web_search": 2}


def test_stream_cut_before_message_stop() -> None:
    events = text_stream("a", "b")[:-1]
    with pytest.raises(FormatError) as info:
        parse(stream=sse(*events))
    assert (info.value.field, info.value.at, info.value.code) == (
        "stream",
        "$[6]",
        "truncated_stream",
    )


def test_stream_cut_inside_an_event() -> None:
    text = sse(*text_stream("a", "b"))
    cut = text.index('"text": "b"') + 3
    with pytest.raises(FormatError) as info:
        parse(stream=text[:cut])
    assert (info.value.field, info.value.at, info.value.code) == (
        "stream",
        "$[3]",
        "truncated_stream",
    )


def test_stream_cut_after_message_stop_loses_nothing() -> None:
    text = sse(*text_stream("a")) + 'event: ping\ndata: {"ty'
    (out,) = parse(stream=text).output
    assert out.blocks[0].text == "a"


def test_crlf_framing_and_data_only_events() -> None:
    text = sse(*text_stream("x", "y")).replace("\n", "\r\n")
    assert parse(stream=text).output[0].blocks[0].text == "xy"
    data_only = "".join(f"data: {json.dumps(e)}\n\n" for e in text_stream("z"))
    assert parse(stream=data_only).output[0].blocks[0].text == "z"


def test_a_long_stream_accumulates_in_linear_time() -> None:
    # Ten times the deltas cost about ten times as much (quadratic joining would cost a hundred).
    def stream(n: int) -> str:
        return sse(*text_stream(*["token "] * n))

    small, large = stream(2_000), stream(20_000)
    out = parse(stream=large).output[0]
    assert out.blocks[0].text == "token " * 20_000
    ratio = growth(lambda text: parse(stream=text), small, large, repeat=2)
    assert 4 < ratio < 30, ratio


# --- bad input --------------------------------------------------------------------------------

DEEP = "[" * 10_000 + "]" * 10_000


def _user(*content: Any) -> str:
    return _request([{"role": "user", "content": list(content)}])


def _events(*events: Any) -> str:
    return sse(*events)


def _with_text(*events: Any) -> str:
    return sse(message_start(), block_start(0, {"type": "text", "text": ""}), *events)


TOOL = {"type": "tool_use", "id": "t", "name": "f", "input": {}}

# (id, field, body text, at, code)
BAD_INPUT: list[tuple[str, str, str, str, str]] = [
    ("empty", "request", "", "$", "not_json"),
    ("not-json", "request", "{", "$", "not_json"),
    ("array", "request", "[]", "$", "wrong_type"),
    ("deep", "request", DEEP, "$", "too_deep"),
    ("nul", "request", '{"messages":[{"role":"user","content":"a\x00"}]}', "$", "not_json"),
    ("escaped-surrogate", "request", _user("\ud800"), "$", "bad_unicode"),
    ("raw-surrogate", "request", '{"messages":["\ud800"]}', "$", "bad_unicode"),
    ("no-messages", "request", '{"model":"m"}', "$.messages", "missing"),
    ("messages-object", "request", '{"messages":{}}', "$.messages", "wrong_type"),
    ("message-number", "request", '{"messages":[1]}', "$.messages[0]", "wrong_type"),
    ("no-role", "request", _request([{"content": "x"}]), "$.messages[0].role", "missing"),
    (
        "role-developer",
        "request",
        _request([{"role": "developer", "content": "x"}]),
        "$.messages[0].role",
        "bad_value",
    ),
    ("no-content", "request", _request([{"role": "user"}]), "$.messages[0].content", "missing"),
    (
        "content-null",
        "request",
        _request([{"role": "user", "content": None}]),
        "$.messages[0].content",
        "wrong_type",
    ),
    ("block-number", "request", _user(7), "$.messages[0].content[0]", "wrong_type"),
    ("block-no-type", "request", _user({}), "$.messages[0].content[0].type", "missing"),
    ("type-number", "request", _user({"type": 1}), "$.messages[0].content[0].type", "wrong_type"),
    (
        "text-null",
        "request",
        _user({"type": "text", "text": None}),
        "$.messages[0].content[0].text",
        "wrong_type",
    ),
    (
        "tool-use-no-id",
        "request",
        _request([{"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]}]),
        "$.messages[0].content[0].id",
        "missing",
    ),
    (
        "tool-use-name-null",
        "request",
        _user({"type": "server_tool_use", "id": "s", "name": None}),
        "$.messages[0].content[0].name",
        "wrong_type",
    ),
    (
        "tool-result-no-id",
        "request",
        _user({"type": "tool_result", "content": "x"}),
        "$.messages[0].content[0].tool_use_id",
        "missing",
    ),
    (
        "is-error-string",
        "request",
        _user({"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}),
        "$.messages[0].content[0].is_error",
        "wrong_type",
    ),
    (
        "thinking-number",
        "request",
        _user({"type": "thinking", "thinking": 5}),
        "$.messages[0].content[0].thinking",
        "wrong_type",
    ),
    (
        "signature-number",
        "request",
        _user({"type": "thinking", "thinking": "", "signature": 5}),
        "$.messages[0].content[0].signature",
        "wrong_type",
    ),
    ("model-number", "request", '{"model":5,"messages":[]}', "$.model", "wrong_type"),
    (
        "max-tokens-bool",
        "request",
        '{"max_tokens":true,"messages":[]}',
        "$.max_tokens",
        "wrong_type",
    ),
    ("thinking-string", "request", '{"thinking":"on","messages":[]}', "$.thinking", "wrong_type"),
    (
        "budget-string",
        "request",
        '{"thinking":{"type":"enabled","budget_tokens":"5"},"messages":[]}',
        "$.thinking.budget_tokens",
        "wrong_type",
    ),
    (
        "effort-number",
        "request",
        '{"output_config":{"effort":3},"messages":[]}',
        "$.output_config.effort",
        "wrong_type",
    ),
    ("not-json", "response", '{"content": [}', "$", "not_json"),
    ("deep", "response", DEEP, "$", "too_deep"),
    ("string", "response", '"message"', "$", "wrong_type"),
    (
        "provider-error",
        "response",
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        "$.type",
        "provider_error",
    ),
    ("other-type", "response", _response([], type="completion"), "$.type", "bad_value"),
    ("role-user", "response", _response([], role="user"), "$.role", "bad_value"),
    ("no-content", "response", '{"type":"message","role":"assistant"}', "$.content", "missing"),
    ("content-string", "response", _response("hi"), "$.content", "wrong_type"),  # type: ignore[arg-type]
    (
        "block-no-id",
        "response",
        _response([{"type": "tool_use", "name": "f", "input": {}}]),
        "$.content[0].id",
        "missing",
    ),
    (
        "result-id-number",
        "response",
        _response([{"type": "web_search_tool_result", "tool_use_id": 3}]),
        "$.content[0].tool_use_id",
        "wrong_type",
    ),
    ("model-number", "response", _response([], model=4), "$.model", "wrong_type"),
    ("stop-reason-list", "response", _response([], stop_reason=[]), "$.stop_reason", "wrong_type"),
    ("usage-string", "response", _response([], usage="lots"), "$.usage", "wrong_type"),
    (
        "tokens-string",
        "response",
        _response([], usage={"input_tokens": "5"}),
        "$.usage.input_tokens",
        "wrong_type",
    ),
    (
        "thinking-tokens-float",
        "response",
        _response([], usage={"output_tokens_details": {"thinking_tokens": 1.5}}),
        "$.usage.output_tokens_details.thinking_tokens",
        "wrong_type",
    ),
    (
        "server-counts-list",
        "response",
        _response([], usage={"server_tool_use": [1]}),
        "$.usage.server_tool_use",
        "wrong_type",
    ),
    (
        "escaped-surrogate",
        "response",
        '{"content":[{"type":"text","text":"\\udc00x"}]}',
        "$",
        "bad_unicode",
    ),
    ("empty", "stream", "", "$[0]", "truncated_stream"),
    ("comments-only", "stream", ": keep-alive\n\n", "$[0]", "truncated_stream"),
    ("data-not-json", "stream", "data: {\n\n", "$[0].data", "not_json"),
    ("data-deep", "stream", f"data: {DEEP}\n\n", "$[0].data", "too_deep"),
    ("data-array", "stream", "data: []\n\n", "$[0].data", "wrong_type"),
    ("no-type", "stream", "data: {}\n\n", "$[0].data.type", "missing"),
    (
        "block-before-start",
        "stream",
        _events(block_start(0, {"type": "text", "text": ""})),
        "$[0].data.type",
        "out_of_order",
    ),
    ("stop-before-start", "stream", _events(STOP), "$[0].data.type", "out_of_order"),
    (
        "start-no-message",
        "stream",
        _events({"type": "message_start"}),
        "$[0].data.message",
        "missing",
    ),
    (
        "start-role-user",
        "stream",
        _events(message_start(role="user")),
        "$[0].data.message.role",
        "bad_value",
    ),
    (
        "start-content-number",
        "stream",
        _events(message_start(content=[3])),
        "$[0].data.message.content[0]",
        "wrong_type",
    ),
    (
        "index-string",
        "stream",
        _events(message_start(), block_start("0", {"type": "text"})),  # type: ignore[arg-type]
        "$[1].data.index",
        "wrong_type",
    ),
    (
        "block-not-object",
        "stream",
        _events(message_start(), {"type": "content_block_start", "index": 0, "content_block": "t"}),
        "$[1].data.content_block",
        "wrong_type",
    ),
    (
        "duplicate-index",
        "stream",
        _with_text(block_start(0, {"type": "text", "text": ""})),
        "$[2].data.index",
        "duplicate_index",
    ),
    (
        "delta-without-start",
        "stream",
        _events(message_start(), delta(0, type="text_delta", text="x"), STOP),
        "$[1].data.index",
        "unknown_index",
    ),
    (
        "stop-without-start",
        "stream",
        _events(message_start(), block_stop(2), STOP),
        "$[1].data.index",
        "unknown_index",
    ),
    (
        "delta-after-stop",
        "stream",
        _with_text(block_stop(0), delta(0, type="text_delta", text="x")),
        "$[3].data.index",
        "block_stopped",
    ),
    (
        "delta-missing",
        "stream",
        _with_text({"type": "content_block_delta", "index": 0}),
        "$[2].data.delta",
        "missing",
    ),
    (
        "text-delta-number",
        "stream",
        _with_text(delta(0, type="text_delta", text=5)),
        "$[2].data.delta.text",
        "wrong_type",
    ),
    (
        "start-text-number",
        "stream",
        _events(
            message_start(),
            block_start(0, {"type": "text", "text": 5}),
            delta(0, type="text_delta", text="x"),
        ),
        "$[1].data.content_block.text",
        "wrong_type",
    ),
    (
        "citation-string",
        "stream",
        _with_text(delta(0, type="citations_delta", citation="x")),
        "$[2].data.delta.citation",
        "wrong_type",
    ),
    (
        "block-missing-id",
        "stream",
        _events(
            message_start(),
            block_start(0, {"type": "tool_use", "name": "f", "input": {}}),
            block_stop(0),
            message_delta(),
            STOP,
        ),
        "$[1].data.content_block.id",
        "missing",
    ),
    (
        "deep-tool-input",
        "stream",
        _events(
            message_start(),
            block_start(0, TOOL),
            delta(0, type="input_json_delta", partial_json=DEEP),
            block_stop(0),
        ),
        "$[1].data.content_block",
        "too_deep",
    ),
    (
        "usage-string",
        "stream",
        _events(message_start(), message_delta(output_tokens="9"), STOP),
        "$[1].data.usage.output_tokens",
        "wrong_type",
    ),
    (
        "stop-reason-number",
        "stream",
        _events(message_start(), {"type": "message_delta", "delta": {"stop_reason": 1}}, STOP),
        "$[1].data.delta.stop_reason",
        "wrong_type",
    ),
    (
        "event-after-stop",
        "stream",
        _events(*text_stream("a"), message_start("msg_2")),
        "$[6].data.type",
        "after_stop",
    ),
    ("no-message-stop", "stream", _events(*text_stream("a")[:-1]), "$[5]", "truncated_stream"),
    (
        "escaped-surrogate",
        "stream",
        'data: {"type":"message_start","message":{"id":"\\ud800"}}\n\n',
        "$[0].data.message.id",  # checked where it is stored (a pair may span two deltas)
        "bad_unicode",
    ),
]


@pytest.mark.parametrize(
    ("field", "body", "at", "code"),
    [row[1:] for row in BAD_INPUT],
    ids=[f"{row[1]}-{row[0]}" for row in BAD_INPUT],
)
def test_bad_input_is_a_precise_format_error(field: str, body: str, at: str, code: str) -> None:
    kwargs: dict[str, Any] = {"request": MIN_REQUEST, "response": None, "stream": None}
    if field == "request":
        kwargs["response"] = _response([])
    kwargs[field] = body
    with pytest.raises(FormatError) as info:
        PARSER.parse(**kwargs)
    assert (info.value.field, info.value.at, info.value.code) == (field, at, code)
    assert info.value.detail


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"request": None, "response": "{}", "stream": None}, "request"),
        ({"request": MIN_REQUEST, "response": b"{}", "stream": None}, "response"),
        ({"request": MIN_REQUEST, "response": None, "stream": 12}, "stream"),
    ],
    ids=["request-none", "response-bytes", "stream-int"],
)
def test_non_string_bodies(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(FormatError) as info:
        PARSER.parse(**kwargs)
    assert (info.value.field, info.value.code) == (field, "wrong_type")


# --- Hypothesis: nothing but FormatError, whatever comes in -----------------------------------

KNOWN_WORDS = [
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
    "server_tool_use",
    "web_search_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "image",
    "message",
    "assistant",
    "user",
    "error",
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "text_delta",
    "thinking_delta",
    "signature_delta",
    "input_json_delta",
    "citations_delta",
    "max_tokens",
    "refusal",
    '{"a":',
    "",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(KNOWN_WORDS)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8) | st.sampled_from(KNOWN_WORDS), children, max_size=4)
    ),
    max_leaves=12,
)

REQUEST_TEMPLATE: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 100,
    "thinking": {"type": "enabled", "budget_tokens": 50},
    "output_config": {"effort": "high"},
    "messages": [
        {"role": "user", "content": "hello"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "calling", "citations": []},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": False},
                {"type": "image", "source": {"type": "base64", "data": "AA"}},
            ],
        },
    ],
}

RESPONSE_TEMPLATE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test-1",
    "content": [
        {"type": "thinking", "thinking": "", "signature": "sig"},
        {"type": "text", "text": "answer"},
        {"type": "mcp_tool_use", "id": "m1", "name": "echo", "input": {}, "server_name": "s"},
        {"type": "mcp_tool_result", "tool_use_id": "m1", "is_error": False, "content": []},
    ],
    "stop_reason": "max_tokens",
    "usage": {
        "input_tokens": 1,
        "cache_read_input_tokens": 2,
        "cache_creation_input_tokens": 3,
        "output_tokens": 4,
        "output_tokens_details": {"thinking_tokens": 1},
        "server_tool_use": {"web_search_requests": 1},
    },
}

STREAM_TEMPLATE: list[dict[str, Any]] = [
    message_start(),
    block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
    {"type": "ping"},
    delta(0, type="thinking_delta", thinking="hm"),
    delta(0, type="signature_delta", signature="sig"),
    block_stop(0),
    block_start(1, {"type": "text", "text": "", "citations": []}),
    delta(1, type="text_delta", text="hi"),
    delta(1, type="citations_delta", citation={"type": "char_location"}),
    block_stop(1),
    block_start(2, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}),
    delta(2, type="input_json_delta", partial_json='{"a": '),
    delta(2, type="input_json_delta", partial_json="1}"),
    block_stop(2),
    block_start(3, {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}),
    block_stop(3),
    message_delta("tool_use", output_tokens=5, server_tool_use={"web_search_requests": 1}),
    STOP,
]


def _parse_or_format_error(**kwargs: Any) -> ParsedExchange | None:
    try:
        px = PARSER.parse(**{"request": MIN_REQUEST, "response": None, "stream": None, **kwargs})
    except FormatError as exc:
        assert exc.field in ("request", "response", "stream")
        assert exc.at.startswith("$")
        assert exc.code and exc.detail
        return None
    assert isinstance(px, ParsedExchange)
    for message in px.output:
        json.loads(message.raw)  # every output message is JSON a replay can send
    return px


def test_templates_parse_as_they_are() -> None:
    # the mutation tests below start from documents that are valid, so a mutation is what fails
    px = _parse_or_format_error(request=json.dumps(REQUEST_TEMPLATE), stream=sse(*STREAM_TEMPLATE))
    assert px is not None and len(px.history) == 3
    px = _parse_or_format_error(response=json.dumps(RESPONSE_TEMPLATE))
    assert px is not None and px.params.truncated


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REQUEST_PATHS = paths(REQUEST_TEMPLATE)
RESPONSE_PATHS = paths(RESPONSE_TEMPLATE)
STREAM_PATHS = paths(STREAM_TEMPLATE)[1:]  # below the event list itself


@FUZZ
@given(text=st.text())
def test_random_text_anywhere_raises_only_format_error(text: str) -> None:
    _parse_or_format_error(request=text, response=json.dumps(RESPONSE_TEMPLATE))
    _parse_or_format_error(response=text)
    _parse_or_format_error(stream=text)
    _parse_or_format_error(stream="data: " + text + "\n\n")


@FUZZ
@given(path=st.sampled_from(REQUEST_PATHS), value=json_values, delete=st.booleans())
def test_random_json_in_the_request(path: tuple[Any, ...], value: Any, delete: bool) -> None:
    doc = replaced(REQUEST_TEMPLATE, path, value, delete=delete and bool(path))
    _parse_or_format_error(request=json.dumps(doc), response=json.dumps(RESPONSE_TEMPLATE))


@FUZZ
@given(path=st.sampled_from(RESPONSE_PATHS), value=json_values, delete=st.booleans())
def test_random_json_in_the_response(path: tuple[Any, ...], value: Any, delete: bool) -> None:
    doc = replaced(RESPONSE_TEMPLATE, path, value, delete=delete and bool(path))
    _parse_or_format_error(response=json.dumps(doc))


@FUZZ
@given(path=st.sampled_from(STREAM_PATHS), value=json_values, delete=st.booleans())
def test_random_json_in_the_stream(path: tuple[Any, ...], value: Any, delete: bool) -> None:
    events = replaced(STREAM_TEMPLATE, path, value, delete=delete and len(path) > 1)
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    _parse_or_format_error(stream=text)


@FUZZ
@given(cut=st.integers(min_value=0, max_value=10**6))
def test_any_prefix_of_a_stream(cut: int) -> None:
    text = sse(*STREAM_TEMPLATE)
    prefix = text[: cut % (len(text) + 1)]
    px = _parse_or_format_error(stream=prefix)
    if px is not None:  # only a prefix that kept message_stop whole may parse
        assert '"message_stop"' in prefix
        assert px.output[0].blocks[2].input == {"a": 1}


@FUZZ
@given(
    events=st.lists(
        st.sampled_from(STREAM_TEMPLATE)
        | st.fixed_dictionaries({"type": st.sampled_from(KNOWN_WORDS)}),
        max_size=25,
    )
)
def test_events_in_any_order(events: list[dict[str, Any]]) -> None:
    _parse_or_format_error(stream="".join(f"data: {json.dumps(e)}\n\n" for e in events))


def test_the_fuzz_targets_reach_the_code() -> None:
    # a mutation that breaks nothing must still parse, or the fuzz tests prove little
    quiet = replaced(REQUEST_TEMPLATE, ("messages", 1, "content", 3, "input"), [1, {"x": None}])
    assert _parse_or_format_error(request=json.dumps(quiet), response=json.dumps(RESPONSE_TEMPLATE))
    loud = replaced(RESPONSE_TEMPLATE, ("content", 1, "text"), 5)
    assert _parse_or_format_error(response=json.dumps(loud)) is None
