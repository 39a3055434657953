"""The backend's conformance, classified (DESIGN section 14): changes the model does not see are
recorded without the banner and the alert; changes it sees (a block, the order, system/tools)
are flagged and priced from the usage; Anthropic's own verdict (``input_transformations``) is
stored, shown and counted; a reasoning share the provider does not split is estimated and says
so; a stored message of another format is never parsed with this one's parser."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.blocks import Message
from conversations.models import Conversation, Exchange
from conversations.monitoring.metrics import metric
from conversations.monitoring.rewrites import EDITED, classify
from conversations.monitoring.selectors import Sums
from tests.conftest import post_json
from tests.factories import UserFactory, roles
from tests.monitoring.test_rollups import summed

pytestmark = pytest.mark.django_db
MODEL = "claude-sonnet-4-5"


def _anthropic(api: Any, conversation: str, messages: list[Any], content: list[Any], *,
               system: str = "Be kind.", usage: dict[str, Any] | None = None,
               extra: dict[str, Any] | None = None) -> Exchange:  # fmt: skip
    usage = usage or {"input_tokens": 10, "output_tokens": 100}
    response = {"id": "msg", "type": "message", "role": "assistant", "model": MODEL,
                "content": content, "stop_reason": "end_turn", "usage": usage,
                **(extra or {})}  # fmt: skip
    body = {
        "conversation": conversation,
        "customer": "cus-conf",
        "format": "anthropic.messages",
        "request": json.dumps(
            {"model": MODEL, "max_tokens": 1024, "system": system, "messages": messages}
        ),
        "response": json.dumps(response),
        "labels": {"queue": "billing"},
    }
    answer = post_json(api, "/api/v1/exchanges", body)
    assert answer.status_code == 201, answer.content
    return Exchange.objects.filter(conversation__external_id=conversation).latest("ordinal")


def _page(client: Any, conversation: str, *, role: str = "admin") -> str:
    """The conversation page as a console admin (the backend's conformance is theirs) or, with
    ``role="support_agent"``, as an agent reads it."""
    roles()
    user = UserFactory(username=f"{role}-{conversation}", groups=[role],
                       queues=["billing"])  # fmt: skip
    client.force_login(user)
    pk = Conversation.objects.get(external_id=conversation).pk
    response = client.get(f"/conversations/{pk}/")
    assert response.status_code == 200
    return response.content.decode()


CALL = {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"id": "O-1"},
        "caller": {"type": "direct"}}  # fmt: skip
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                       "content": "shipped"}]}  # fmt: skip


def test_dropping_the_default_caller_is_a_change_the_model_does_not_see(
    api: Any, client: Any
) -> None:
    q = {"role": "user", "content": "Where is O-1?"}
    _anthropic(api, "unseen", [q], [CALL])
    without = {k: v for k, v in CALL.items() if k != "caller"}
    e = _anthropic(api, "unseen", [q, {"role": "assistant", "content": [without]}, RESULT],
                   [{"type": "text", "text": "Shipped."}])  # fmt: skip
    assert (e.rewrite_kind, e.history_rewritten, e.cache_lost_tokens) == ("unseen", False, None)
    sums = summed()
    assert (sums["rewrite_unseen"], sums["rewritten"]) == (1, 0)
    # The alert reads "rewritten": a change the model does not see cannot fire it.
    assert metric("rewrite_rate").value(Sums({}, sums, {}, {})) == 0
    html = _page(client, "unseen")
    assert "History rewritten" not in html
    assert "only fields the provider never puts in the prompt changed" in html
    agent = _page(client, "unseen", role="support_agent")
    assert "never puts in the prompt" not in agent and "History rewritten" not in agent


def test_editing_the_caller_or_a_text_block_is_seen_and_priced(api: Any, client: Any) -> None:
    q = {"role": "user", "content": "Where is O-1?"}
    cached = {"input_tokens": 10, "cache_read_input_tokens": 3000,
              "cache_creation_input_tokens": 500, "output_tokens": 100}  # fmt: skip
    _anthropic(api, "seen", [q], [{"type": "text", "text": "Let me look."}], usage=cached)
    edited = {"role": "assistant", "content": [{"type": "text", "text": "Let me check."}]}
    after = {"input_tokens": 3510, "cache_read_input_tokens": 0, "output_tokens": 100}
    e = _anthropic(api, "seen", [q, edited, {"role": "user", "content": "And?"}],
                   [{"type": "text", "text": "Shipped."}], usage=after)  # fmt: skip
    assert (e.rewrite_kind, e.history_rewritten, e.rewritten_at) == (EDITED, True, 1)
    assert e.cache_lost_tokens == 3500  # cached before (read and written), not read now
    assert summed()["rewritten"] == 1 and summed()["cache_lost_tokens"] == 3500
    html = _page(client, "seen")
    assert "History rewritten" in html
    assert "3,500 cached input tokens read again at full price" in html
    agent = _page(client, "seen", role="support_agent")
    assert "History rewritten" not in agent and "cached input tokens" not in agent


def test_a_changed_system_prompt_is_a_change_the_model_sees(api: Any) -> None:
    q = {"role": "user", "content": "Hi"}
    _anthropic(api, "system", [q], [{"type": "text", "text": "Hello."}], system="Be kind.")
    e = _anthropic(api, "system", [q, {"role": "assistant", "content": [
        {"type": "text", "text": "Hello."}]}, {"role": "user", "content": "Bye"}],
        [{"type": "text", "text": "Bye."}], system="Be kind. Today is Tuesday.")  # fmt: skip
    assert e.rewrite_kind == "settings" and e.rewritten_at is None
    assert summed()["rewrite_settings"] == summed()["rewritten"] == 1


def test_responses_empty_annotations_dropped_is_unseen_but_a_citation_dropped_is_not(
    api: Any,
) -> None:
    def post(conversation: str, items: list[Any], output: list[Any]) -> Exchange:
        response = {"id": "r", "object": "response", "status": "completed", "model": "gpt-5.5",
                    "output": output, "usage": {"input_tokens": 5, "output_tokens": 5}}  # fmt: skip
        body = {"conversation": conversation, "customer": "c", "format": "openai.responses",
                "request": json.dumps({"model": "gpt-5.5", "input": items}),
                "response": json.dumps(response)}  # fmt: skip
        assert post_json(api, "/api/v1/exchanges", body).status_code == 201
        return Exchange.objects.filter(conversation__external_id=conversation).latest("ordinal")

    q = {"role": "user", "content": "Q"}
    for name, cited in (("empty", []), ("cited", [{"type": "url_citation", "url": "u"}])):
        part = {"type": "output_text", "text": "A", "annotations": cited}
        message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                   "content": [part]}  # fmt: skip
        post(name, [q], [message])
        sent = {**message, "content": [{"type": "output_text", "text": "A"}]}
        e = post(name, [q, sent, {"role": "user", "content": "Q2"}], [message])
        assert e.rewrite_kind == ("unseen" if name == "empty" else EDITED), name
        assert e.history_rewritten is (name == "cited")


def test_input_transformations_are_stored_shown_and_counted(api: Any, client: Any) -> None:
    verdict = [
        {"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_mismatch"},
        {"type": "thinking_mismatch_allowed", "path": "messages.3.content.0",
         "reason": "model_binding_mismatch", "thinking": "MARKER-NEVER-STORED"},
    ]  # fmt: skip
    e = _anthropic(api, "verdict", [{"role": "user", "content": "Hi"}],
                   [{"type": "text", "text": "Hello."}],
                   extra={"input_transformations": verdict})  # fmt: skip
    assert e.input_transformations == [
        {"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_mismatch"},
        {"type": "thinking_mismatch_allowed", "path": "messages.3.content.0",
         "reason": "model_binding_mismatch"},
    ]  # fmt: skip
    sums = summed()
    assert (sums["thinking_dropped"], sums["thinking_mismatch_allowed"]) == (1, 1)
    html = _page(client, "verdict")
    assert "the provider dropped a thinking block the backend sent back at messages.1" in html
    assert "MARKER-NEVER-STORED" not in html


def test_anthropic_reasoning_share_is_estimated_and_labelled(api: Any, client: Any) -> None:
    thinking = {"type": "thinking", "thinking": "x" * 3000, "signature": "s"}
    e = _anthropic(api, "share", [{"role": "user", "content": "Hi"}],
                   [thinking, {"type": "text", "text": "y" * 1000}],
                   usage={"input_tokens": 10, "output_tokens": 400})  # fmt: skip
    assert (e.reasoning_tokens, e.reasoning_estimated) == (300, True)
    assert "of them reasoning (75%), estimated" in _page(client, "share")
    assert summed()["reasoning_estimated"] == 1
    # Reported by the provider: taken as it is, not estimated.
    reported = _anthropic(api, "share-reported", [{"role": "user", "content": "Hi"}],
                          [thinking, {"type": "text", "text": "y"}],
                          usage={"input_tokens": 10, "output_tokens": 400,
                                 "output_tokens_details": {"thinking_tokens": 390}})  # fmt: skip
    assert (reported.reasoning_tokens, reported.reasoning_estimated) == (390, False)


def test_redacted_thinking_is_estimated_from_its_bytes(api: Any) -> None:
    redacted = {"type": "redacted_thinking", "data": "A" * 400}
    e = _anthropic(api, "redacted", [{"role": "user", "content": "Hi"}],
                   [redacted, {"type": "text", "text": "z" * 100}],
                   usage={"input_tokens": 10, "output_tokens": 80})  # fmt: skip
    assert e.reasoning_estimated and e.reasoning_tokens == 60  # 300 bytes of 400 characters


def test_a_stored_message_of_another_format_is_never_parsed_with_this_ones() -> None:
    # A Responses item stored earlier, then an Anthropic history: the Anthropic parser would
    # refuse the item ("missing 'role'"); classification must not try.
    stored = [("assistant", '{"type":"reasoning","id":"rs_1","summary":[]}', "openai.responses")]
    sent = [Message("user", '{"role":"user","content":"hi"}')]
    assert classify("anthropic.messages", sent, stored) == EDITED
