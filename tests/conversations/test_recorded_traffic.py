"""Recorded traffic of other projects (tests/fixtures/recorded, README there), posted in order
through the API as a chat backend would: every exchange is accepted, nothing that differs only in
what the model never sees (or that starts a thread or a branch) is flagged, and each shape the
console once refused is stored as it should be. ``bench/history_flags.py`` does the same on
thousands of cassettes; these are its representatives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.recordings import Recorded, cassette
from conversations.models import Exchange
from conversations.monitoring.rewrites import SEEN
from conversations.selectors import conversation_tree
from tests.conftest import post_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "recorded"
URL = "/api/v1/exchanges"
pytestmark = pytest.mark.django_db


def _post_all(api: Any, name: str) -> list[Exchange]:
    recorded = list(cassette(FIXTURES / name))
    assert recorded, name
    for r in recorded:
        body = _body(name, r)
        answer = post_json(api, URL, body)
        assert answer.status_code == 201, (r.index, answer.json())
    return list(Exchange.objects.filter(conversation__external_id=name[:200]).order_by("ordinal"))


def _body(name: str, r: Recorded) -> dict[str, Any]:
    body: dict[str, Any] = {
        "conversation": name[:200],
        "customer": "cus-recorded",
        "format": r.format,
        "request": r.request,
        "endpoint": r.endpoint,
        "labels": {"queue": "billing"},
    }
    body["response" if r.response is not None else "stream"] = r.response or r.stream
    return body


def _flagged(exchanges: list[Exchange]) -> list[tuple[int, str, int | None]]:
    return [
        (e.ordinal, e.rewrite_kind, e.rewritten_at)
        for e in exchanges
        if e.history_rewritten or e.rewrite_kind in SEEN
    ]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if p.suffix == ".yaml"))
def test_every_recording_is_accepted_and_nothing_is_flagged(api: Any, name: str) -> None:
    exchanges = _post_all(api, name)
    assert exchanges
    assert _flagged(exchanges) == []


def test_azure_chat_without_model_takes_the_deployment_from_the_endpoint(api: Any) -> None:
    name = "crewAI__TestAzureNativeToolCalling.test_azure_agent_with_native_tool_calling.yaml"
    assert all("model" not in json.loads(r.request) for r in cassette(FIXTURES / name))
    exchanges = _post_all(api, name)
    assert {e.requested_model for e in exchanges} == {"gpt-5-nano"}
    # Without the endpoint, the request names no model anywhere: refused, naming both.
    r = next(iter(cassette(FIXTURES / name)))
    body = {k: v for k, v in _body("azure-without-endpoint", r).items() if k != "endpoint"}
    answer = post_json(api, URL, body)
    assert answer.status_code == 400
    assert (answer.json()["field"], answer.json()["at"]) == ("request", "$.model")
    assert "endpoint" in answer.json()["detail"]


def test_azure_content_filter_without_a_message_is_a_refusal(api: Any) -> None:
    exchanges = _post_all(api, "openllmetry__test_chat_content_filtering.yaml")
    e = next(e for e in exchanges if e.stop_reason == "content_filter")
    assert e.refusal
    assert not e.messages.filter(from_response=True).exists()  # the model said nothing


def test_mistral_thinking_chunks_are_one_thinking_part_never_shown(api: Any, client: Any) -> None:
    name = "pydantic-ai__test_mistral_model_thinking_part_iter.yaml"
    (e,) = _post_all(api, name)
    answer = api.get(f"/api/v1/conversations/{name}/messages").json()["messages"][-1]
    kinds = [part["type"] for part in answer["content"]]
    assert kinds == ["thinking", "text"]
    assert answer["content"][0]["thinking"][0]["text"].startswith("Okay, the user")
    blocks = list(e.messages.get(from_response=True).blocks.values_list("block_class", flat=True))
    assert blocks == ["never", "visible"]


def test_sub_agents_of_one_run_each_start_a_thread(api: Any) -> None:
    name = "crewAI__TestAgentExecutorPlanning.test_executor_state_contains_plan_after_planning.yaml"
    exchanges = _post_all(api, name)
    assert {e.branch for e in exchanges} >= {"restarted"}
    tree, _ = conversation_tree(exchanges[0].conversation_id)
    assert len(tree.tips()) >= 2  # the planner's thread and the executor's


def test_a_moving_cache_breakpoint_is_unseen(api: Any) -> None:
    name = (
        "pydantic-ai__test_anthropic_code_execution_files_cache_prefix_stable"
        "[messages-sonnet-5].yaml"
    )
    exchanges = _post_all(api, name)
    assert "unseen" in {e.rewrite_kind for e in exchanges}
