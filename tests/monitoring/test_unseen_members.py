"""What the model never sees is data with a citation (DESIGN section 20): each format's profile
lists the members its provider never puts in the prompt (``Profile.unseen``). A history that
differs from the stored one only in those (dropped, added, another identifier) is recorded as
``unseen``: not rewritten, no banner, no alert, counted apart; a change of what the model reads
next to them is still a rewrite."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.formats.profile import ANY_VALUE, Citation, Profile, Unseen, prompt_form
from conversations.formats.registry import formats
from conversations.models import Exchange
from tests.conftest import post_json
from tests.monitoring.test_rollups import summed

URL = "/api/v1/exchanges"


def test_every_unseen_member_carries_its_words_and_citation() -> None:
    listed = [(f.name, u) for f in formats() for u in f.profile.unseen]
    assert {name for name, _ in listed} >= {
        "anthropic.messages",
        "openai.chat",
        "openai.responses",
    }
    for name, u in listed:
        assert u.why and u.citation.url.startswith("https://") and u.citation.quote, (name, u)
        assert len(u.citation.checked) == 10, (name, u)
    # A profile whose member has no citation is refused by the registry.
    bare = Unseen(("x",), None, "why", Citation("", "", ""))
    profile = formats()[0].profile
    missing = Profile(**{**profile.__dict__, "unseen": (bare,)}).missing()  # type: ignore[arg-type]
    assert "unseen (words and a citation for every member)" in missing


def test_prompt_form_reads_each_kind_of_rule() -> None:
    rules = (
        Unseen(("id",), ANY_VALUE, "id", Citation("u", "q", "2026-12-04")),
        Unseen(("content",), None, "c", Citation("u", "q", "2026-12-04"), beside="calls"),
        Unseen(("content",), [], "r", Citation("u", "q", "2026-12-04"), of_type="reasoning"),
    )
    assert prompt_form(rules, {"id": "a", "x": 1}) == {"x": 1}
    assert prompt_form(rules, {"content": None, "calls": [1]}) == {"calls": [1]}
    assert prompt_form(rules, {"content": None}) == {"content": None}  # not beside a call
    assert prompt_form(rules, {"type": "reasoning", "content": []}) == {"type": "reasoning"}
    assert prompt_form(rules, {"type": "message", "content": []})["content"] == []


def _post(api: Any, conversation: str, fmt: str, request: dict[str, Any],
          response: dict[str, Any]) -> Exchange:  # fmt: skip
    body = {"conversation": conversation, "customer": "cus-u", "format": fmt,
            "request": json.dumps(request), "response": json.dumps(response),
            "labels": {"queue": "billing"}}  # fmt: skip
    answer = post_json(api, URL, body)
    assert answer.status_code == 201, answer.content
    return Exchange.objects.filter(conversation__external_id=conversation).latest("ordinal")


# --- Chat Completions -------------------------------------------------------------------------


def _chat(api: Any, conversation: str, messages: list[Any], message: dict[str, Any]) -> Exchange:
    response = {"id": "c", "object": "chat.completion", "model": "gpt-5.5", "choices": [
        {"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5}}  # fmt: skip
    return _post(api, conversation, "openai.chat",
                 {"model": "gpt-5.5", "messages": messages}, response)  # fmt: skip


CALL = {"id": "call_1", "type": "function",
        "function": {"name": "get_order", "arguments": "{\"id\":\"O-1\"}"}}  # fmt: skip
# What the SDK hands the backend (``message.model_dump()``) for a tools-only answer.
DUMPED = {"content": None, "refusal": None, "role": "assistant", "annotations": [],
          "audio": None, "function_call": None, "tool_calls": [CALL]}  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    "sent",
    [
        {"role": "assistant", "tool_calls": [CALL]},  # everything empty left out
        {"role": "assistant", "content": "", "tool_calls": [{**CALL, "index": 0}]},
        {**DUMPED, "tool_calls": [{**CALL, "index": 0}]},  # the stream's index kept
    ],
    ids=["dropped", "empty-content-and-index", "index"],
)
def test_chat_members_the_model_never_sees(api: Any, sent: dict[str, Any]) -> None:
    q = {"role": "user", "content": "Where is O-1?"}
    _chat(api, "chat", [q], DUMPED)
    result = {"role": "tool", "tool_call_id": "call_1", "content": "shipped"}
    e = _chat(api, "chat", [q, sent, result], {"role": "assistant", "content": "Shipped."})
    assert (e.rewrite_kind, e.history_rewritten, e.cache_lost_tokens) == ("unseen", False, None)
    assert summed()["rewrite_unseen"] == 1 and summed()["rewritten"] == 0


@pytest.mark.django_db
def test_chat_a_changed_call_next_to_them_is_still_a_rewrite(api: Any) -> None:
    q = {"role": "user", "content": "Where is O-1?"}
    _chat(api, "chat-seen", [q], DUMPED)
    other = {**CALL, "function": {"name": "get_order", "arguments": '{"id":"O-2"}'}}
    sent = {"role": "assistant", "tool_calls": [other]}
    result = {"role": "tool", "tool_call_id": "call_1", "content": "shipped"}
    e = _chat(api, "chat-seen", [q, sent, result], {"role": "assistant", "content": "Ok."})
    assert e.history_rewritten and e.rewrite_kind == "edited"


# --- Responses --------------------------------------------------------------------------------


REASONING = {"id": "rs_1", "type": "reasoning", "summary": [], "content": [],
             "encrypted_content": "gAAAA-enc", "status": "completed"}  # fmt: skip
MESSAGE = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": "Hello.", "annotations": []}]}  # fmt: skip


def _responses(api: Any, conversation: str, items: list[Any], output: list[Any]) -> Exchange:
    response = {"id": "r", "object": "response", "status": "completed", "model": "gpt-5.5",
                "output": output, "usage": {"input_tokens": 5, "output_tokens": 5}}  # fmt: skip
    return _post(api, conversation, "openai.responses",
                 {"model": "gpt-5.5", "input": items}, response)  # fmt: skip


@pytest.mark.django_db
def test_responses_ids_statuses_and_empty_lists_are_unseen(api: Any) -> None:
    q = {"role": "user", "content": "Hi"}
    _responses(api, "resp", [q], [REASONING, MESSAGE])
    bare_reasoning = {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA-enc"}
    bare_message = {"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Hello."}]}  # fmt: skip
    e = _responses(api, "resp", [q, bare_reasoning, bare_message, {"role": "user",
                   "content": "And?"}], [MESSAGE])  # fmt: skip
    assert (e.rewrite_kind, e.history_rewritten) == ("unseen", False)
    # The encrypted reasoning changed: the model sees another history.
    _responses(api, "resp-seen", [q], [REASONING, MESSAGE])
    changed = {**bare_reasoning, "encrypted_content": "gAAAA-other"}
    e = _responses(api, "resp-seen", [q, changed, bare_message, {"role": "user",
                   "content": "And?"}], [MESSAGE])  # fmt: skip
    assert e.history_rewritten


# --- Anthropic --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_anthropic_citations_and_page_age_null_are_unseen(api: Any) -> None:
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
              "input": {"query": "weather"}}  # fmt: skip
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
        {"type": "web_search_result", "url": "https://example.com", "title": "Weather",
         "encrypted_content": "EqAB", "page_age": None}]}  # fmt: skip
    text = {"type": "text", "text": "Sunny.", "citations": None}
    response = {"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [search, found, text], "stop_reason": "end_turn",
                "usage": {"input_tokens": 5, "output_tokens": 5}}  # fmt: skip
    q = {"role": "user", "content": "Weather?"}
    request = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [q]}
    _post(api, "anth", "anthropic.messages", request, response)
    sent = {"role": "assistant", "content": [
        search,
        {**found, "content": [{k: v for k, v in found["content"][0].items() if k != "page_age"}]},
        {"type": "text", "text": "Sunny."},
    ]}  # fmt: skip
    request = {**request, "messages": [q, sent, {"role": "user", "content": "Tomorrow?"}]}
    e = _post(api, "anth", "anthropic.messages", request, {**response, "content": [text]})
    assert (e.rewrite_kind, e.history_rewritten) == ("unseen", False)
