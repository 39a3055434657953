"""openai.responses: recorded fixtures, byte-exact raws, stream accumulation, NEVER never leaking
into a Block, synthetic stream edge cases, a bad-input matrix and random inputs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversations.blocks import BlockClass, ParsedExchange, classify
from conversations.formats import get
from conversations.formats.base import FormatError, compact
from conversations.formats.sse import iter_events
from tests.conversations.formats.json_paths import json_values, paths, replaced
from tests.providers import Recorded, fixture_files, format_of, load

FMT = "openai.responses"
FILES = [f for f in fixture_files() if format_of(f) == FMT]
RECORDED = [r for f in FILES for r in load(f)]
RESPONSES = [r for r in RECORDED if r.response is not None]
STREAMS = [r for r in RECORDED if r.stream is not None]
# Recordings that kept only the response get a minimal request.
MIN_REQUEST = json.dumps({"model": "gpt-5-mini", "input": "hello"})


def parse(request: str, response: str | None = None, stream: str | None = None) -> ParsedExchange:
    return get(FMT).parse(request=request, response=response, stream=stream)


def parse_recorded(r: Recorded) -> ParsedExchange:
    return parse(r.request or MIN_REQUEST, r.response, r.stream)


def ids(records: list[Recorded]) -> list[str]:
    return [r.name for r in records]


def events(stream: str) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in iter_events(stream)]


def sse(*payloads: dict[str, Any], named: bool = False) -> str:
    """An SSE stream of the given event payloads (with ``event:`` lines when ``named``)."""
    out = []
    for p in payloads:
        head = f"event: {p['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(p)}\n\n")
    return "".join(out)


def all_blocks(parsed: ParsedExchange) -> list[Any]:
    return [b for m in [*parsed.history, *parsed.output] for b in m.blocks]


# --- synthetic building blocks ------------------------------------------------------------------

RESPONSE_SKELETON: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "status": "in_progress",
    "error": None,
    "incomplete_details": None,
    "model": "gpt-5-2025-08-07",
    "output": [],
    "usage": None,
}
REASONING = {
    "id": "rs_1",
    "type": "reasoning",
    "encrypted_content": "ENCRYPTED-BLOB-SECRET",
    "summary": [{"type": "summary_text", "text": "PLANNING THE SECRET ANSWER"}],
}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "status": "completed",
    "content": [{"type": "output_text", "annotations": [], "text": "Hello there"}],
    "role": "assistant",
}
CALL = {
    "id": "fc_1",
    "type": "function_call",
    "status": "completed",
    "arguments": '{"city":"Paris"}',
    "call_id": "call_1",
    "name": "weather",
}
USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 4},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 7},
    "total_tokens": 30,
}


def response_obj(output: list[Any], **changes: Any) -> dict[str, Any]:
    body = {**RESPONSE_SKELETON, "status": "completed", "output": output, "usage": USAGE}
    body.update(changes)
    return body


def stream_of(
    *items: dict[str, Any], terminal: str = "response.completed", **changes: Any
) -> list[dict[str, Any]]:
    """created, then added+done per item, then the terminal event."""
    out: list[dict[str, Any]] = [{"type": "response.created", "response": RESPONSE_SKELETON}]
    for i, item in enumerate(items):
        out.append({"type": "response.output_item.added", "output_index": i, "item": item})
        out.append({"type": "response.output_item.done", "output_index": i, "item": item})
    out.append({"type": terminal, "response": response_obj(list(items), **changes)})
    return out


# --- every recording ----------------------------------------------------------------------------


def test_there_are_recordings_of_both_kinds() -> None:
    assert RESPONSES and STREAMS
    assert len([r for r in STREAMS if "encrypted-content" in r.name]) == 4


@pytest.mark.parametrize("rec", RECORDED, ids=ids(RECORDED))
def test_every_fixture_parses(rec: Recorded) -> None:
    parsed = parse_recorded(rec)
    assert parsed.output
    for message in [*parsed.history, *parsed.output]:
        assert message.role in {"user", "system", "developer", "assistant", "tool"}
        assert message.blocks
        for block in message.blocks:
            expected = classify(FMT, block.type)
            # a message's parts are classified by their own type; nothing is promoted
            assert block.cls in (expected, BlockClass.UNKNOWN)
    assert parsed.params.response_id and parsed.params.response_id.startswith("resp_")
    assert parsed.params.usage.input_tokens is not None
    assert parsed.params.stop_reason == "completed"
    assert parsed.params.truncated is False and parsed.params.stream_error is None


@pytest.mark.parametrize("rec", RESPONSES, ids=ids(RESPONSES))
def test_response_output_raw_is_the_exact_item_text(rec: Recorded) -> None:
    assert rec.response is not None
    body = json.loads(rec.response)
    parsed = parse_recorded(rec)
    assert len(parsed.output) == len(body["output"])
    position = rec.response.index('"output"')
    for message, item in zip(parsed.output, body["output"], strict=True):
        # the exact bytes of the element, found in order in the body: not re-serialised
        found = rec.response.index(message.raw, position)
        assert found > position
        position = found + len(message.raw)
        assert message.raw.startswith("{") and message.raw.endswith("}")
        assert json.loads(message.raw) == item


def test_pretty_printed_response_keeps_its_whitespace() -> None:
    (rec,) = load("vercel-ai__openai-reasoning-encrypted-content.1.json")
    parsed = parse_recorded(rec)
    first = parsed.output[0].raw
    assert first.startswith(
        '{\n      "id": "rs_0f35ed53160b395301693cc95817ac8190b978637daea4987e",'
    )
    assert first != compact(json.loads(first))
    assert parsed.output[1].raw.endswith('"role": "assistant"\n    }')


@pytest.mark.parametrize(
    "rec", [r for r in RECORDED if r.request], ids=ids([r for r in RECORDED if r.request])
)
def test_history_raw_is_the_exact_input_element_text(rec: Recorded) -> None:
    assert rec.request is not None
    body = json.loads(rec.request)
    parsed = parse_recorded(rec)
    assert len(parsed.history) == len(body["input"])
    for message, item in zip(parsed.history, body["input"], strict=True):
        assert message.raw in rec.request
        assert json.loads(message.raw) == item
    assert parsed.history_is_full is True
    assert parsed.params.requested_model == body["model"]
    assert parsed.params.effort == body["reasoning"]["effort"]
    assert parsed.params.thinking == body["reasoning"]["summary"]


def test_string_input_is_one_user_message_whose_raw_is_the_string_literal() -> None:
    request = '{"model": "gpt-5", "input": "caf\\u00e9 \\"quoted\\""}'
    parsed = parse(request, json.dumps(response_obj([MESSAGE])))
    (message,) = parsed.history
    assert message.role == "user"
    assert message.raw == '"caf\\u00e9 \\"quoted\\""'
    (block,) = message.blocks
    assert (block.cls, block.text) == (BlockClass.VISIBLE, 'café "quoted"')


# --- streams ------------------------------------------------------------------------------------


@pytest.mark.parametrize("rec", STREAMS, ids=ids(STREAMS))
def test_stream_accumulates_to_the_terminal_output(rec: Recorded) -> None:
    assert rec.stream is not None
    evs = events(rec.stream)
    terminal = evs[-1]
    assert terminal["type"] == "response.completed"
    expected = terminal["response"]["output"]
    done = {e["output_index"]: e["item"] for e in evs if e["type"] == "response.output_item.done"}
    parsed = parse_recorded(rec)
    got = [json.loads(m.raw) for m in parsed.output]
    assert len(got) == len(expected)
    for i, (item, final) in enumerate(zip(got, expected, strict=True)):
        assert compact(item) == parsed.output[i].raw  # serialised once, compactly
        # The stored item is response.completed's, the one the SDK hands the backend.
        assert item == final
        if done[i] == final:
            assert parsed.output[i].alternates == ()
            continue
        # Encrypted reasoning is re-encrypted for every serialisation, so output_item.done
        # carries another blob: that form is kept as the item's alternate.
        assert {k: v for k, v in done[i].items() if k != "encrypted_content"} == {
            k: v for k, v in final.items() if k != "encrypted_content"
        }
        assert [json.loads(a) for a in parsed.output[i].alternates] == [done[i]]
    assert parsed.params.response_id == terminal["response"]["id"]
    assert parsed.params.usage.output_tokens == terminal["response"]["usage"]["output_tokens"]


def test_stream_completed_item_wins_over_done_and_added_items() -> None:
    """The stored item is the one the SDK hands the backend: ``response.completed``'s, whose
    ``encrypted_content`` differs from both ``added``'s and ``done``'s (issue 28); the done form
    is kept as its alternate."""
    (rec, *_) = load("vercel-ai__openai-reasoning-encrypted-content.1.chunks.txt")
    assert rec.stream is not None
    evs = events(rec.stream)
    added = next(e["item"] for e in evs if e["type"] == "response.output_item.added")
    done = next(e["item"] for e in evs if e["type"] == "response.output_item.done")
    final = next(e for e in evs if e["type"] == "response.completed")["response"]["output"][0]
    assert len({added["encrypted_content"], done["encrypted_content"]}) == 2
    assert final["encrypted_content"] != done["encrypted_content"]
    parsed = parse_recorded(rec)
    assert json.loads(parsed.output[0].raw)["encrypted_content"] == final["encrypted_content"]
    assert list(json.loads(parsed.output[0].raw)) == list(final)  # key order of completed
    alternate = json.loads(parsed.output[0].alternates[0])
    assert alternate["encrypted_content"] == done["encrypted_content"]


def test_stream_with_or_without_event_lines_is_the_same() -> None:
    payloads = stream_of(REASONING, MESSAGE)
    plain = parse(MIN_REQUEST, stream=sse(*payloads))
    named = parse(MIN_REQUEST, stream=sse(*payloads, named=True))
    assert [m.raw for m in plain.output] == [m.raw for m in named.output]
    assert plain.params == named.params


def test_web_search_stream_and_body() -> None:
    (body_rec,) = load("vercel-ai__openai-web-search-tool.1.json")
    (stream_rec,) = load("vercel-ai__openai-web-search-tool.1.chunks.txt")
    for rec in (body_rec, stream_rec):
        text = rec.response or rec.stream
        assert text is not None
        output = (
            json.loads(text)["output"] if rec.response else events(text)[-1]["response"]["output"]
        )
        parsed = parse_recorded(rec)
        calls = [i for i in output if i["type"] == "web_search_call"]
        assert parsed.params.server_tool_counts == {"web_search_call": len(calls)}
        blocks = [b for m in parsed.output for b in m.blocks if b.type == "web_search_call"]
        assert [(b.cls, b.tool_name, b.call_id, b.status, b.input) for b in blocks] == [
            (BlockClass.AUDIT, "web_search", c["id"], "completed", c["action"]) for c in calls
        ]
        reasoning = [b for m in parsed.output for b in m.blocks if b.type == "reasoning"]
        assert reasoning and all(b.cls is BlockClass.NEVER and not b.redacted for b in reasoning)
        assert [m.role for m in parsed.output][-1] == "assistant"
    (body_parsed,) = [parse_recorded(body_rec)]
    actions = [b.input["type"] for m in body_parsed.output for b in m.blocks if b.input]
    assert actions == ["search", "open_page", "find_in_page"]


def test_params_of_the_encrypted_content_response() -> None:
    (rec,) = load("vercel-ai__openai-reasoning-encrypted-content.1.json")
    request = json.dumps(
        {
            "model": "gpt-5-mini",
            "input": "q",
            "reasoning": {"effort": "high", "summary": "detailed"},
            "max_output_tokens": 4000,
        }
    )
    p = parse(request, rec.response).params
    assert (p.requested_model, p.response_model) == ("gpt-5-mini", "gpt-5-mini-2025-08-07")
    assert p.response_id == "resp_0f35ed53160b395301693cc957829881909359e7f80cdd20b5"
    assert (p.effort, p.thinking, p.max_tokens) == ("high", "detailed", 4000)
    assert (p.usage.input_tokens, p.usage.cache_read_tokens) == (865, 0)
    assert (p.usage.output_tokens, p.usage.reasoning_tokens) == (163, 128)
    assert p.server_tool_counts == {} and p.refusal is False


# --- replayed tool loop -------------------------------------------------------------------------


def test_replayed_items_are_the_previous_output() -> None:
    first, second = load(
        "pydantic-pydantic-ai__test_openai_responses_thinking_with_tool_calls.yaml"
    )
    out = parse_recorded(first).output
    history = parse_recorded(second).history
    assert [m.role for m in history] == ["user", "assistant", "assistant", "tool"]
    for replayed, original in zip(history[1:3], out, strict=True):
        assert replayed.role == original.role
        sent, received = json.loads(replayed.raw), json.loads(original.raw)
        # the client re-sends each item, minus what only the server sets ("status")
        assert sent == {k: v for k, v in received.items() if k in sent}
        assert set(received) - set(sent) <= {"status"}
        for a, b in zip(replayed.blocks, original.blocks, strict=True):
            assert (a.type, a.cls, a.tool_name, a.call_id, a.input, a.redacted) == (
                b.type,
                b.cls,
                b.tool_name,
                b.call_id,
                b.input,
                b.redacted,
            )
    (output_block,) = history[3].blocks
    call_block = history[2].blocks[0]
    assert output_block.type == "function_call_output" and output_block.cls is BlockClass.AUDIT
    assert output_block.call_id == call_block.call_id == "call_gL7JE6GDeGGsFubqO2XGytyO"
    assert output_block.output == "plan updated"
    assert call_block.tool_name == "update_plan" and isinstance(call_block.input, dict)
    assert call_block.input["plan"].startswith("Plan:")


def test_previous_response_id_means_history_is_not_full() -> None:
    request = json.dumps({"model": "gpt-5", "previous_response_id": "resp_0", "input": "more"})
    assert parse(request, json.dumps(response_obj([MESSAGE]))).history_is_full is False
    assert parse(MIN_REQUEST, json.dumps(response_obj([MESSAGE]))).history_is_full is True


# --- NEVER content ------------------------------------------------------------------------------


def _reasoning_strings(value: Any, inside: bool = False) -> set[str]:
    """Every string found inside a reasoning item, or in a reasoning summary event."""
    found: set[str] = set()
    if isinstance(value, dict):
        inside = (
            inside
            or value.get("type") == "reasoning"
            or str(value.get("type", "")).startswith("response.reasoning")
        )
        for k, v in value.items():
            if inside and k in ("id", "type", "item_id", "obfuscation"):
                continue
            found |= _reasoning_strings(v, inside)
    elif isinstance(value, list):
        for v in value:
            found |= _reasoning_strings(v, inside)
    elif isinstance(value, str) and inside and len(value) >= 20:  # whole texts, not deltas
        found.add(value)
    return found


@pytest.mark.parametrize("rec", RECORDED, ids=ids(RECORDED))
def test_never_content_does_not_leak_into_blocks(rec: Recorded) -> None:
    secrets: set[str] = set()
    if rec.request:
        secrets |= _reasoning_strings(json.loads(rec.request))
    if rec.response:
        secrets |= _reasoning_strings(json.loads(rec.response))
    if rec.stream:
        for e in events(rec.stream):
            secrets |= _reasoning_strings(e)
    parsed = parse_recorded(rec)
    if (
        any(b.type == "reasoning" and not b.redacted for b in all_blocks(parsed))
        and "web-search" not in rec.name
    ):
        assert secrets  # this recording has reasoning text: the check below means something
    shown = "\n".join(repr(b) for b in all_blocks(parsed))
    leaked = [s[:40] for s in secrets if s in shown]
    assert leaked == []


def test_reasoning_with_only_encrypted_content_is_redacted() -> None:
    withheld = {"id": "rs_2", "type": "reasoning", "encrypted_content": "gAAAA-blob", "summary": []}
    summarised = REASONING
    empty = {"id": "rs_3", "type": "reasoning", "summary": []}
    parsed = parse(MIN_REQUEST, json.dumps(response_obj([withheld, summarised, empty, MESSAGE])))
    blocks = [m.blocks[0] for m in parsed.output[:3]]
    assert [(b.cls, b.redacted) for b in blocks] == [
        (BlockClass.NEVER, True),
        (BlockClass.NEVER, False),
        (BlockClass.NEVER, False),
    ]
    assert all(b.text is None and b.input is None and b.output is None for b in blocks)
    assert "ENCRYPTED-BLOB-SECRET" not in repr(all_blocks(parsed))
    assert "PLANNING THE SECRET" not in repr(all_blocks(parsed))


# --- items and roles ----------------------------------------------------------------------------


def test_item_kinds_roles_and_blocks() -> None:
    request = {
        "model": "gpt-5",
        "input": [
            {"role": "system", "content": "be brief"},
            {"role": "developer", "content": [{"type": "input_text", "text": "dev note"}]},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "look"},
                    {"type": "input_image", "image_url": "https://example.com/a.png"},
                ],
            },
            REASONING,
            {**CALL, "arguments": '{"city": "Par'},  # cut off: the raw string is kept
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "q"},
            },
            {"type": "computer_call_output", "call_id": "cu_1", "output": {"type": "x"}},
            {"type": "item_reference", "id": "msg_0"},
            {"role": "assistant", "content": "earlier answer"},
        ],
    }
    parsed = parse(json.dumps(request), json.dumps(response_obj([MESSAGE])))
    h = parsed.history
    assert [m.role for m in h] == [
        "system",
        "developer",
        "user",
        "assistant",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "assistant",
    ]
    assert [(b.type, b.cls) for b in h[2].blocks] == [
        ("input_text", BlockClass.VISIBLE),
        ("input_image", BlockClass.UNKNOWN),
    ]
    assert h[0].blocks[0].text == "be brief" and h[0].blocks[0].type == "input_text"
    assert h[9].blocks[0].type == "output_text" and h[9].blocks[0].text == "earlier answer"
    call = h[4].blocks[0]
    assert (call.tool_name, call.call_id, call.input, call.status) == (
        "weather",
        "call_1",
        '{"city": "Par',
        "completed",
    )
    result = h[5].blocks[0]
    assert (result.cls, result.call_id, result.output) == (BlockClass.AUDIT, "call_1", "sunny")
    search = h[6].blocks[0]
    assert (search.tool_name, search.call_id, search.input) == (
        "web_search",
        "ws_1",
        {"type": "search", "query": "q"},
    )
    assert (h[7].blocks[0].cls, h[7].blocks[0].call_id) == (BlockClass.AUDIT, "cu_1")
    ref = h[8].blocks[0]
    assert (ref.type, ref.cls, ref.call_id, ref.input) == (
        "item_reference",
        BlockClass.UNKNOWN,
        None,
        None,
    )


def test_refusal_part_is_visible_and_sets_refusal() -> None:
    refusal = {**MESSAGE, "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    parsed = parse(MIN_REQUEST, json.dumps(response_obj([refusal])))
    (block,) = parsed.output[0].blocks
    assert (block.type, block.cls, block.text) == (
        "refusal",
        BlockClass.VISIBLE,
        "I can't help with that.",
    )
    assert parsed.params.refusal is True


def test_incomplete_response_body_is_truncated() -> None:
    body = response_obj(
        [REASONING], status="incomplete", incomplete_details={"reason": "max_output_tokens"}
    )
    p = parse(MIN_REQUEST, json.dumps(body)).params
    assert (p.truncated, p.stop_reason) == (True, "max_output_tokens")
    filtered = response_obj(
        [], status="incomplete", incomplete_details={"reason": "content_filter"}
    )
    p = parse(MIN_REQUEST, json.dumps(filtered)).params
    assert (p.truncated, p.stop_reason) == (False, "content_filter")


# --- synthetic stream edge cases ----------------------------------------------------------------


def test_stream_incomplete_for_max_output_tokens() -> None:
    cut = {**MESSAGE, "status": "incomplete", "content": [{"type": "output_text", "text": "Hel"}]}
    payloads = stream_of(
        REASONING,
        cut,
        terminal="response.incomplete",
        status="incomplete",
        incomplete_details={"reason": "max_output_tokens"},
    )
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    assert [json.loads(m.raw) for m in parsed.output] == [REASONING, cut]
    p = parsed.params
    assert (p.truncated, p.stop_reason, p.stream_error) == (True, "max_output_tokens", None)
    assert p.usage.reasoning_tokens == 7


def test_stream_error_event_keeps_what_arrived() -> None:
    payloads = [
        {"type": "response.created", "response": RESPONSE_SKELETON},
        {"type": "response.output_item.added", "output_index": 0, "item": REASONING},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {
                "id": "msg_1",
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            },
        },
        {
            "type": "response.content_part.added",
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "annotations": [], "text": ""},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 1,
            "content_index": 0,
            "delta": "Partial ",
        },
        {
            "type": "response.output_text.delta",
            "output_index": 1,
            "content_index": 0,
            "delta": "answer",
        },
        {
            "type": "error",
            "code": "server_error",
            "message": "The server had an error",
            "param": None,
        },
        {
            "type": "response.output_text.delta",
            "output_index": 1,
            "content_index": 0,
            "delta": "IGNORED",
        },
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    p = parsed.params
    assert (p.stream_error, p.truncated, p.stop_reason) == ("server_error", True, None)
    assert p.response_id == "resp_1"
    assert json.loads(parsed.output[1].raw)["content"] == [
        {"type": "output_text", "annotations": [], "text": "Partial answer"}
    ]
    assert parsed.output[1].blocks[0].text == "Partial answer"


def test_stream_response_failed_is_a_stream_error() -> None:
    failed = {
        **RESPONSE_SKELETON,
        "status": "failed",
        "error": {"code": "rate_limit_exceeded", "message": "slow"},
    }
    payloads = [
        {"type": "response.created", "response": RESPONSE_SKELETON},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        {"type": "response.failed", "response": failed},
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    assert (parsed.params.stream_error, parsed.params.truncated) == ("rate_limit_exceeded", True)
    assert parsed.params.stop_reason == "failed"
    assert len(parsed.output) == 1


def test_nested_error_event() -> None:
    payloads = [
        {"type": "response.created", "response": RESPONSE_SKELETON},
        {"type": "error", "error": {"type": "invalid_request_error", "code": None, "message": "x"}},
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    assert parsed.params.stream_error == "invalid_request_error" and parsed.output == []


def test_unknown_events_are_ignored() -> None:
    payloads = stream_of(REASONING, MESSAGE)
    noisy = [
        *payloads[:2],
        {"type": "response.brand_new_event", "whatever": [1, 2]},
        {"type": "response.web_search_call.searching", "output_index": 0},
        *payloads[2:],
    ]
    plain, with_noise = (
        parse(MIN_REQUEST, stream=sse(*payloads)),
        parse(MIN_REQUEST, stream=sse(*noisy)),
    )
    assert [m.raw for m in with_noise.output] == [m.raw for m in plain.output]
    assert with_noise.params == plain.params
    # keep-alive comments too
    assert parse(MIN_REQUEST, stream=": ping\n\n" + sse(*payloads)).params == plain.params


def test_stream_cut_before_terminal_event() -> None:
    payloads = stream_of(REASONING, MESSAGE)[:-1]
    with pytest.raises(FormatError) as exc:
        parse(MIN_REQUEST, stream=sse(*payloads))
    assert (exc.value.field, exc.value.code, exc.value.at) == ("stream", "truncated_stream", "$[4]")


def test_stream_cut_inside_an_event() -> None:
    text = sse(*stream_of(MESSAGE))
    cut = text[: text.rindex('"usage"')]
    with pytest.raises(FormatError) as exc:
        parse(MIN_REQUEST, stream=cut)
    assert (exc.value.field, exc.value.code, exc.value.at) == ("stream", "truncated_stream", "$[3]")


def test_terminal_event_without_final_blank_line_is_complete() -> None:
    text = sse(*stream_of(MESSAGE)).rstrip("\n")
    assert parse(MIN_REQUEST, stream=text).params.stop_reason == "completed"


def test_empty_stream() -> None:
    with pytest.raises(FormatError) as exc:
        parse(MIN_REQUEST, stream="")
    assert (exc.value.field, exc.value.code, exc.value.at) == ("stream", "truncated_stream", "$")


def test_output_item_done_without_added() -> None:
    payloads = [
        {"type": "response.created", "response": RESPONSE_SKELETON},
        {"type": "response.output_item.done", "output_index": 0, "item": CALL},
        {"type": "response.completed", "response": response_obj([CALL])},
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    assert [m.raw for m in parsed.output] == [compact(CALL)]
    assert parsed.output[0].blocks[0].input == {"city": "Paris"}


def test_items_without_done_are_built_from_added_and_deltas() -> None:
    payloads = [
        {"type": "response.created", "response": RESPONSE_SKELETON},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": "rs_1", "type": "reasoning", "summary": []},
        },
        {
            "type": "response.reasoning_summary_part.added",
            "output_index": 0,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": ""},
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 0,
            "delta": "Thinking ",
            "obfuscation": "abc",
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 0,
            "delta": "hard",
        },
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {
                "id": "fc_1",
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": "call_1",
                "name": "weather",
            },
        },
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": '{"city":'},
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": '"Paris"}'},
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": {
                "id": "msg_1",
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            },
        },
        # no content_part.added: the delta opens the part itself
        {
            "type": "response.output_text.delta",
            "output_index": 2,
            "content_index": 0,
            "delta": "Hi",
        },
        {
            "type": "response.output_text.annotation.added",
            "output_index": 2,
            "content_index": 0,
            "annotation_index": 0,
            "annotation": {"type": "url_citation", "url": "https://x"},
        },
        {"type": "response.completed", "response": response_obj([])},
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    assert [json.loads(m.raw) for m in parsed.output] == [
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Thinking hard"}],
        },
        {
            "id": "fc_1",
            "type": "function_call",
            "status": "in_progress",
            "arguments": '{"city":"Paris"}',
            "call_id": "call_1",
            "name": "weather",
        },
        {
            "id": "msg_1",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "Hi",
                    "annotations": [{"type": "url_citation", "url": "https://x"}],
                }
            ],
        },
    ]
    assert parsed.output[1].blocks[0].input == {"city": "Paris"}
    assert parsed.output[2].blocks[0].text == "Hi"
    assert "Thinking" not in repr(all_blocks(parsed))


def test_deltas_after_done_do_not_change_the_item() -> None:
    payloads = stream_of(MESSAGE)
    late = {
        "type": "response.output_text.delta",
        "output_index": 0,
        "content_index": 0,
        "delta": "LATE",
    }
    parsed = parse(MIN_REQUEST, stream=sse(*payloads[:-1], late, payloads[-1]))
    assert parsed.output[0].raw == compact(MESSAGE)


def test_terminal_output_is_used_when_no_item_events_came() -> None:
    payloads = [{"type": "response.completed", "response": response_obj([REASONING, MESSAGE])}]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    assert [m.raw for m in parsed.output] == [compact(REASONING), compact(MESSAGE)]


def test_done_marker_and_events_after_terminal_are_ignored() -> None:
    payloads = stream_of(MESSAGE)
    extra = {"type": "response.output_item.done", "output_index": 5, "item": CALL}
    text = sse(*payloads, extra) + "data: [DONE]\n\n"
    assert [m.raw for m in parse(MIN_REQUEST, stream=text).output] == [compact(MESSAGE)]


def test_stream_refusal_and_summary_without_done_items() -> None:
    payloads = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": "rs_1", "type": "reasoning", "summary": []},
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 0,
            "delta": "draft",
        },
        {
            "type": "response.reasoning_summary_text.done",
            "output_index": 0,
            "summary_index": 0,
            "text": "SUMMARY FROM THE DONE EVENT",
        },
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"id": "msg_1", "type": "message", "content": [], "role": "assistant"},
        },
        {"type": "response.refusal.delta", "output_index": 1, "content_index": 0, "delta": "I can"},
        {"type": "response.refusal.delta", "output_index": 1, "content_index": 0, "delta": "'t."},
        {"type": "response.completed", "response": response_obj([])},
    ]
    parsed = parse(MIN_REQUEST, stream=sse(*payloads))
    assert json.loads(parsed.output[0].raw)["summary"] == [
        {"type": "summary_text", "text": "SUMMARY FROM THE DONE EVENT"}
    ]
    (refusal,) = parsed.output[1].blocks
    assert (refusal.type, refusal.cls, refusal.text) == ("refusal", BlockClass.VISIBLE, "I can't.")
    assert parsed.params.refusal is True
    assert "SUMMARY" not in repr(all_blocks(parsed))


def test_non_ascii_is_kept_unescaped_in_stream_raw() -> None:
    item = {**MESSAGE, "content": [{"type": "output_text", "text": "Grüße ✓"}]}
    parsed = parse(MIN_REQUEST, stream=sse(*stream_of(item)))
    assert "Grüße ✓" in parsed.output[0].raw


# --- bad input ----------------------------------------------------------------------------------

OK_RESPONSE = json.dumps(response_obj([MESSAGE]))
OK_STREAM = sse(*stream_of(MESSAGE))


def req(**changes: Any) -> str:
    return json.dumps({"model": "gpt-5", "input": "hi", **changes})


def resp(**changes: Any) -> str:
    return json.dumps({**response_obj([MESSAGE]), **changes})


def ev_stream(*payloads: dict[str, Any]) -> str:
    return sse({"type": "response.created", "response": RESPONSE_SKELETON}, *payloads)


BAD = [
    # (id, request, response, stream, field, at, code)
    ("request-not-json", "{", OK_RESPONSE, None, "request", "$", "not_json"),
    ("request-array", "[]", OK_RESPONSE, None, "request", "$", "wrong_type"),
    ("request-nul", "\x00", OK_RESPONSE, None, "request", "$", "not_json"),
    ("request-deep", "[" * 10_000 + "]" * 10_000, OK_RESPONSE, None, "request", "$", "too_deep"),
    (
        "input-missing",
        json.dumps({"model": "m"}),
        OK_RESPONSE,
        None,
        "request",
        "$.input",
        "missing",
    ),
    ("input-number", req(input=3), OK_RESPONSE, None, "request", "$.input", "wrong_type"),
    ("model-number", req(model=3), OK_RESPONSE, None, "request", "$.model", "wrong_type"),
    (
        "reasoning-string",
        req(reasoning="high"),
        OK_RESPONSE,
        None,
        "request",
        "$.reasoning",
        "wrong_type",
    ),
    (
        "effort-number",
        req(reasoning={"effort": 1}),
        OK_RESPONSE,
        None,
        "request",
        "$.reasoning.effort",
        "wrong_type",
    ),
    (
        "max-tokens-bool",
        req(max_output_tokens=True),
        OK_RESPONSE,
        None,
        "request",
        "$.max_output_tokens",
        "wrong_type",
    ),
    (
        "previous-id-number",
        req(previous_response_id=1),
        OK_RESPONSE,
        None,
        "request",
        "$.previous_response_id",
        "wrong_type",
    ),
    ("item-string", req(input=["x"]), OK_RESPONSE, None, "request", "$.input[0]", "wrong_type"),
    (
        "item-no-type-no-role",
        req(input=[{"content": "x"}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].type",
        "missing",
    ),
    (
        "item-type-number",
        req(input=[{"type": 5}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].type",
        "wrong_type",
    ),
    (
        "role-unknown",
        req(input=[{"role": "robot", "content": "x"}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].role",
        "wrong_value",
    ),
    (
        "content-missing",
        req(input=[{"role": "user"}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].content",
        "missing",
    ),
    (
        "content-number",
        req(input=[{"role": "user", "content": 1}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].content",
        "wrong_type",
    ),
    (
        "part-no-type",
        req(input=[{"role": "user", "content": [{"text": "x"}]}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].content[0].type",
        "missing",
    ),
    (
        "part-text-null",
        req(input=[{"role": "user", "content": [{"type": "input_text", "text": None}]}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].content[0].text",
        "wrong_type",
    ),
    (
        "call-no-name",
        req(input=[{**CALL, "name": None}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].name",
        "wrong_type",
    ),
    (
        "call-args-object",
        req(input=[{**CALL, "arguments": {}}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].arguments",
        "wrong_type",
    ),
    (
        "output-no-call-id",
        req(input=[{"type": "function_call_output", "output": "x"}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].call_id",
        "missing",
    ),
    (
        "ws-status-number",
        req(input=[{"type": "web_search_call", "id": "ws", "status": 1}]),
        OK_RESPONSE,
        None,
        "request",
        "$.input[0].status",
        "wrong_type",
    ),
    ("response-not-json", req(), "{]", None, "response", "$", "not_json"),
    ("response-string", req(), '"x"', None, "response", "$", "wrong_type"),
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
        resp(error={"code": "server_error", "message": "boom"}),
        None,
        "response",
        "$.error",
        "provider_error",
    ),
    (
        "response-http-error",
        req(),
        json.dumps({"error": {"message": "bad key"}}),
        None,
        "response",
        "$.error",
        "provider_error",
    ),
    (
        "object-wrong",
        req(),
        resp(object="chat.completion"),
        None,
        "response",
        "$.object",
        "wrong_value",
    ),
    ("object-missing", req(), json.dumps({"output": []}), None, "response", "$.object", "missing"),
    (
        "output-missing",
        req(),
        json.dumps({"object": "response"}),
        None,
        "response",
        "$.output",
        "missing",
    ),
    ("output-object", req(), resp(output={}), None, "response", "$.output", "wrong_type"),
    (
        "output-item-type-missing",
        req(),
        resp(output=[{"id": "x"}]),
        None,
        "response",
        "$.output[0].type",
        "missing",
    ),
    (
        "output-message-role-number",
        req(),
        resp(output=[{**MESSAGE, "role": 1}]),
        None,
        "response",
        "$.output[0].role",
        "wrong_type",
    ),
    (
        "refusal-text-missing",
        req(),
        resp(output=[{**MESSAGE, "content": [{"type": "refusal"}]}]),
        None,
        "response",
        "$.output[0].content[0].refusal",
        "missing",
    ),
    ("status-number", req(), resp(status=1), None, "response", "$.status", "wrong_type"),
    ("usage-array", req(), resp(usage=[]), None, "response", "$.usage", "wrong_type"),
    (
        "usage-tokens-string",
        req(),
        resp(usage={"input_tokens": "10"}),
        None,
        "response",
        "$.usage.input_tokens",
        "wrong_type",
    ),
    (
        "cached-tokens-float",
        req(),
        resp(usage={"input_tokens_details": {"cached_tokens": 1.5}}),
        None,
        "response",
        "$.usage.input_tokens_details.cached_tokens",
        "wrong_type",
    ),
    (
        "incomplete-reason-number",
        req(),
        resp(incomplete_details={"reason": 3}),
        None,
        "response",
        "$.incomplete_details.reason",
        "wrong_type",
    ),
    ("stream-not-json", req(), None, "data: {nope\n\n", "stream", "$[0].data", "not_json"),
    ("stream-array-event", req(), None, "data: [1]\n\n", "stream", "$[0].data", "wrong_type"),
    ("stream-no-type", req(), None, 'data: {"a": 1}\n\n', "stream", "$[0].data.type", "missing"),
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
        "stream-created-no-response",
        req(),
        None,
        sse({"type": "response.created"}),
        "stream",
        "$[0].data.response",
        "missing",
    ),
    (
        "stream-item-string",
        req(),
        None,
        ev_stream({"type": "response.output_item.added", "output_index": 0, "item": "x"}),
        "stream",
        "$[1].data.item",
        "wrong_type",
    ),
    (
        "stream-item-no-type",
        req(),
        None,
        ev_stream({"type": "response.output_item.done", "output_index": 0, "item": {}}),
        "stream",
        "$[1].data.item.type",
        "missing",
    ),
    (
        "stream-index-string",
        req(),
        None,
        ev_stream({"type": "response.output_item.done", "output_index": "0", "item": CALL}),
        "stream",
        "$[1].data.output_index",
        "wrong_type",
    ),
    (
        "stream-index-negative",
        req(),
        None,
        ev_stream({"type": "response.output_item.done", "output_index": -1, "item": CALL}),
        "stream",
        "$[1].data.output_index",
        "wrong_value",
    ),
    (
        "stream-delta-number",
        req(),
        None,
        ev_stream(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**CALL, "arguments": ""},
            },
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": 5},
        ),
        "stream",
        "$[2].data.delta",
        "wrong_type",
    ),
    (
        "stream-content-index-skips",
        req(),
        None,
        ev_stream(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**MESSAGE, "content": []},
            },
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 10**9,
                "delta": "x",
            },
        ),
        "stream",
        "$[2].data.content_index",
        "out_of_order",
    ),
    (
        "stream-added-item-invalid",
        req(),
        None,
        ev_stream(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "function_call"},
            },
            {"type": "response.completed", "response": response_obj([])},
        ),
        "stream",
        "$[1].data.item.arguments",
        "missing",
    ),
    (
        "stream-terminal-error",
        req(),
        None,
        ev_stream(
            {"type": "response.completed", "response": response_obj([], error={"code": "x"})},
        ),
        "stream",
        "$[1].data.response.error",
        "provider_error",
    ),
    (
        "stream-terminal-usage",
        req(),
        None,
        ev_stream(
            {
                "type": "response.completed",
                "response": response_obj([], usage={"output_tokens": "1"}),
            },
        ),
        "stream",
        "$[1].data.response.usage.output_tokens",
        "wrong_type",
    ),
    (
        "stream-lone-surrogate",
        req(),
        None,
        ev_stream(
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**MESSAGE, "content": [{"type": "output_text", "text": "\ud800"}]},
            },
            {"type": "response.completed", "response": response_obj([])},
        ),
        "stream",
        "$[1].data.item",
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


def test_non_string_bodies() -> None:
    with pytest.raises(FormatError) as exc:
        get(FMT).parse(request=None, response=OK_RESPONSE, stream=None)  # type: ignore[arg-type]
    assert (exc.value.field, exc.value.code) == ("request", "wrong_type")


def test_invalid_arguments_json_nested_too_deep_is_kept_as_string() -> None:
    deep = "[" * 5000
    request = req(input=[{**CALL, "arguments": deep}])
    (message,) = parse(request, OK_RESPONSE).history
    assert message.blocks[0].input == deep


# --- random input -------------------------------------------------------------------------------

_TOOL_LOOP = load("pydantic-pydantic-ai__test_openai_responses_thinking_with_tool_calls.yaml")[1]
assert _TOOL_LOOP.request is not None
SEED_REQUEST = json.loads(_TOOL_LOOP.request)
SEED_RESPONSE = response_obj(
    [
        REASONING,
        CALL,
        MESSAGE,
        {
            "type": "web_search_call",
            "id": "ws",
            "status": "completed",
            "action": {"type": "search"},
        },
    ],
    status="incomplete",
    incomplete_details={"reason": "max_output_tokens"},
)
SEED_EVENTS = [
    {"type": "response.created", "response": RESPONSE_SKELETON},
    {"type": "response.output_item.added", "output_index": 0, "item": {**MESSAGE, "content": []}},
    {
        "type": "response.content_part.added",
        "output_index": 0,
        "content_index": 0,
        "part": {"type": "output_text", "text": ""},
    },
    {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "a"},
    {"type": "response.output_item.added", "output_index": 1, "item": {**CALL, "arguments": ""}},
    {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{}"},
    {"type": "response.output_item.done", "output_index": 1, "item": CALL},
    {
        "type": "response.reasoning_summary_text.delta",
        "output_index": 1,
        "summary_index": 0,
        "delta": "x",
    },
    {"type": "response.completed", "response": SEED_RESPONSE},
]
_PATHS = {
    "request": paths(SEED_REQUEST),
    "response": paths(SEED_RESPONSE),
    "stream": paths(SEED_EVENTS),
}


def _assert_only_format_error(request_text: str, response: str | None, stream: str | None) -> None:
    try:
        parsed = parse(request_text, response, stream)
    except FormatError as exc:
        assert exc.field in ("request", "response", "stream")
        assert exc.at.startswith("$") and exc.code and exc.detail
    else:
        for block in all_blocks(parsed):
            if block.cls in (BlockClass.NEVER, BlockClass.UNKNOWN):
                assert block.text is None and block.input is None and block.output is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_json_value_in_any_position(data: st.DataObject) -> None:
    where = data.draw(st.sampled_from(["request", "response", "stream"]))
    path = data.draw(st.sampled_from(_PATHS[where]))
    new = data.draw(json_values)
    request, response, evs = SEED_REQUEST, SEED_RESPONSE, SEED_EVENTS
    if where == "request":
        request = replaced(request, path, new)
    elif where == "response":
        response = replaced(response, path, new)
    else:
        evs = replaced(evs, path, new)
    as_stream = where == "stream" or data.draw(st.booleans())
    events_text = "".join(
        f"data: {json.dumps(e)}\n\n" for e in (evs if isinstance(evs, list) else [evs])
    )
    _assert_only_format_error(
        json.dumps(request),
        None if as_stream else json.dumps(response),
        events_text if as_stream else None,
    )


@settings(max_examples=200, deadline=None)
@given(request=st.text(), response=st.text(), as_stream=st.booleans())
def test_random_text_anywhere(request: str, response: str, as_stream: bool) -> None:
    _assert_only_format_error(
        request, None if as_stream else response, response if as_stream else None
    )
    _assert_only_format_error(
        json.dumps(SEED_REQUEST), None if as_stream else response, response if as_stream else None
    )


SEED_STREAM = sse(*SEED_EVENTS)


@settings(max_examples=150, deadline=None)
@given(cut=st.integers(min_value=0, max_value=len(SEED_STREAM)))
def test_stream_cut_anywhere(cut: int) -> None:
    complete = cut >= SEED_STREAM.rindex("}") + 1  # the terminal event's data is whole
    try:
        parsed = parse(MIN_REQUEST, stream=SEED_STREAM[:cut])
    except FormatError as exc:
        assert not complete
        assert (exc.field, exc.code) == ("stream", "truncated_stream")
    else:
        assert complete
        assert parsed.params.truncated is True  # the seed response is incomplete
