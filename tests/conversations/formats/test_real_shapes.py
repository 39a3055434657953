"""Shapes real traffic sends that the console refused or stored wrong (docs/formats.md, "Real
traffic: what the model never sees, and what was refused"): each accepted as the provider meant
it, or refused with the words a person can act on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.formats import FormatError, registry

CHAT = registry.get("openai.chat")
RESPONSES = registry.get("openai.responses")
REQUEST = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})


def _chunks(*deltas: dict[str, Any], tail: str = "data: [DONE]\n\n") -> str:
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    events = [
        {**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + tail


@pytest.mark.parametrize(
    ("tail", "error"),
    [
        ('error: {"message": "upstream failed", "type": "server_error"}\n\n', "server_error"),
        ("error: upstream failed\n", "error"),
        ('event: error\ndata: {"error": {"code": "tool_use_failed"}}\n\n', "tool_use_failed"),
    ],
    ids=["error-line-json", "error-line-text", "error-event"],
)
def test_a_stream_ended_by_an_error_is_stored_with_its_error(tail: str, error: str) -> None:
    parsed = CHAT.parse(
        request=REQUEST, stream=_chunks({"role": "assistant", "content": "Hel"}, tail=tail)
    )
    assert json.loads(parsed.output[0].raw) == {"role": "assistant", "content": "Hel"}
    assert (parsed.params.stream_error, parsed.params.truncated) == (error, True)


def test_a_channel_resent_with_every_delta_is_kept_whole() -> None:
    stream = _chunks(
        {"role": "assistant", "channel": "analysis", "reasoning": "Think"},
        {"channel": "analysis", "reasoning": "ing."},
        {"channel": "final", "content": "Done."},
    )
    message = json.loads(CHAT.parse(request=REQUEST, stream=stream).output[0].raw)
    assert message["channel"] == "final" and message["reasoning"] == "Thinking."


def test_a_responses_request_with_a_stored_prompt_needs_no_input() -> None:
    response = {
        "id": "r",
        "object": "response",
        "status": "completed",
        "model": "gpt-5.5",
        "output": [],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    request = {"model": "gpt-5.5", "prompt": {"id": "pmpt_1", "version": "2"}}
    parsed = RESPONSES.parse(request=json.dumps(request), response=json.dumps(response))
    assert parsed.history == [] and parsed.params.request_settings["prompt"]["id"] == "pmpt_1"
    with pytest.raises(FormatError) as refused:
        RESPONSES.parse(request=json.dumps({"model": "gpt-5.5"}), response=json.dumps(response))
    assert (refused.value.code, refused.value.at) == ("missing", "$.input")


def test_a_chat_request_without_model_needs_an_endpoint_naming_the_deployment() -> None:
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "model": None})
    answer = json.dumps(
        {
            "id": "c",
            "object": "chat.completion",
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Hi"},
                }
            ],
        }
    )
    endpoint = "/openai/deployments/support-gpt4o/chat/completions?api-version=2024-12-01-preview"
    parsed = CHAT.parse(request=body, response=answer, endpoint=endpoint)
    assert parsed.params.requested_model == "support-gpt4o"
    for missing in (None, "/v1/chat/completions"):
        with pytest.raises(FormatError) as refused:
            CHAT.parse(request=body, response=answer, endpoint=missing)
        assert (refused.value.field, refused.value.at) == ("request", "$.model")


def test_a_content_filter_answer_without_a_message_is_a_refusal_with_no_answer() -> None:
    answer = json.dumps(
        {
            "id": "c",
            "object": "chat.completion",
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "content_filter",
                    "content_filter_results": {"hate": {"filtered": True}},
                }
            ],
        }
    )
    parsed = CHAT.parse(request=REQUEST, response=answer)
    assert parsed.output == []
    assert (parsed.params.stop_reason, parsed.params.refusal) == ("content_filter", True)
    # Neither a message nor a finish reason: nothing happened that could be stored.
    empty = json.dumps({"id": "c", "object": "chat.completion", "choices": [{"index": 0}]})
    with pytest.raises(FormatError):
        CHAT.parse(request=REQUEST, response=empty)
