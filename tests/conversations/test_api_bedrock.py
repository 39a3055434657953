"""Recorded Bedrock Converse conversations (tests/fixtures/bedrock) posted through the API in
order, as a chat backend would: accepted, replayed byte for byte (every reasoning block and
signature as received), nothing flagged for a history sent back as pydantic-ai rebuilds it, and
the open tool loop's reasoning kept whole for continuation (Anthropic models on Bedrock)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.models import Conversation, Exchange
from conversations.monitoring.rewrites import SEEN
from conversations.selectors import conversation_message_raws
from tests.conftest import post_json
from tests.conversations.formats.bedrock_corpus import exchanges

pytestmark = pytest.mark.django_db
URL = "/api/v1/exchanges"
FORMAT = "bedrock.converse"
# The cassettes of answered calls (one holds only the provider's refusal of a bad model id).
CASSETTES = sorted(
    {e.name.split("#")[0] for e in exchanges() if ".yaml#" in e.name and e.status == 200}
)


def _post(api: Any, conversation: str, fields: dict[str, str]) -> Any:
    body = {"conversation": conversation, "customer": "cus-b", "format": FORMAT, **fields}
    return post_json(api, URL, body)


@pytest.mark.parametrize("name", CASSETTES)
def test_every_recorded_conversation_is_accepted_replayed_and_not_flagged(
    api: Any, name: str
) -> None:
    recorded = [e for e in exchanges() if e.name.startswith(name + "#") and e.status == 200]
    for e in recorded:
        answer = _post(api, name, e.fields())
        assert answer.status_code == 201, answer.json()
    rows = Exchange.objects.filter(conversation__external_id=name).order_by("ordinal")
    assert [(r.history_rewritten, r.rewrite_kind in SEEN) for r in rows] == [
        (False, False) for _ in recorded
    ]
    raws = conversation_message_raws(Conversation.objects.get(external_id=name))
    replay = api.get(f"/api/v1/conversations/{name}/messages")
    assert replay.status_code == 200
    text = replay.content.decode()
    for raw in raws:
        assert raw in text  # each message byte for byte, reasoning and signatures untouched


def test_a_bad_frame_is_a_400_naming_its_byte_offset_and_stores_nothing(
    api: Any, counts: Any
) -> None:
    import base64

    stream = next(e for e in exchanges() if e.stream_base64 and e.name.endswith(".yaml#0"))
    data = bytearray(stream.data)
    data[-1] ^= 0xFF  # the last frame's message CRC
    last = _last_frame(bytes(data))
    before = counts()
    answer = _post(
        api, "bad-frame", {**stream.fields(), "stream_base64": base64.b64encode(data).decode()}
    )
    assert answer.status_code == 400
    assert (answer.json()["field"], answer.json()["at"]) == ("stream_base64", f"$[{last}]")
    assert counts() == before


def _last_frame(data: bytes) -> int:
    offset = last = 0
    while offset < len(data):
        last = offset
        offset += int.from_bytes(data[offset : offset + 4], "big")
    return last


def test_an_endpoint_naming_no_model_is_a_400_at_the_endpoint(api: Any, counts: Any) -> None:
    e = next(e for e in exchanges() if e.response and e.status == 200)
    before = counts()
    answer = _post(api, "no-model", {**e.fields(), "endpoint": "/converse"})
    assert answer.status_code == 400
    assert (answer.json()["field"], answer.json()["at"]) == ("endpoint", "$.endpoint")
    assert counts() == before


def test_the_open_tool_loop_keeps_its_reasoning_for_continuation(api: Any) -> None:
    name = "pydantic-pydantic-ai__test_bedrock_anthropic_tool_with_thinking.yaml"
    first = next(e for e in exchanges() if e.name == name + "#0")
    assert _post(api, "loop", first.fields()).status_code == 201
    # The backend sends the call's result: the loop is open, the reasoning block goes back.
    request = json.loads(next(e for e in exchanges() if e.name == name + "#1").request)
    pending = {**request, "messages": request["messages"]}
    raws = conversation_message_raws(Conversation.objects.get(external_id="loop"))
    answer = api.get("/api/v1/conversations/loop/messages", {"for": "continuation"})
    assert answer.status_code == 200
    assert answer["Continuation-Rule"].startswith("bedrock.anthropic")
    body = answer.content.decode()
    assert raws[-1] in body and '"signature":"' in raws[-1].replace(" ", "")
    assert (
        pending["messages"][1]["content"][0]["reasoningContent"]["reasoningText"]["signature"]
        in body
    )
