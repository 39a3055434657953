"""``GET /api/v1/conversations/{id}/messages?for=continuation``: per format, earlier turns'
reasoning left out as the provider's documentation allows, an open tool loop kept unmodified,
every element returned byte-identical to what was received (or, where reasoning blocks were cut,
every kept block and every other byte exactly as received), and what was left out counted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.continuation import continuation
from conversations.models import Conversation
from conversations.selectors import conversation_message_raws
from tests.conftest import post_json
from tests.conversations.continuation_cases import CASES, REASONING, Case

pytestmark = pytest.mark.django_db
MESSAGES = "/api/v1/conversations/{}/messages"


def split(body: bytes) -> tuple[list[str], dict[str, int]]:
    """The elements' exact texts and the left_out member of a continuation body."""
    text = body.decode("utf-8")
    assert text.startswith('{"messages":[')
    decoder = json.JSONDecoder()
    i, out = len('{"messages":['), []
    while text[i] != "]":
        _, end = decoder.raw_decode(text, i)
        out.append(text[i:end])
        i = end + (1 if text[end] == "," else 0)
    tail = json.loads("{" + text[i + 2 :])
    return out, tail["left_out"]


def stored(conversation: str) -> list[str]:
    return conversation_message_raws(Conversation.objects.get(external_id=conversation))


@pytest.mark.parametrize(("name", "open_loop"), list(CASES))
def test_continuation_per_format(api: Any, name: str, open_loop: bool) -> None:
    case: Case = CASES[(name, open_loop)]
    conversation = f"cont-{name}-{open_loop}"
    assert post_json(api, "/api/v1/exchanges", case.body(conversation)).status_code == 201
    raws = stored(conversation)
    response = api.get(MESSAGES.format(conversation), {"for": "continuation"})
    assert response.status_code == 200
    elements, left_out = split(response.content)
    assert left_out["rule"] == response["Continuation-Rule"] == case.rule
    assert left_out["elements"] == case.left_out
    assert int(response["Left-Out-Elements"]) == case.left_out
    if not case.left_out:
        # The rule leaves nothing out: every element exactly as received.
        assert elements == raws
        assert left_out["bytes"] == 0
        return
    sent = sum(len(e.encode()) for e in elements)
    assert left_out["bytes"] == sum(len(r.encode()) for r in raws) - sent > 0
    assert int(response["Left-Out-Bytes"]) == left_out["bytes"]
    # The user's messages come back exactly as received.
    for raw in raws:
        if json.loads(raw).get("role") == "user" if raw.startswith("{") else True:
            assert raw in elements
    # The earlier turn's reasoning is left out; the rest of that message is its exact text.
    if case.history_cut:
        assert case.history_cut in elements
    assert f"{REASONING}-1" not in response.content.decode()
    assert "ENC-1" not in response.content.decode()
    last = raws[-1]
    if open_loop:
        # In the open tool loop the last assistant turn is kept unmodified, reasoning and all.
        assert elements[-1] == last
        assert f"{REASONING}-2" in elements[-1] or "ENC-2" in response.content.decode()
    else:
        assert f"{REASONING}-2" not in response.content.decode()
        assert "ENC-2" not in response.content.decode()
    # Whatever is kept of a message is a byte-for-byte part of what was received.
    for element in elements:
        assert any(_subsequence(element, raw) for raw in raws), element
    # The plain replay is unchanged.
    plain = api.get(MESSAGES.format(conversation))
    assert plain.content == b'{"messages":[' + ",".join(raws).encode() + b"]}"


def _subsequence(part: str, whole: str) -> bool:
    """Every character of ``part`` appears in ``whole`` in order (cuts only, nothing added
    but the ``,`` that joins what was kept)."""
    it = iter(whole)
    return all(ch in it for ch in part)


def test_continuation_of_a_conversation_without_reasoning_returns_it_whole(api: Any) -> None:
    case = CASES[("anthropic", False)]
    body = case.body("cont-plain")
    body["request"] = json.dumps(
        {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    )
    body["response"] = body["response"].replace("MARKER-CONTINUATION-REASONING-2", "x")
    assert post_json(api, "/api/v1/exchanges", body).status_code == 201
    value = continuation("anthropic.messages", stored("cont-plain"), model="claude-sonnet-4-5")
    assert value.left_out_elements == 1  # the answer's own thinking: its turn is complete
    assert continuation("unknown.format", ["{}"]).raws == ["{}"]


def test_continuation_bad_input_and_missing(api: Any) -> None:
    response = api.get(MESSAGES.format("nope"), {"for": "continuation"})
    assert response.status_code == 404
    response = api.get(MESSAGES.format("nope"), {"for": "everything"})
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid",
        "detail": "for must be continuation, or absent",
        "field": "for",
        "at": None,
    }


def test_continuation_needs_a_token(client: Any) -> None:
    response = client.get(MESSAGES.format("x"), {"for": "continuation"})
    assert response.status_code == 401


def _a(*blocks: dict[str, Any]) -> str:
    return json.dumps({"role": "assistant", "content": list(blocks)})


def _u(content: Any) -> str:
    return json.dumps({"role": "user", "content": content})


THINK = {"type": "thinking", "thinking": "t", "signature": "s"}
TEXT = {"type": "text", "text": "x"}
CALL = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}


def test_anthropic_rule_the_tool_loop_stays_open_once_its_result_came() -> None:
    # Anthropic: the thinking of the assistant turn that is calling tools goes back unmodified,
    # also after the tool result (the model continues that turn); earlier turns' is left out.
    raws = [_u("q1"), _a(THINK, TEXT), _u("q2"), _a(THINK, CALL), _u([RESULT])]
    kept = continuation("anthropic.messages", raws, model="claude-sonnet-4-5")
    assert kept.open_tool_loop
    assert kept.raws[3:] == raws[3:]
    assert kept.left_out_elements == 1
    # The turn closes with an answer that calls no tool: its thinking is not needed any more.
    closed = continuation("anthropic.messages", [*raws, _a(THINK, TEXT)], model="claude-3-7")
    assert not closed.open_tool_loop
    assert closed.left_out_elements == 3


def test_an_assistant_message_of_reasoning_only_is_never_emptied() -> None:
    raws = [_u("q1"), _a(THINK), _u("q2"), _a(TEXT)]
    assert continuation("anthropic.messages", raws, model="claude-sonnet-4-5").raws == raws


def test_openai_responses_rule_no_reasoning_item_is_cut_while_its_item_is_kept() -> None:
    # openai.responses.reasoning-with-its-item: the API refuses a function_call (or message)
    # whose reasoning item is missing, so an earlier turn's reasoning stays with its call.
    reasoning = json.dumps({"type": "reasoning", "id": "rs", "summary": []})
    call = json.dumps({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"})
    output = json.dumps({"type": "function_call_output", "call_id": "c", "output": "ok"})
    user = json.dumps({"role": "user", "content": "q"})
    raws = ['"q0"', reasoning, call, output, user, reasoning, call, output]
    kept = continuation("openai.responses", raws, model="gpt-5.5")
    assert kept.rule == "openai.responses.reasoning-with-its-item"
    assert kept.open_tool_loop
    assert kept.raws == raws
    assert (kept.left_out_elements, kept.left_out_bytes) == (0, 0)
