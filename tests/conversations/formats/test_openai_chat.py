"""openai.chat: recorded DeepSeek fixtures, the byte-exact choices[0].message, stream
accumulation, NEVER never leaking into a Block, stream edge cases, bad input and random input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversations.blocks import BlockClass, ParsedExchange
from conversations.formats import get
from conversations.formats.base import FormatError, compact
from conversations.formats.sse import iter_events
from tests.conversations.formats.json_paths import json_values, paths, replaced
from tests.providers import Recorded, fixture_files, format_of, load

FMT = "openai.chat"
FILES = [f for f in fixture_files() if format_of(f) == FMT]
RECORDED = [r for f in FILES for r in load(f)]
RESPONSES = [r for r in RECORDED if r.response is not None]
STREAMS = [r for r in RECORDED if r.stream is not None]
# The recordings kept only the response: they get a minimal request.
MIN_REQUEST = json.dumps(
    {"model": "deepseek-reasoner", "messages": [{"role": "user", "content": "How many r's?"}]}
)


def parse(request: str, response: str | None = None, stream: str | None = None) -> ParsedExchange:
    return get(FMT).parse(request=request, response=response, stream=stream)


def parse_recorded(r: Recorded) -> ParsedExchange:
    return parse(r.request or MIN_REQUEST, r.response, r.stream)


def ids(records: list[Recorded]) -> list[str]:
    return [r.name for r in records]


def all_blocks(parsed: ParsedExchange) -> list[Any]:
    return [b for m in [*parsed.history, *parsed.output] for b in m.blocks]


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "gpt-x",
        "choices": choices,
        **extra,
    }


def sse(*payloads: Any, done: bool = True) -> str:
    text = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads)
    return text + ("data: [DONE]\n\n" if done else "")


def test_the_three_recordings_are_there() -> None:
    assert len(RESPONSES) == 2 and len(STREAMS) == 1


@pytest.mark.parametrize("rec", RECORDED, ids=ids(RECORDED))
def test_every_fixture_parses(rec: Recorded) -> None:
    parsed = parse_recorded(rec)
    (message,) = parsed.output
    assert message.role == "assistant"
    first = message.blocks[0]
    assert (first.type, first.cls) == ("reasoning_content", BlockClass.NEVER)
    assert parsed.params.response_model == "deepseek-reasoner"
    assert parsed.params.usage.reasoning_tokens and parsed.params.usage.input_tokens
    assert parsed.params.truncated is False and parsed.params.stream_error is None
    assert [m.raw for m in parsed.history] == ['{"role": "user", "content": "How many r\'s?"}']


@pytest.mark.parametrize("rec", RESPONSES, ids=ids(RESPONSES))
def test_response_raw_is_the_exact_message_text(rec: Recorded) -> None:
    assert rec.response is not None
    text = rec.response
    # found independently: the value after the first "message" key, decoded in place
    start = text.index('"message"') + len('"message"')
    start = text.index("{", start)
    value, end = json.JSONDecoder().raw_decode(text, start)
    (message,) = parse_recorded(rec).output
    assert message.raw == text[start:end]
    assert value == json.loads(text)["choices"][0]["message"]
    assert message.raw != compact(value)  # the recording is pretty-printed, and stays so


def test_reasoning_response_blocks_and_params() -> None:
    (rec,) = load("vercel-ai__deepseek-reasoning.json")
    parsed = parse_recorded(rec)
    (message,) = parsed.output
    assert [(b.type, b.cls) for b in message.blocks] == [
        ("reasoning_content", BlockClass.NEVER),
        ("content", BlockClass.VISIBLE),
    ]
    assert message.blocks[1].text is not None and message.blocks[1].text.startswith(
        'The word "strawberry" contains three'
    )
    p = parsed.params
    assert (p.requested_model, p.response_id) == (
        "deepseek-reasoner",
        "945bb10c-9bf3-47ff-a2a2-43bbe9705c72",
    )
    assert (p.usage.input_tokens, p.usage.cache_read_tokens) == (18, 0)
    assert (p.usage.output_tokens, p.usage.reasoning_tokens) == (345, 315)
    assert (p.stop_reason, p.refusal) == ("stop", False)


def test_tool_call_response() -> None:
    (rec,) = load("vercel-ai__deepseek-tool-call.json")
    parsed = parse_recorded(rec)
    (message,) = parsed.output
    # content "" shows nothing, so there is no content block
    assert [(b.type, b.cls) for b in message.blocks] == [
        ("reasoning_content", BlockClass.NEVER),
        ("tool_calls", BlockClass.AUDIT),
    ]
    call = message.blocks[1]
    assert (call.tool_name, call.call_id, call.input) == (
        "weather",
        "call_00_9V0vrf86Pc9aelHCJMZqnJBo",
        {"location": "San Francisco"},
    )
    assert parsed.params.stop_reason == "tool_calls"
    assert parsed.params.usage.cache_read_tokens == 320


def test_deepseek_cache_hit_tokens_when_details_are_absent() -> None:
    body = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 30, "completion_tokens": 2, "prompt_cache_hit_tokens": 24},
    }
    assert parse(MIN_REQUEST, json.dumps(body)).params.usage.cache_read_tokens == 24


# --- the recorded stream ------------------------------------------------------------------------


def test_recorded_stream_accumulates_one_message() -> None:
    (rec,) = STREAMS
    assert rec.stream is not None
    chunks = [json.loads(e.data) for e in iter_events(rec.stream)]
    parsed = parse_recorded(rec)
    (message,) = parsed.output
    value = json.loads(message.raw)
    assert compact(value) == message.raw  # serialised once, compactly
    assert list(value) == ["role", "reasoning_content", "content"]  # first-given order
    assert value["role"] == "assistant"
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert value["reasoning_content"] == "".join(d["reasoning_content"] or "" for d in deltas)
    assert value["content"] == "".join(d["content"] or "" for d in deltas)
    assert value["reasoning_content"] and value["content"]
    p = parsed.params
    assert (
        p.usage.reasoning_tokens
        == 205
        == chunks[-1]["usage"]["completion_tokens_details"]["reasoning_tokens"]
    )
    assert (p.usage.input_tokens, p.usage.output_tokens) == (18, 219)
    assert (p.stop_reason, p.response_id) == ("stop", "cac7192e-e619-40c6-96b0-ed4276bc03ac")
    assert [(b.type, b.cls) for b in message.blocks] == [
        ("reasoning_content", BlockClass.NEVER),
        ("content", BlockClass.VISIBLE),
    ]
    assert message.blocks[1].text == value["content"]


# --- NEVER content ------------------------------------------------------------------------------


def _reasoning_strings(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("reasoning_content", "reasoning") and isinstance(v, str) and len(v) >= 20:
                found.add(v)
            else:
                found |= _reasoning_strings(v)
    elif isinstance(value, list):
        for v in value:
            found |= _reasoning_strings(v)
    return found


@pytest.mark.parametrize("rec", RECORDED, ids=ids(RECORDED))
def test_never_content_does_not_leak_into_blocks(rec: Recorded) -> None:
    parsed = parse_recorded(rec)
    secrets = _reasoning_strings(json.loads(rec.response)) if rec.response else set()
    for message in parsed.output:  # the stream's whole reasoning only exists accumulated
        secrets |= _reasoning_strings(json.loads(message.raw))
    assert secrets
    shown = "\n".join(repr(b) for b in all_blocks(parsed))
    assert [s[:40] for s in secrets if s in shown] == []


def test_planted_reasoning_in_history_stays_out_of_blocks() -> None:
    request = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello", "reasoning_content": "PLANTED-MARKER-1"},
            {"role": "assistant", "content": "again", "reasoning": "PLANTED-MARKER-2"},
            {"role": "assistant", "content": [{"type": "reasoning", "text": "PLANTED-MARKER-3"}]},
        ],
    }
    parsed = parse(
        json.dumps(request),
        stream=sse(chunk({"role": "assistant", "reasoning": "PLANTED-MARKER-4"}, "stop")),
    )
    shown = repr(all_blocks(parsed))
    assert "PLANTED-MARKER" not in shown
    assert [b.cls for b in parsed.history[3].blocks] == [BlockClass.NEVER]
    assert [(b.type, b.cls) for b in parsed.output[0].blocks] == [("reasoning", BlockClass.NEVER)]


# --- history ------------------------------------------------------------------------------------


def test_history_messages_blocks_and_raws() -> None:
    request = (
        '{"model": "gpt-5", "max_completion_tokens": 500, "max_tokens": 9,'
        ' "reasoning_effort": "low",'
        ' "messages": [\n'
        '  {"role": "system", "content": "Be brief."},\n'
        '  {"role": "developer", "content": [{"type": "text", "text": "dev"}]},\n'
        '  {"role": "user", "content": [{"type": "text", "text": "look"},'
        ' {"type": "image_url", "image_url": {"url": "https://x/a.png"}},'
        ' {"type": "text", "text": "here"}]},\n'
        '  {"role": "assistant", "reasoning_content": "why", "content": null, "refusal": "no",'
        ' "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather",'
        ' "arguments": "{\\"city\\": \\"Paris\\"}"}}, {"id": "call_2", "type": "function",'
        ' "function": {"name": "time", "arguments": "{\\"tz\\": "}}]},\n'
        '  {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},\n'
        '  {"role": "assistant", "content": [{"type": "refusal", "refusal": "no way"}]}\n'
        "]}"
    )
    parsed = parse(request, stream=sse(chunk({"role": "assistant", "content": "ok"}, "stop")))
    h = parsed.history
    assert [m.role for m in h] == ["system", "developer", "user", "assistant", "tool", "assistant"]
    assert h[0].raw == '{"role": "system", "content": "Be brief."}'
    assert all(m.raw in request for m in h)
    assert [json.loads(m.raw) for m in h] == json.loads(request)["messages"]
    assert [(b.type, b.cls, b.text) for b in h[2].blocks] == [
        ("content", BlockClass.VISIBLE, "look"),
        ("image_url", BlockClass.UNKNOWN, None),
        ("content", BlockClass.VISIBLE, "here"),
    ]
    assistant = h[3].blocks
    assert [(b.type, b.cls) for b in assistant] == [
        ("reasoning_content", BlockClass.NEVER),
        ("refusal", BlockClass.VISIBLE),
        ("tool_calls", BlockClass.AUDIT),
        ("tool_calls", BlockClass.AUDIT),
    ]
    assert assistant[1].text == "no"
    assert (assistant[2].tool_name, assistant[2].call_id, assistant[2].input) == (
        "weather",
        "call_1",
        {"city": "Paris"},
    )
    assert assistant[3].input == '{"tz": '  # invalid JSON: the raw string
    (tool,) = h[4].blocks
    assert (tool.type, tool.cls, tool.call_id, tool.output) == (
        "tool",
        BlockClass.AUDIT,
        "call_1",
        "sunny",
    )
    assert [(b.type, b.text) for b in h[5].blocks] == [("refusal", "no way")]
    p = parsed.params
    assert (p.requested_model, p.max_tokens, p.effort) == ("gpt-5", 500, "low")


def test_request_params_of_compatible_providers() -> None:
    request = json.dumps(
        {
            "model": "deepseek/deepseek-r1",
            "max_tokens": 1000,
            "reasoning": {"effort": "high", "max_tokens": 800},
            "thinking": {"type": "enabled"},
            "messages": [],
        }
    )
    p = parse(request, stream=sse(chunk({"content": "x"}, "stop"))).params
    assert (p.max_tokens, p.effort, p.budget_tokens, p.thinking) == (1000, "high", 800, "enabled")


def test_response_refusal_and_content_filter() -> None:
    refused = {
        "choices": [
            {
                "message": {"role": "assistant", "content": None, "refusal": "I can't."},
                "finish_reason": "stop",
            }
        ]
    }
    parsed = parse(MIN_REQUEST, json.dumps(refused))
    assert [(b.type, b.cls, b.text) for b in parsed.output[0].blocks] == [
        ("refusal", BlockClass.VISIBLE, "I can't.")
    ]
    assert parsed.params.refusal is True
    filtered = {
        "choices": [
            {"message": {"role": "assistant", "content": "par"}, "finish_reason": "content_filter"}
        ]
    }
    assert parse(MIN_REQUEST, json.dumps(filtered)).params.refusal is True
    cut = {
        "choices": [{"message": {"role": "assistant", "content": "par"}, "finish_reason": "length"}]
    }
    p = parse(MIN_REQUEST, json.dumps(cut)).params
    assert (p.truncated, p.stop_reason, p.refusal) == (True, "length", False)


# --- synthetic streams --------------------------------------------------------------------------


def test_stream_tool_calls_accumulate_by_index() -> None:
    payloads = [
        chunk({"role": "assistant", "content": None}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "weather", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "time", "arguments": '{"tz":'},
                    }
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "function": {"arguments": '"Paris"}'}},
                    {"index": 1, "function": {"arguments": '"UTC"}'}},
                ]
            }
        ),
        chunk({}, "tool_calls"),
        chunk(None, usage={"prompt_tokens": 5, "completion_tokens": 6}),
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    (message,) = parsed.output
    assert message.raw == compact(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "time", "arguments": '{"tz":"UTC"}'},
                },
            ],
        }
    )
    assert [(b.tool_name, b.call_id, b.input) for b in message.blocks] == [
        ("weather", "call_a", {"city": "Paris"}),
        ("time", "call_b", {"tz": "UTC"}),
    ]
    assert (parsed.params.stop_reason, parsed.params.usage.output_tokens) == ("tool_calls", 6)


def test_stream_key_kept_once_given_a_string_even_empty() -> None:
    payloads = [
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        chunk({"content": None, "reasoning_content": None}),
        chunk({"content": "Hi", "reasoning_content": None}, "stop"),
    ]
    (message,) = parse(MIN_REQUEST, stream=sse(*payloads)).output
    assert message.raw == '{"role":"assistant","reasoning_content":"","content":"Hi"}'
    assert [(b.type, b.cls) for b in message.blocks] == [
        ("reasoning_content", BlockClass.NEVER),
        ("content", BlockClass.VISIBLE),
    ]


def test_stream_refusal_and_non_ascii() -> None:
    payloads = [
        chunk({"role": "assistant", "refusal": "Désolé, "}),
        chunk({"refusal": "non ✓"}, "stop"),
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    assert parsed.output[0].raw == '{"role":"assistant","refusal":"Désolé, non ✓"}'
    assert parsed.params.refusal is True


def test_stream_ends_with_finish_reason_and_no_done() -> None:
    parsed = parse(MIN_REQUEST, stream=sse(chunk({"content": "x"}, "length"), done=False))
    p = parsed.params
    assert (p.stop_reason, p.truncated) == ("length", True)
    assert parsed.output[0].role == "assistant"  # no role delta came: the default
    assert parsed.output[0].raw == '{"content":"x"}'


def test_stream_ends_with_done_and_no_finish_reason() -> None:
    parsed = parse(MIN_REQUEST, stream=sse(chunk({"role": "assistant", "content": "x"})))
    assert (
        parsed.params.stop_reason is None
        and parsed.output[0].raw == '{"role":"assistant","content":"x"}'
    )


def test_stream_without_end_is_truncated() -> None:
    with pytest.raises(FormatError) as exc:
        parse(MIN_REQUEST, stream=sse(chunk({"content": "a"}), chunk({"content": "b"}), done=False))
    assert (exc.value.field, exc.value.code, exc.value.at) == ("stream", "truncated_stream", "$[1]")
    with pytest.raises(FormatError) as exc:
        parse(MIN_REQUEST, stream="")
    assert (exc.value.field, exc.value.code, exc.value.at) == ("stream", "truncated_stream", "$")


def test_stream_cut_inside_an_event() -> None:
    text = sse(chunk({"content": "a"}), chunk({"content": "b"}, "stop"), done=False)
    with pytest.raises(FormatError) as exc:
        parse(MIN_REQUEST, stream=text[: text.rindex("stop")])
    assert (exc.value.field, exc.value.code, exc.value.at) == ("stream", "truncated_stream", "$[1]")


def test_stream_error_chunk_keeps_what_arrived() -> None:
    payloads = [
        chunk({"role": "assistant", "content": "Part"}),
        chunk({"content": "ial"}),
        {"error": {"message": "Internal error", "type": "server_error", "code": None}},
        chunk({"content": "IGNORED"}, "stop"),
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads, done=False))
    assert parsed.output[0].raw == '{"role":"assistant","content":"Partial"}'
    p = parsed.params
    assert (p.stream_error, p.truncated, p.stop_reason) == ("server_error", True, None)


def test_stream_error_with_numeric_code() -> None:  # OpenRouter's mid-stream error shape
    payloads = [
        chunk({"role": "assistant", "content": "a"}),
        {**chunk({"content": ""}, "error"), "error": {"code": 502, "message": "x"}},
    ]
    assert parse(MIN_REQUEST, stream=sse(*payloads)).params.stream_error == "502"


def test_stream_other_choices_and_unknown_keys() -> None:
    payloads = [
        {
            "choices": [
                {"index": 1, "delta": {"content": "OTHER"}},
                {"index": 0, "delta": {"role": "assistant", "content": "a"}},
            ]
        },
        chunk({"content": "b", "annotations": [{"u": 1}], "audio": {"id": "x"}}),
        chunk({"annotations": [{"u": 2}], "audio": {"id": "y"}, "content": None}, "stop"),
    ]
    (message,) = parse(MIN_REQUEST, stream=sse(*payloads)).output
    assert json.loads(message.raw) == {
        "role": "assistant",
        "content": "ab",
        "annotations": [{"u": 1}, {"u": 2}],
        "audio": {"id": "x"},  # objects merge; an id names the object and stays (issue 13)
    }


def test_stream_ignores_comments_and_events_after_done() -> None:
    text = ": keep-alive\n\n" + sse(chunk({"content": "a"}, "stop")) + "data: {not json\n\n"
    assert parse(MIN_REQUEST, stream=text).output[0].raw == '{"content":"a"}'


# --- bad input ----------------------------------------------------------------------------------

OK_RESPONSE = json.dumps(
    {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}
        ]
    }
)


def req(*messages: Any, **changes: Any) -> str:
    return json.dumps(
        {"model": "m", "messages": list(messages) or [{"role": "user", "content": "q"}], **changes}
    )


def resp(message: Any = None, **changes: Any) -> str:
    body = json.loads(OK_RESPONSE)
    if message is not None:
        body["choices"][0]["message"] = message
    body.update(changes)
    return json.dumps(body)


BAD = [
    ("request-not-json", "{", OK_RESPONSE, None, "request", "$", "not_json"),
    ("request-string", '"x"', OK_RESPONSE, None, "request", "$", "wrong_type"),
    ("request-deep", "[" * 10_000 + "]" * 10_000, OK_RESPONSE, None, "request", "$", "too_deep"),
    (
        "request-nul",
        '{"model":"m","messages":[]}\x00',
        OK_RESPONSE,
        None,
        "request",
        "$",
        "not_json",
    ),
    (
        "model-missing",
        json.dumps({"messages": []}),
        OK_RESPONSE,
        None,
        "request",
        "$.model",
        "missing",
    ),
    (
        "messages-missing",
        json.dumps({"model": "m"}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages",
        "missing",
    ),
    (
        "messages-object",
        json.dumps({"model": "m", "messages": {}}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages",
        "wrong_type",
    ),
    (
        "max-tokens-string",
        req(max_tokens="9"),
        OK_RESPONSE,
        None,
        "request",
        "$.max_tokens",
        "wrong_type",
    ),
    (
        "effort-number",
        req(reasoning_effort=1),
        OK_RESPONSE,
        None,
        "request",
        "$.reasoning_effort",
        "wrong_type",
    ),
    (
        "stream-flag-string",
        req(stream="yes"),
        OK_RESPONSE,
        None,
        "request",
        "$.stream",
        "wrong_type",
    ),
    ("message-array", req([1]), OK_RESPONSE, None, "request", "$.messages[0]", "wrong_type"),
    (
        "role-missing",
        req({"content": "x"}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].role",
        "missing",
    ),
    (
        "role-unknown",
        req({"role": "bot", "content": "x"}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].role",
        "wrong_value",
    ),
    (
        "content-number",
        req({"role": "user", "content": 1}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].content",
        "wrong_type",
    ),
    (
        "part-string",
        req({"role": "user", "content": ["x"]}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].content[0]",
        "wrong_type",
    ),
    (
        "part-no-type",
        req({"role": "user", "content": [{"text": "x"}]}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].content[0].type",
        "missing",
    ),
    (
        "part-text-missing",
        req({"role": "user", "content": [{"type": "text"}]}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].content[0].text",
        "missing",
    ),
    (
        "refusal-number",
        req({"role": "assistant", "refusal": 1}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].refusal",
        "wrong_type",
    ),
    (
        "tool-calls-object",
        req({"role": "assistant", "tool_calls": {}}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].tool_calls",
        "wrong_type",
    ),
    (
        "tool-call-string",
        req({"role": "assistant", "tool_calls": ["x"]}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].tool_calls[0]",
        "wrong_type",
    ),
    (
        "tool-call-args-object",
        req(
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}],
            }
        ),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].tool_calls[0].function.arguments",
        "wrong_type",
    ),
    (
        "tool-no-call-id",
        req({"role": "tool", "content": "x"}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].tool_call_id",
        "missing",
    ),
    (
        "tool-no-content",
        req({"role": "tool", "tool_call_id": "c"}),
        OK_RESPONSE,
        None,
        "request",
        "$.messages[0].content",
        "missing",
    ),
    ("response-not-json", req(), "nope", None, "response", "$", "not_json"),
    ("response-array", req(), "[]", None, "response", "$", "wrong_type"),
    (
        "response-deep",
        req(),
        '{"a":' * 10_000 + "1" + "}" * 10_000,
        None,
        "response",
        "$",
        "too_deep",
    ),
    (
        "response-error",
        req(),
        json.dumps({"error": {"message": "bad", "code": "invalid_api_key"}}),
        None,
        "response",
        "$.error",
        "provider_error",
    ),
    ("choices-missing", req(), json.dumps({"id": "x"}), None, "response", "$.choices", "missing"),
    ("choices-empty", req(), json.dumps({"choices": []}), None, "response", "$.choices", "empty"),
    (
        "choices-object",
        req(),
        json.dumps({"choices": {}}),
        None,
        "response",
        "$.choices",
        "wrong_type",
    ),
    (
        "choice-number",
        req(),
        json.dumps({"choices": [1]}),
        None,
        "response",
        "$.choices[0]",
        "wrong_type",
    ),
    (
        "message-missing",
        req(),
        json.dumps({"choices": [{"finish_reason": "stop"}]}),
        None,
        "response",
        "$.choices[0].message",
        "missing",
    ),
    (
        "message-content-number",
        req(),
        resp({"role": "assistant", "content": 5}),
        None,
        "response",
        "$.choices[0].message.content",
        "wrong_type",
    ),
    (
        "message-role-number",
        req(),
        resp({"role": 5}),
        None,
        "response",
        "$.choices[0].message.role",
        "wrong_type",
    ),
    (
        "finish-number",
        req(),
        json.dumps({"choices": [{"message": {}, "finish_reason": 1}]}),
        None,
        "response",
        "$.choices[0].finish_reason",
        "wrong_type",
    ),
    ("usage-string", req(), resp(usage="x"), None, "response", "$.usage", "wrong_type"),
    (
        "usage-tokens-bool",
        req(),
        resp(usage={"prompt_tokens": True}),
        None,
        "response",
        "$.usage.prompt_tokens",
        "wrong_type",
    ),
    (
        "cached-string",
        req(),
        resp(usage={"prompt_tokens_details": {"cached_tokens": "1"}}),
        None,
        "response",
        "$.usage.prompt_tokens_details.cached_tokens",
        "wrong_type",
    ),
    ("model-number", req(), resp(model=1), None, "response", "$.model", "wrong_type"),
    ("stream-not-json", req(), None, "data: {x\n\n", "stream", "$[0].data", "not_json"),
    ("stream-number", req(), None, "data: 5\n\n", "stream", "$[0].data", "wrong_type"),
    (
        "stream-deep",
        req(),
        None,
        "data: " + "[" * 10_000 + "\n\n",
        "stream",
        "$[0].data",
        "too_deep",
    ),
    (
        "stream-choices-object",
        req(),
        None,
        sse({"choices": {}}),
        "stream",
        "$[0].data.choices",
        "wrong_type",
    ),
    (
        "stream-choice-number",
        req(),
        None,
        sse({"choices": [1]}),
        "stream",
        "$[0].data.choices[0]",
        "wrong_type",
    ),
    (
        "stream-delta-string",
        req(),
        None,
        sse({"choices": [{"delta": "x"}]}),
        "stream",
        "$[0].data.choices[0].delta",
        "wrong_type",
    ),
    (
        "stream-content-number",
        req(),
        None,
        sse(chunk({"content": 1})),
        "stream",
        "$[0].data.choices[0].delta.content",
        "wrong_type",
    ),
    (
        "stream-reasoning-list",
        req(),
        None,
        sse(chunk({"reasoning_content": []})),
        "stream",
        "$[0].data.choices[0].delta.reasoning_content",
        "wrong_type",
    ),
    (
        "stream-tool-calls-object",
        req(),
        None,
        sse(chunk({"tool_calls": {}})),
        "stream",
        "$[0].data.choices[0].delta.tool_calls",
        "wrong_type",
    ),
    (
        "stream-tool-index-string",
        req(),
        None,
        sse(chunk({"tool_calls": [{"index": "0"}]})),
        "stream",
        "$[0].data.choices[0].delta.tool_calls[0].index",
        "wrong_type",
    ),
    (
        "stream-tool-args-number",
        req(),
        None,
        sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": 1}}]})),
        "stream",
        "$[0].data.choices[0].delta.tool_calls[0].function.arguments",
        "wrong_type",
    ),
    (
        "stream-finish-number",
        req(),
        None,
        sse(chunk({}, 1)),
        "stream",
        "$[0].data.choices[0].finish_reason",
        "wrong_type",
    ),
    (
        "stream-usage-tokens-string",
        req(),
        None,
        sse(chunk({}, "stop"), chunk(None, usage={"completion_tokens": "1"})),
        "stream",
        "$[1].data.usage.completion_tokens",
        "wrong_type",
    ),
    (
        "stream-lone-surrogate",
        req(),
        None,
        sse(chunk({"content": "\ud800"}, "stop")),
        "stream",
        "$",
        "invalid_unicode",
    ),
]


@pytest.mark.parametrize(
    ("request_text", "response", "stream", "field", "at", "code"),
    [case[1:] for case in BAD],
    ids=[case[0] for case in BAD],
)
def test_bad_input(
    request_text: str, response: str | None, stream: str | None, field: str, at: str, code: str
) -> None:
    with pytest.raises(FormatError) as exc:
        parse(request_text, response, stream)
    assert (exc.value.field, exc.value.at, exc.value.code) == (field, at, code)
    assert exc.value.detail


# --- random input -------------------------------------------------------------------------------

SEED_REQUEST = json.loads(
    req(
        {"role": "system", "content": "s"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "t"},
                {"type": "image_url", "image_url": {"url": "u"}},
            ],
        },
        {
            "role": "assistant",
            "reasoning_content": "r",
            "content": None,
            "refusal": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "o"},
        max_completion_tokens=5,
        reasoning_effort="low",
        reasoning={"effort": "x", "max_tokens": 3},
    )
)
(_DEEPSEEK_TOOL,) = load("vercel-ai__deepseek-tool-call.json")
assert _DEEPSEEK_TOOL.response is not None
SEED_RESPONSE = json.loads(_DEEPSEEK_TOOL.response)
SEED_CHUNKS = [
    chunk({"role": "assistant", "reasoning_content": ""}),
    chunk({"content": "a", "reasoning_content": None}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "c",
                    "type": "function",
                    "function": {"name": "f", "arguments": "{"},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}, "tool_calls"),
    chunk(None, usage={"prompt_tokens": 1, "prompt_tokens_details": {"cached_tokens": 0}}),
]
_PATHS = {
    "request": paths(SEED_REQUEST),
    "response": paths(SEED_RESPONSE),
    "stream": paths(SEED_CHUNKS),
}


def _assert_only_format_error(request_text: str, response: str | None, stream: str | None) -> None:
    try:
        parsed = parse(request_text, response, stream)
    except FormatError as exc:
        assert exc.field in ("request", "response", "stream")
        assert exc.at.startswith("$") and exc.code and exc.detail
    else:
        assert len(parsed.output) == 1
        for block in all_blocks(parsed):
            if block.cls in (BlockClass.NEVER, BlockClass.UNKNOWN):
                assert block.text is None and block.input is None and block.output is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_json_value_in_any_position(data: st.DataObject) -> None:
    where = data.draw(st.sampled_from(["request", "response", "stream"]))
    path = data.draw(st.sampled_from(_PATHS[where]))
    new = data.draw(json_values)
    request, response, chunks = SEED_REQUEST, SEED_RESPONSE, SEED_CHUNKS
    if where == "request":
        request = replaced(request, path, new)
    elif where == "response":
        response = replaced(response, path, new)
    else:
        chunks = replaced(chunks, path, new)
    as_stream = where == "stream" or data.draw(st.booleans())
    stream_text = sse(
        *(chunks if isinstance(chunks, list) else [chunks]), done=data.draw(st.booleans())
    )
    _assert_only_format_error(
        json.dumps(request),
        None if as_stream else json.dumps(response),
        stream_text if as_stream else None,
    )


@settings(max_examples=200, deadline=None)
@given(request=st.text(), body=st.text(), as_stream=st.booleans())
def test_random_text_anywhere(request: str, body: str, as_stream: bool) -> None:
    response, stream = (None, body) if as_stream else (body, None)
    _assert_only_format_error(request, response, stream)
    _assert_only_format_error(json.dumps(SEED_REQUEST), response, stream)


SEED_STREAM = sse(*SEED_CHUNKS, done=False)


@settings(max_examples=150, deadline=None)
@given(cut=st.integers(min_value=0, max_value=len(SEED_STREAM)))
def test_stream_cut_anywhere(cut: int) -> None:
    # complete once the chunk carrying the finish_reason is whole
    end = '"tool_calls"}]}'
    complete = cut >= SEED_STREAM.index(end) + len(end)
    try:
        parsed = parse(MIN_REQUEST, stream=SEED_STREAM[:cut])
    except FormatError as exc:
        assert not complete
        assert (exc.field, exc.code) == ("stream", "truncated_stream")
    else:
        assert complete
        assert parsed.params.stop_reason == "tool_calls"
