"""The ten differences from the official SDKs listed in issue 28, one minimal stream (or one real
recorded stream of the corpus) each: fixed to agree with the SDK, or kept on purpose with the
reason (docs/formats.md, "Recorded differences from the official SDKs"). Each test runs the SDK
itself beside the project, so it fails if either side changes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.formats import get

from .differential import corpus, oracles, runner

_V = "vercel-ai/packages/"


def _corpus(name: str) -> str:
    return next(s.stream for s in corpus.streams() if s.name == name)


def _events(stream: str) -> list[dict[str, Any]]:
    lines = stream.splitlines()
    return [json.loads(x[6:]) for x in lines if x.startswith("data: ") and x[6:] != "[DONE]"]


def _typed(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _chat(*deltas: dict[str, Any], finish: str = "stop") -> str:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    out = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    out.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in out) + "data: [DONE]\n\n"


def _ui(*chunks: dict[str, Any] | str) -> str:
    return "".join(f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks)


_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
}
_TOOL = {
    "type": "content_block_start",
    "index": 0,
    "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}},
}
_END = (
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 5},
    },
    {"type": "message_stop"},
)


def _json_delta(piece: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": piece},
    }


# 1 ------------------------------------------------------------------------------------------------


def test_1_a_text_delta_on_a_tool_use_block_changes_nothing_as_in_the_sdk() -> None:
    """Fixed: the SDK's ``accumulate_event`` applies a ``text_delta`` only to a ``text`` block;
    the project refused the stream (``delta_mismatch``). Now the delta changes nothing there,
    and the message is the SDK's."""
    stray = {"type": "content_block_delta", "index": 0}
    stray["delta"] = {"type": "text_delta", "text": "x"}
    stream = _typed(_START, _TOOL, stray, _json_delta('{"a": 1}'), *_END)
    for beta in (False, True):
        verdict = runner.anthropic(stream, [], beta=beta)
        assert verdict.agree, str(verdict)
    assert verdict.ours.messages == [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"a": 1}}],
        }
    ]


# 2 ------------------------------------------------------------------------------------------------


def test_2_a_whitespace_first_partial_json_is_stored_where_the_sdk_raises() -> None:
    """Kept: JSON allows whitespace before a value, and the pieces together are the valid input
    ``{"a": 1}``. The SDK parses the buffer after every piece in partial mode and raises on the
    whitespace-only first one (``EOF while parsing a value``), so the backend's loop gets no
    message; the provider answered 200 and the call happened, so the project stores it."""
    stream = _typed(_START, _TOOL, _json_delta(" "), _json_delta('{"a": 1}'), *_END)
    mine = runner.ours("anthropic.messages", stream)
    assert mine.messages is not None
    assert mine.messages[0]["content"][0]["input"] == {"a": 1}
    for beta in (False, True):
        theirs = oracles.anthropic(stream, beta=beta)
        assert theirs.messages is None and "EOF while parsing" in (theirs.error or "")


# 3 ------------------------------------------------------------------------------------------------


def test_3_a_chat_tool_call_delta_without_index_is_filed_by_position() -> None:
    """Kept: some OpenAI-compatible servers leave ``index`` out of a tool call delta. The SDK
    indexes its list with ``None`` and raises ``TypeError``; the project files the call by its
    position in the delta's array, so the call is recorded and its result still matches."""
    call = {"id": "call_1", "type": "function", "function": {"name": "get", "arguments": "{}"}}
    stream = _chat({"role": "assistant"}, {"tool_calls": [call]}, finish="tool_calls")
    (mine,) = runner.ours("openai.chat", stream).messages or [None]
    assert mine["tool_calls"] == [call]
    theirs = oracles.openai_chat(stream)
    assert theirs.messages is None and "TypeError" in (theirs.error or "")


# 4 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("pydantic-ai/test_openrouter_streaming_reasoning.sse", "reasoning_details"),
        ("pydantic-ai/test_groq_model_web_search_tool_stream.sse", "executed_tools"),
    ],
)
def test_4_array_deltas_with_an_index_merge_by_it_as_the_sdk_merges_them(
    name: str, key: str
) -> None:
    """Fixed, on real recorded streams: OpenRouter sends a Claude thinking text and then its
    signature as pieces of one ``reasoning_details`` entry (``index: 0``), Groq sends its search
    twice in ``executed_tools`` (before and after it ran). The project appended the pieces (a
    text split from its signature; one tool as two entries); it now merges them by index, and
    the entries are the SDK's, field for field."""
    stream = _corpus(name)
    (mine,) = runner.ours("openai.chat", stream).messages or [None]
    (theirs,) = oracles.openai_chat(stream).messages or [None]
    assert len(mine[key]) == 1
    # Field for field the SDK's, but a ``format`` the provider resends whole in every piece
    # (kept as sent: test_4_a_format_resent_with_every_piece_is_kept_whole).
    assert [{k: v for k, v in e.items() if k != "format"} for e in mine[key]] == [
        {k: v for k, v in e.items() if k != "format"} for e in theirs[key]
    ]
    pieces = [
        entry
        for event in _events(stream)
        for choice in event.get("choices") or ()
        for entry in choice["delta"].get(key) or ()
    ]
    assert len(pieces) >= 2
    if key == "reasoning_details":
        entry = mine[key][0]
        assert entry["signature"].startswith("Et0B") and "2+2 equals 4." in entry["text"]


def test_4_a_format_resent_with_every_piece_is_kept_whole() -> None:
    """Documented difference (docs/formats.md): OpenRouter resends a ``reasoning_details``
    entry's ``format`` (and ``id``) whole with every piece. The SDK's ``accumulate_delta``
    concatenates every string but ``index`` and ``type``, so its entry says
    ``anthropic-claude-v1anthropic-claude-v1...``, a value the provider never sent; a client
    that accumulates correctly sent the provider's value back and "differed". The console keeps
    the provider's value."""
    stream = _corpus("pydantic-ai/test_openrouter_streaming_reasoning.sse")
    pieces = [
        entry
        for event in _events(stream)
        for choice in event.get("choices") or ()
        for entry in choice["delta"].get("reasoning_details") or ()
    ]
    assert len({p["format"] for p in pieces}) == 1 and len(pieces) >= 2
    sent = pieces[0]["format"]
    (mine,) = runner.ours("openai.chat", stream).messages or [None]
    (theirs,) = oracles.openai_chat(stream).messages or [None]
    assert mine["reasoning_details"][0]["format"] == sent
    assert theirs["reasoning_details"][0]["format"] == sent * len(pieces)


def test_4_entries_of_several_indexes_interleaved_each_merge_into_their_own() -> None:
    def piece(index: int, **fields: Any) -> dict[str, Any]:
        return {"reasoning_details": [{"type": "reasoning.text", "index": index, **fields}]}

    stream = _chat(
        {"role": "assistant"},
        piece(0, text="a"),
        piece(1, text="x"),
        piece(0, text="b", signature="s0"),
        piece(1, signature="s1"),
    )
    (mine,) = runner.ours("openai.chat", stream).messages or [None]
    assert mine["reasoning_details"] == [
        {"type": "reasoning.text", "index": 0, "text": "ab", "signature": "s0"},
        {"type": "reasoning.text", "index": 1, "text": "x", "signature": "s1"},
    ]
    assert runner.openai_chat(stream, []).agree


# 5 ------------------------------------------------------------------------------------------------


def test_5_an_output_item_added_with_a_null_item_is_accepted_as_the_sdk_accepts_it() -> None:
    """Fixed: the item arrives with ``output_item.done`` and the terminal response."""
    skeleton = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt"}
    skeleton |= {"status": "in_progress", "output": []}
    message = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant"}
    message["content"] = [{"type": "output_text", "text": "hi", "annotations": []}]
    stream = _typed(
        {"type": "response.created", "sequence_number": 0, "response": skeleton},
        {"type": "response.output_item.added", "output_index": 0, "item": None},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {
            "type": "response.completed",
            "sequence_number": 3,
            "response": {**skeleton, "status": "completed", "output": [message]},
        },
    )
    verdict = runner.openai_responses(stream, [])
    assert verdict.agree, str(verdict)
    assert verdict.ours.messages == [message]


# 6, 7 (the AI SDK) -------------------------------------------------------------------------------

TRAILING_STEP = _ui(
    {"type": "start", "messageId": "m"},
    {"type": "start-step"},
    {"type": "text-start", "id": "t"},
    {"type": "text-delta", "id": "t", "delta": "Hi"},
    {"type": "text-end", "id": "t"},
    {"type": "finish-step"},
    {"type": "start-step"},
    {"type": "finish"},
    "[DONE]",
)
AFTER_DONE = _ui(
    {"type": "start", "messageId": "m"},
    {"type": "text-start", "id": "t"},
    {"type": "text-delta", "id": "t", "delta": "Hi"},
    "[DONE]",
    {"type": "text-delta", "id": "t", "delta": " there"},
    {"type": "text-end", "id": "t"},
    {"type": "finish"},
)


def test_6_a_trailing_start_step_is_not_in_the_message() -> None:
    """Fixed: ``processUIMessageStream`` pushes ``step-start`` without writing the message out,
    and nothing after it here writes: neither ``readUIMessageStream`` nor the browser's
    ``useChat`` messages (which the browser sends back) hold it. The project stored one."""
    (mine,) = runner.ours("ai-sdk.ui", TRAILING_STEP).messages or [None]
    assert [p["type"] for p in mine["parts"]] == ["step-start", "text"]


def test_7_chunks_after_done_are_read_as_the_browser_reads_them() -> None:
    """Fixed: the AI SDK's ``parseJsonEventStream`` skips ``[DONE]`` and reads on, so the
    browser's message has what came after it; the project stopped there."""
    (mine,) = runner.ours("ai-sdk.ui", AFTER_DONE).messages or [None]
    assert mine["parts"][0]["text"] == "Hi there" and mine["parts"][0]["state"] == "done"
    cut = AFTER_DONE + 'data: {"type": "text-del'  # cut off after [DONE]: still accepted
    assert runner.ours("ai-sdk.ui", cut).messages == [mine]


@pytest.fixture(scope="module")
def node() -> None:
    reason = oracles.node_unavailable()
    if reason is not None:
        pytest.skip(reason)
    oracles.node_install()


@pytest.mark.slow
def test_6_and_7_agree_with_the_ai_sdk(node: None) -> None:
    cases = {"trailing-step": TRAILING_STEP, "after-done": AFTER_DONE}
    _, results = oracles.ai_sdk(oracles.AiCase(k, v) for k, v in cases.items())
    for name, stream in cases.items():
        verdict = runner.ai_verdict(stream, runner.request_for("ai-sdk.ui"), results[name])
        assert verdict.agree, f"{name}: {verdict}"


# 8 ------------------------------------------------------------------------------------------------


def test_8_a_fallback_block_names_the_model_that_served() -> None:
    """Fixed, on the AI SDK's recorded fallback stream: ``message_start`` says
    ``claude-fable-5``, a ``fallback`` block says the request moved to ``claude-opus-4-8``,
    which wrote the answer. The message is the SDK's (the block kept as it came); the
    exchange's recorded model is the one that served, where the SDK's ``model`` names the
    first."""
    stream = _corpus(_V + "anthropic/src/__fixtures__/anthropic-fallback.chunks.txt")
    assert runner.anthropic(stream, [], beta=True).agree
    parsed = get("anthropic.messages").parse(
        request=runner.request_for("anthropic.messages"), response=None, stream=stream
    )
    assert parsed.params.response_model == "claude-opus-4-8"
    assert _events(stream)[0]["message"]["model"] == "claude-fable-5"


# 9 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "key"),
    [
        ("openai-compaction.1.chunks.txt", "compaction", "encrypted_content"),
        ("programmatic-tool-calling.1.chunks.txt", "program", "fingerprint"),
        ("openai-reasoning-encrypted-content.1.chunks.txt#0", "reasoning", "encrypted_content"),
    ],
)
def test_9_every_item_is_the_completed_responses_as_the_sdk_returns_it(
    name: str, kind: str, key: str
) -> None:
    """Fixed: OpenAI serialises an item again for ``response.completed``: its opaque field
    (``encrypted_content`` of reasoning and compaction items, ``fingerprint`` of program items)
    differs from ``output_item.done``'s, both valid. The SDK returns the completed items, which
    the backend sends back; the project kept the done ones."""
    stream = _corpus(_V + "openai/src/responses/__fixtures__/" + name)
    events = _events(stream)
    done = next(
        e["item"]
        for e in events
        if e["type"] == "response.output_item.done" and e["item"]["type"] == kind
    )
    final = next(e for e in events if e["type"] == "response.completed")["response"]["output"]
    completed = next(i for i in final if i["type"] == kind and i["id"] == done["id"])
    assert done[key] != completed[key]
    mine = runner.ours("openai.responses", stream).messages or []
    assert next(i for i in mine if i["id"] == done["id"])[key] == completed[key]
    assert runner.openai_responses(stream, []).agree


# 10 -----------------------------------------------------------------------------------------------


def test_10_azures_empty_first_chunk_does_not_name_the_response() -> None:
    """Kept (and the message agrees): Azure's first chunk is a prompt-filter event with
    ``id: ""``, ``model: ""`` and ``object: ""``. The SDK's stream helper skips it by its
    ``object``; a backend feeding every chunk to ``ChatCompletionStreamState`` gets a snapshot
    named ``""``. The project takes the first id and model that say something. Perplexity's
    ``role`` resent in every chunk: tests/conversations/formats/differential/test_corpus.py."""
    stream = _corpus(_V + "openai/src/chat/__fixtures__/azure-model-router.1.chunks.txt")
    first, second = _events(stream)[:2]
    assert first["id"] == "" and first["object"] == ""
    parsed = get("openai.chat").parse(
        request=runner.request_for("openai.chat"), response=None, stream=stream
    )
    assert parsed.params.response_id == second["id"]
    assert parsed.params.response_model == second["model"]
    assert oracles.openai_chat(stream).notes["id"] == second["id"]
    unfiltered = oracles.openai_chat(stream, helper=False)
    assert unfiltered.notes["id"] == "" and unfiltered.notes["model"] == ""
    assert runner.openai_chat(stream, []).agree


# Real recorded shapes the console refused (issue 28) ---------------------------------------------


def test_a_system_message_between_turns_is_accepted_and_kept_with_its_role() -> None:
    """pydantic-ai's live recording against claude-opus-4-8: a ``{"role": "system"}`` message
    after a ``tool_result`` holding a ``tool_addition`` block (the SDK's
    ``BetaSystemMessageParam``), answered 200. It was refused (``bad_value``); it is a history
    message with its role now, its text VISIBLE as a Chat system message's, a block nobody
    classified (``tool_addition``) UNKNOWN and never shown. Every request of the cassette is
    ingested through the API by tests/conversations/test_api_ingest.py."""
    from tests.providers import load

    records = load("pydantic-pydantic-ai__test_anthropic_lazy_advertisement_live.yaml")
    for record in records[1:]:
        assert record.request is not None
        parsed = get("anthropic.messages").parse(
            request=record.request, response=record.response, stream=None
        )
        (system,) = [m for m in parsed.history if m.role == "system"]
        assert [(b.type, b.cls.name) for b in system.blocks] == [("tool_addition", "UNKNOWN")]
        assert json.loads(system.raw)["content"][0]["type"] == "tool_addition"
    text = json.dumps(
        {
            "model": "claude-x",
            "max_tokens": 5,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "system", "content": "Answer in French.", "clear_at": "never"},
                {"role": "system", "output_config": {}},
            ],
        }
    )
    parsed = get("anthropic.messages").parse(request=text, response=None, stream=_STREAM_HI)
    first, second = parsed.history[1:]
    assert [(b.type, b.cls.name, b.text) for b in first.blocks] == [
        ("text", "VISIBLE", "Answer in French.")
    ]
    assert second.role == "system" and second.blocks == ()


_STREAM_HI = _typed(
    _START,
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Oui"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
)
