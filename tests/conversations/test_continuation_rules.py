"""Continuation as cited data: for each format, model family and account regime, a
conversation built through the API gets a ``?for=continuation`` body that the provider's check,
as its documentation states it (the rule's citation), accepts. Each test names its rule; the
checks below are written from the cited sentences, not from the code that cuts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.continuation import thinking_regime
from conversations.formats import registry
from tests.conftest import post_json
from tests.conversations.test_continuation import MESSAGES, split, stored

pytestmark = pytest.mark.django_db


def _post(api: Any, conversation: str, fmt: str, request: dict[str, Any], response: Any) -> None:
    body = {
        "conversation": conversation,
        "customer": "cus-rules",
        "format": fmt,
        "request": json.dumps(request),
        "response": json.dumps(response),
    }
    answer = post_json(api, "/api/v1/exchanges", body)
    assert answer.status_code == 201, answer.content


def _continue(api: Any, conversation: str) -> tuple[list[Any], list[Any], str]:
    """The stored history and the continuation body (parsed), and the rule that decided."""
    response = api.get(MESSAGES.format(conversation), {"for": "continuation"})
    assert response.status_code == 200
    elements, left_out = split(response.content)
    assert left_out["rule"] == response["Continuation-Rule"]
    return (
        [json.loads(r) for r in stored(conversation)],
        [json.loads(e) for e in elements],
        (left_out["rule"]),
    )


# --- Anthropic: a conversation with thinking in an earlier turn and an open tool loop ----------


def _think(n: int) -> dict[str, Any]:
    return {"type": "thinking", "thinking": f"T{n}", "signature": f"SIG{n}"}


def _claude(api: Any, conversation: str, model: str) -> None:
    def answer(content: list[Any], stop: str) -> dict[str, Any]:
        return {"id": "msg", "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop,
                "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip

    call = {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"id": "O-1"}}
    turns: list[Any] = [{"role": "user", "content": "Q1"}]
    outputs = [
        ([_think(1), {"type": "text", "text": "A1"}], "end_turn"),
        ([_think(2), call], "tool_use"),
    ]
    for content, stop in outputs:
        request = {"model": model, "max_tokens": 2048, "messages": turns}
        _post(api, conversation, "anthropic.messages", request, answer(content, stop))
        turns = [*turns, {"role": "assistant", "content": content}]
        turns.append(
            {"role": "user", "content": "Q2"}
            if stop == "end_turn"
            else {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "shipped"}]}
        )  # fmt: skip
    # The tool result goes in with the third call; its answer opens one more tool call.
    _post(api, conversation, "anthropic.messages",
          {"model": model, "max_tokens": 2048, "messages": turns},
          answer([_think(3), {**call, "id": "toolu_2"}], "tool_use"))  # fmt: skip


def _thinking_positions(values: list[Any]) -> list[tuple[int, int, str]]:
    return [
        (i, j, block["thinking"])
        for i, v in enumerate(values)
        for j, block in enumerate(v.get("content") if isinstance(v.get("content"), list) else [])
        if isinstance(block, dict) and block.get("type") == "thinking"
    ]


def prefix_check(history: list[Any], sent: list[Any]) -> bool:
    """Anthropic's prefix check as the cited page states it: it fails if an earlier message
    changed after Claude produced a block, or if a thinking block between others was left out or
    moved. The last thinking block sent back and everything before it must be the stored ones."""
    produced = _thinking_positions(history)
    kept = _thinking_positions(sent)
    if not kept:
        return True
    last = kept[-1]
    if last not in produced:
        return False
    # Everything up to the last kept block unchanged: every earlier message equal, and no
    # thinking block left out or moved before it.
    return sent[: last[0]] == history[: last[0]] and kept == produced[: produced.index(last) + 1]


def tool_loop_check(history: list[Any], sent: list[Any]) -> bool:
    """The older rule: the thinking of the assistant turn in the open tool loop goes back with
    its tool results, complete and unmodified (earlier turns' may be left out)."""
    last_assistant = max(i for i, v in enumerate(history) if v.get("role") == "assistant")
    return sent[last_assistant] == history[last_assistant]


def test_anthropic_preserved_thinking_rule_keeps_every_block(api: Any, settings: Any) -> None:
    """anthropic.preserved-thinking (Fable/Mythos 5.1+, Opus/Sonnet/Haiku 5.5; regime
    preserved): nothing is left out, so the prefix check passes for every block."""
    settings.ANTHROPIC_THINKING_REGIME = "preserved"
    for model in ("claude-fable-5-1", "claude-opus-5-5-20260601", "claude-haiku-5-5"):
        conversation = f"rules-preserved-{model}"
        _claude(api, conversation, model)
        history, sent, rule = _continue(api, conversation)
        assert rule == "anthropic.preserved-thinking"
        assert prefix_check(history, sent) and tool_loop_check(history, sent)
        assert len(_thinking_positions(sent)) == 3
        # The rule as it was (earlier turns' thinking cut) would fail the prefix check.
        legacy = registry.get("anthropic.messages").profile.continuation.rule(model, "legacy")
        assert legacy is not None
        _, _, cuts = legacy.decide(history)
        cut = [
            {**v, "content": [b for n, b in enumerate(v["content"]) if n not in cuts.get(i, ())]}
            if i in cuts else v
            for i, v in enumerate(history)
        ]  # fmt: skip
        assert not prefix_check(history, cut)


@pytest.mark.parametrize(
    ("setting", "created", "rule"),
    [
        ("legacy", "", "anthropic.preserved-thinking-legacy-account"),
        ("auto", "2026-03-01", "anthropic.preserved-thinking-legacy-account"),
        ("auto", "2026-08-31", "anthropic.preserved-thinking"),
        ("auto", "", "anthropic.preserved-thinking"),
    ],
)
def test_anthropic_account_regime_setting(
    api: Any, settings: Any, setting: str, created: str, rule: str
) -> None:
    """anthropic.preserved-thinking-legacy-account: an account created before 2026-08-31 is not
    held to the prefix check by default; ANTHROPIC_THINKING_REGIME (auto: by creation date)
    says which regime the deployment's account is in."""
    settings.ANTHROPIC_THINKING_REGIME = setting
    settings.ANTHROPIC_ACCOUNT_CREATED = created
    conversation = f"rules-regime-{setting}-{created}"
    _claude(api, conversation, "claude-mythos-5-2")
    history, sent, used = _continue(api, conversation)
    assert used == rule
    assert tool_loop_check(history, sent)
    if rule == "anthropic.preserved-thinking":
        assert sent == history and prefix_check(history, sent)
    else:
        assert [t for _, _, t in _thinking_positions(sent)] == ["T2", "T3"]


def test_anthropic_earlier_thinking_rule_for_older_claude(api: Any, settings: Any) -> None:
    """anthropic.earlier-thinking (older Claude, any regime): earlier turns' thinking is left
    out, the open tool loop's turn goes back whole."""
    settings.ANTHROPIC_THINKING_REGIME = "preserved"
    _claude(api, "rules-older", "claude-sonnet-4-5-20250929")
    history, sent, rule = _continue(api, "rules-older")
    assert rule == "anthropic.earlier-thinking"
    assert tool_loop_check(history, sent)
    assert [t for _, _, t in _thinking_positions(sent)] == ["T2", "T3"]


def test_unknown_model_gets_the_byte_exact_replay(api: Any) -> None:
    """replay: a model no rule names (a gateway's alias) gets everything back unmodified."""
    _claude(api, "rules-unknown", "house-model-7")
    response = api.get(MESSAGES.format("rules-unknown"), {"for": "continuation"})
    elements, left_out = split(response.content)
    assert left_out == {"elements": 0, "bytes": 0, "rule": "replay"}
    assert elements == stored("rules-unknown")


def test_thinking_regime_values() -> None:
    from datetime import date

    assert thinking_regime("legacy", date(2027, 1, 1)) == "legacy"
    assert thinking_regime("auto", date(2026, 8, 30)) == "legacy"
    assert thinking_regime("auto", None) == "preserved"
    with pytest.raises(ValueError, match="preserved, legacy or auto"):
        thinking_regime("sometimes", None)


# --- OpenAI Responses ------------------------------------------------------------------------


def reasoning_pair_check(history: list[Any], sent: list[Any]) -> bool:
    """The Responses API's check: an item that a reasoning item preceded is refused without it
    ("Item 'fc_...' of type 'function_call' was provided without its required 'reasoning'
    item")."""
    for i, item in enumerate(history[1:], start=1):
        before = history[i - 1]
        if isinstance(before, dict) and before.get("type") == "reasoning" and item in sent:
            at = sent.index(item)
            if at == 0 or sent[at - 1] != before:
                return False
    return True


def test_openai_responses_reasoning_with_its_item(api: Any) -> None:
    """openai.responses.reasoning-with-its-item: an earlier turn's ``rs_`` stays before its
    ``fc_`` and ``msg_``."""

    def response(output: list[Any]) -> dict[str, Any]:
        return {"id": "resp", "object": "response", "status": "completed", "model": "gpt-5.5",
                "output": output, "usage": {"input_tokens": 9, "output_tokens": 3}}  # fmt: skip

    rs1 = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "E1"}
    fc1 = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"}
    out1 = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    rs2 = {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "E2"}
    msg2 = {"type": "message", "id": "msg_2", "role": "assistant",
            "content": [{"type": "output_text", "text": "done", "annotations": []}]}  # fmt: skip
    user = {"role": "user", "content": "Q1"}
    _post(api, "rules-responses", "openai.responses",
          {"model": "gpt-5.5", "input": [user]}, response([rs1, fc1]))  # fmt: skip
    _post(api, "rules-responses", "openai.responses",
          {"model": "gpt-5.5", "input": [user, rs1, fc1, out1]}, response([rs2, msg2]))  # fmt: skip
    _post(api, "rules-responses", "openai.responses",
          {"model": "gpt-5.5", "input": [user, rs1, fc1, out1, rs2, msg2,
                                         {"role": "user", "content": "Q2"}]},
          response([{**rs1, "id": "rs_3"}, {**fc1, "id": "fc_3", "call_id": "c3"}]))  # fmt: skip
    history, sent, rule = _continue(api, "rules-responses")
    assert rule == "openai.responses.reasoning-with-its-item"
    assert reasoning_pair_check(history, sent)
    assert sent == history


# --- DeepSeek (Chat Completions) --------------------------------------------------------------


def _deepseek(api: Any, conversation: str, model: str, *, tools: bool) -> None:
    def answer(message: dict[str, Any], finish: str) -> dict[str, Any]:
        return {"id": "c", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}]}  # fmt: skip

    call = {"id": "call_1", "type": "function",
            "function": {"name": "get_order", "arguments": "{\"id\":\"O-1\"}"}}  # fmt: skip
    first = {"role": "assistant", "content": None if tools else "A1", "reasoning_content": "R1"}
    if tools:
        first["tool_calls"] = [call]
    turns: list[Any] = [{"role": "user", "content": "Q1"}]
    _post(api, conversation, "openai.chat", {"model": model, "messages": turns},
          answer(first, "tool_calls" if tools else "stop"))  # fmt: skip
    turns.append(first)
    if tools:
        turns.append({"role": "tool", "tool_call_id": "call_1", "content": "shipped"})
        second = {"role": "assistant", "content": "A1", "reasoning_content": "R1b"}
        _post(api, conversation, "openai.chat", {"model": model, "messages": turns},
              answer(second, "stop"))  # fmt: skip
        turns.append(second)
    turns.append({"role": "user", "content": "Q2"})
    last = {"role": "assistant", "content": "A2", "reasoning_content": "R2"}
    _post(api, conversation, "openai.chat", {"model": model, "messages": turns},
          answer(last, "stop"))  # fmt: skip


def deepseek_tool_turn_check(history: list[Any], sent: list[Any]) -> bool:
    """DeepSeek thinking mode: between two user messages, if the model performed a tool call,
    the assistant's reasoning_content must be passed back in every later turn."""
    turn_called = False
    for i, v in enumerate(history):
        if v.get("role") == "user":
            turn_called = any(
                w.get("tool_calls") for w in history[i + 1 :][: _next_user(history, i) - i - 1]
            )
        elif (
            v.get("role") == "assistant"
            and turn_called
            and sent[i].get("reasoning_content") != v.get("reasoning_content")
        ):
            return False
    return True


def _next_user(values: list[Any], i: int) -> int:
    return next((j for j in range(i + 1, len(values)) if values[j].get("role") == "user"),
                len(values))  # fmt: skip


def test_deepseek_thinking_tool_turns(api: Any) -> None:
    """deepseek.thinking-tool-turns (V4 thinking mode): the tool turn's reasoning_content goes
    back in every later turn; a turn without a tool call has its reasoning left out."""
    _deepseek(api, "rules-ds-tools", "deepseek-v4-pro", tools=True)
    history, sent, rule = _continue(api, "rules-ds-tools")
    assert rule == "deepseek.thinking-tool-turns"
    assert deepseek_tool_turn_check(history, sent)
    assert [m.get("reasoning_content") for m in sent if m.get("role") == "assistant"] == [
        "R1", "R1b", None
    ]  # fmt: skip
    _deepseek(api, "rules-ds-plain", "deepseek-v4-flash", tools=False)
    history, sent, _ = _continue(api, "rules-ds-plain")
    assert deepseek_tool_turn_check(history, sent)
    assert not any("reasoning_content" in m for m in sent)


def test_deepseek_r1_receives_no_earlier_reasoning(api: Any) -> None:
    """deepseek.r1: R1 answers 400 to a history that carries reasoning_content."""
    _deepseek(api, "rules-r1", "deepseek-r1-0528", tools=False)
    history, sent, rule = _continue(api, "rules-r1")
    assert rule == "deepseek.r1"
    assert any("reasoning_content" in m for m in history)
    assert not any("reasoning_content" in m for m in sent)
    assert [m.get("content") for m in sent] == [m.get("content") for m in history]


def test_every_rule_is_cited() -> None:
    """Every rule of every format carries an address, a quoted sentence and a date, and is
    listed in docs/formats.md with them."""
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text()
    for fmt in registry.formats():
        for rule in fmt.profile.continuation.rules:
            assert rule.citation.url.startswith("https://")
            assert len(rule.citation.quote) > 20 and rule.citation.checked[:2] == "20"
            assert f"`{rule.name}`" in docs, rule.name
            assert rule.citation.url in docs, rule.citation.url
