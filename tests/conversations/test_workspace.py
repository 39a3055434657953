"""The workspace's domain: statuses folded from events, provider strings in words, the
conversation page's timeline (tool calls joined with their results in every format, server tools
by what they did, exchanges beside their turns), identifier links spelt any way."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.demo import demo_bodies
from conversations.formats import names
from conversations.ingest.body import exchange_input
from conversations.models import Conversation, ToolLink
from conversations.projection.policies import policies_changed
from conversations.projection.project import source_link
from conversations.selectors import conversation_page
from conversations.services import conversation_ingest_exchange
from conversations.workspace.exchanges import exchange_summary
from conversations.workspace.status import conversation_status
from conversations.workspace.timeline import Timeline, build_timeline
from conversations.workspace.words import event_sentence, field_label, finish_words, server_tool
from tests.factories import demo_conversation

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([], ("open", None)),
        ([("rated", at(1))], ("open", None)),
        ([("escalated", at(1))], ("escalated", at(1))),
        ([("escalated", at(1)), ("user_replied", at(2))], ("escalated", at(1))),
        ([("escalated", at(1)), ("resolved", at(3))], ("resolved", at(3))),
        ([("resolved", at(1)), ("user_replied", at(2))], ("open", at(2))),
        ([("abandoned", at(1)), ("rated", at(2))], ("abandoned", at(1))),
    ],
)
def test_status_is_folded_from_the_events(events: list[Any], expected: Any) -> None:
    assert conversation_status(events) == expected


@pytest.mark.django_db
def test_the_events_api_keeps_the_status_even_for_a_late_event(api: APIClient) -> None:
    api.post("/api/v1/exchanges", next(demo_bodies(1)), format="json")
    conversation = Conversation.objects.get()
    url = f"/api/v1/conversations/{conversation.external_id}/events"
    assert conversation.status == "open"
    api.post(url, {"type": "resolved", "at": "2026-11-30T10:05:00Z"}, format="json")
    # Arrives after the resolution, but happened before it: still resolved.
    api.post(url, {"type": "escalated", "at": "2026-11-30T10:00:00Z", "value": {}}, format="json")
    conversation.refresh_from_db()
    assert conversation.status == "resolved"
    assert conversation.status_at.isoformat().startswith("2026-11-30T10:05")
    api.post(url, {"type": "user_replied", "at": "2026-11-30T11:00:00Z"}, format="json")
    conversation.refresh_from_db()
    assert conversation.status == "open"


def test_provider_strings_in_words() -> None:
    assert finish_words("end_turn") == "finished its answer"
    assert finish_words("tool-calls") == "stopped to call a tool"
    assert finish_words("length") == "was cut off by the output token limit"
    assert finish_words("brand_new") == "finish reason “brand_new”"
    assert finish_words("") == "no finish reason reported"
    assert server_tool("server_tool_use", "web_search") == "Searched the web"
    assert server_tool("web_search_call", "web_search") == "Searched the web"
    assert server_tool("code_interpreter_call", "code_interpreter") == "Ran code"
    assert server_tool("mcp_tool_use", "lookup") == "Called lookup on an MCP server"
    assert server_tool("tool_use", "get_order") is None
    assert server_tool("function_call", "get_order") is None
    assert field_label("$.status") == "status"
    assert field_label("$.orderId") == "order id"
    assert field_label("$.items[*].sku") == "items \u203a sku"


def test_events_in_sentences_are_redacted() -> None:
    assert (
        event_sentence("escalated", {"reason": "tool failed", "queue": "tier 2"})
        == "Escalated to a person: tool failed (queue: tier 2)."
    )
    assert event_sentence("rated", 4) == "The customer rated the conversation: 4."
    assert event_sentence("resolved", None) == "Marked resolved."
    said = event_sentence("abandoned", {"note": "mail me at zoe@example.com"})
    assert "zoe@example.com" not in said and "[email]" in said


def test_identifier_links_match_any_spelling_of_the_key() -> None:
    template = "https://orders.example.com/o/{order_id}"
    assert source_link(template, "$.orderId", "ORD 1") == "https://orders.example.com/o/ORD%201"
    assert source_link(template, "$.order_id", 7) == "https://orders.example.com/o/7"
    assert source_link(template, "$.OrderID", "X") == "https://orders.example.com/o/X"
    assert source_link(template, "$.tracking_id", "X") is None
    assert source_link(template, "$.order_id", True) is None


def _timeline(conversation: Conversation) -> Timeline:
    return build_timeline(conversation_page(conversation, can_see_restricted=False))


def _demo(fmt: str) -> Conversation:
    """The demo's conversation in format ``fmt`` (demo_bodies rotates through the formats)."""
    bodies = demo_conversation(fmt)
    for body in bodies:
        conversation_ingest_exchange(data=exchange_input(body))
    return Conversation.objects.get(external_id=bodies[0]["conversation"])


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fmt", "tool"), [("anthropic.messages", "get_order"), ("openai.responses", "lookup_order")]
)
def test_a_call_and_its_result_are_one_row(fmt: str, tool: str) -> None:
    conversation = _demo(fmt)
    timeline = _timeline(conversation)
    assert [c.name for c in timeline.calls.values()] == [tool]
    call = next(iter(timeline.calls.values()))
    assert call.has_result and call.tone == "ok" and call.words == "returned a result"
    assert call.called_in == 1 and call.answered_in == 2
    # The demo's two exchanges: 40 s apart, the first took latency_ms.
    assert call.duration_ms is not None and 0 < call.duration_ms < 40_000
    assert {f.label for f in call.inputs} == {"order id"}
    assert {f.label: f.value for f in call.outputs}["status"] in {
        "shipped",
        "processing",
        "delivered",
        "delayed",
    }
    roles = [t.role for t in timeline.turns]
    assert "tool" not in roles  # no turn of tool results: each sits with its call
    assert roles[0] == "customer" and roles[-1] == "assistant"
    # Each model call beside the turn it produced, in the order they ran.
    assert [t.exchange.ordinal for t in timeline.turns if t.exchange] == [1, 2]
    assert timeline.turns[1].exchange.finish in ("stopped to call a tool", "finished")


@pytest.mark.django_db
def test_an_ai_sdk_tool_part_carries_call_and_result() -> None:
    conversation = _demo("ai-sdk.ui")
    call = next(iter(_timeline(conversation).calls.values()))
    assert call.name == "getOrderStatus"
    assert call.words == "succeeded" and call.tone == "ok" and call.raw_status == "output-available"
    assert call.duration_ms is None  # one part: no time between call and result
    assert [f.label for f in call.inputs] == ["order id"]
    summary = next(t.exchange for t in _timeline(conversation).turns if t.exchange)
    assert not summary.usage_known  # the AI SDK body reported none: said so, not "?"


def _anthropic(conversation: str, content: list[Any], results: list[Any]) -> list[Any]:
    user = {"role": "user", "content": "Please check."}
    first = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 200, "output_tokens_details": {}},
    }
    bodies = [
        {
            "conversation": conversation,
            "customer": "cus-t",
            "format": "anthropic.messages",
            "request": json.dumps({"model": "claude-sonnet-4-5", "messages": [user]}),
            "response": json.dumps(first),
            "started_at": T0.isoformat(),
            "latency_ms": 1000,
        }
    ]
    if results:
        history = [
            user,
            {"role": "assistant", "content": content},
            {"role": "user", "content": results},
        ]
        bodies.append(
            {
                **bodies[0],
                "request": json.dumps({"model": "claude-sonnet-4-5", "messages": history}),
                "response": json.dumps(
                    {
                        **first,
                        "id": "msg_2",
                        "content": [{"type": "text", "text": "Done."}],
                        "stop_reason": "end_turn",
                    }
                ),
                "started_at": (T0 + timedelta(seconds=4)).isoformat(),
            }
        )
    for body in bodies:
        conversation_ingest_exchange(data=exchange_input(body))
    return bodies


@pytest.mark.django_db
def test_a_failed_call_shows_its_error_where_a_policy_keeps_it() -> None:
    from conversations.models import FieldPolicy

    FieldPolicy.objects.create(
        tool_name="*", side="output", path="$.error", storage_class="display"
    )
    policies_changed()
    content = [
        {"type": "tool_use", "id": "t1", "name": "kept_error", "input": {"order_id": "A"}},
        {"type": "tool_use", "id": "t2", "name": "dropped_error", "input": {}},
        {"type": "tool_use", "id": "t3", "name": "never_answered", "input": {}},
    ]
    results = [
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "is_error": True,
            "content": json.dumps({"error": "Order A is locked; call me on +44 20 7946 0958"}),
        },
        {"type": "tool_result", "tool_use_id": "t2", "is_error": True, "content": "secret reason"},
    ]
    _anthropic("conv-errors", content, results)
    calls = {c.name: c for c in _timeline(Conversation.objects.get()).calls.values()}
    kept = calls["kept_error"]
    assert kept.tone == "error" and kept.words == "failed"
    assert kept.error is not None and kept.error.startswith("Order A is locked")
    assert "7946" not in kept.error  # display: kept redacted
    assert kept.duration_ms == 3000  # 4 s after the first call started, which took 1 s
    dropped = calls["dropped_error"]
    assert dropped.tone == "error" and dropped.error is None and dropped.error_hidden
    assert calls["never_answered"].words == "no result recorded"


@pytest.mark.django_db
def test_a_server_tool_is_shown_by_what_it_did() -> None:
    content = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "parcel lost DHL"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": [{"type": "web_search_result", "url": "https://dhl.example", "title": "t"}],
        },
        {"type": "text", "text": "Found it."},
    ]
    _anthropic("conv-search", content, [])
    timeline = _timeline(Conversation.objects.get())
    (call,) = timeline.calls.values()
    assert call.action == "Searched the web" and call.name == "web_search"
    assert call.has_result and call.tone == "ok" and call.duration_ms is None
    assert [t.role for t in timeline.turns] == ["customer", "assistant"]


@pytest.mark.django_db
def test_tool_links_follow_the_key_whatever_its_spelling() -> None:
    ToolLink.objects.create(tool_name="getOrderStatus", url_template="https://o.example/{order_id}")
    conversation = _demo("ai-sdk.ui")  # the AI SDK tool names the order "orderId"
    call = next(iter(_timeline(conversation).calls.values()))
    (order,) = call.inputs
    assert order.url == f"https://o.example/{order.value}"


# --- the hooks the timeline asks ----------------------------------------------------------------


def test_results_pair_by_id_with_the_latest_call_and_by_order_with_the_earliest() -> None:
    from types import SimpleNamespace

    from conversations.formats import get
    from conversations.formats.profile import Pairing
    from conversations.workspace.timeline import ToolCall, _OpenCalls, _pair_key

    def block(call_id: str = "", tool_name: str = "") -> Any:
        return SimpleNamespace(call_id=call_id, tool_name=tool_name)

    by_id = get(names()[0]).profile
    assert by_id.pairing is Pairing.BY_ID
    by_order = replace(by_id, pairing=Pairing.BY_ORDER)
    assert _pair_key(block("c1", "f"), by_order) == "id:c1"  # an id, where sent, pairs first
    assert _pair_key(block("", "f"), by_order) == "name:f"
    assert _pair_key(block("", "f"), by_id) is None  # no id and no order rule: unpaired
    calls = [
        ToolCall(key=str(i), name="f", action=None, call_type="t", call_id="") for i in range(3)
    ]
    waiting = _OpenCalls()
    waiting.add("name:f", calls[0])
    waiting.add("name:f", calls[1])
    waiting.add("id:x", calls[2])
    waiting.add("id:x", calls[0])  # the same id again: the latest call waits
    assert waiting.take("name:f") is calls[0] and waiting.take("name:f") is calls[1]
    assert waiting.take("name:f") is None
    assert waiting.take("id:x") is calls[0] and waiting.take("id:x") is None
    assert waiting.take(None) is None


def test_roles_are_the_profile_s() -> None:
    from conversations.formats import get

    prof = get(names()[0]).profile
    assert prof.role("user") == "customer" and prof.role("assistant") == "assistant"
    assert prof.role("narrator") == "narrator"  # shown as received
    assert replace(prof, roles={"model": "assistant"}).role("model") == "assistant"


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", names())
def test_the_call_line_counts_input_one_way_for_every_format(fmt: str) -> None:
    from conversations.formats import get

    conversation = _demo(fmt)
    for e in conversation.exchanges.all():
        summary = exchange_summary(e)
        expected = get(fmt).profile.usage.counted(
            e.input_tokens, e.cache_read_tokens, e.cache_write_tokens
        )
        assert summary.input_tokens == expected.total
        if summary.input_tokens is not None and summary.cache_read_tokens:
            assert summary.cache_read_tokens <= summary.input_tokens
