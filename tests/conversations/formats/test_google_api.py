"""``google.generate_content`` through the API: a tool loop posted as the official
``google-genai`` SDK sends it back (snake_case members, URL-safe base64 signatures, a streamed
answer one ``Content`` per chunk) is stored once and never flagged; every stored element
replays byte for byte; continuation keeps every signature of the current turn; a signature
dropped or altered in the current turn is flagged "the provider refuses this history"; an
endpoint naming no model is a 400 at ``$.endpoint``; a part the console does not know is kept
verbatim and hidden."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.blocks import BlockClass
from conversations.formats.google.kit import GENERATE, STREAM, demo, signature
from conversations.models import Conversation, Exchange, Message
from conversations.workspace.exchanges import exchange_summary
from tests.conftest import post_json
from tests.providers import load

URL = "/api/v1/exchanges"
FMT = "google.generate_content"
pytestmark = pytest.mark.django_db


class Facts:
    conversation = "g-1"
    order = "ORD-7654321"
    question = "Where is my order ORD-7654321?"
    thinking = "I should look the order up first."
    answer = "Your order shipped yesterday and arrives on Friday."

    def tool_result(self) -> dict[str, Any]:
        return {"status": "shipped", "eta": "Friday"}


def body(sample: Any, conversation: str) -> dict[str, Any]:
    return {"conversation": conversation, "customer": "cus_1", "format": FMT, **sample.fields()}


def sdk_form(content: dict[str, Any]) -> dict[str, Any]:
    """A content as a client using the SDK's snake_case names and URL-safe signatures sends it."""
    parts = []
    for part in content["parts"]:
        out: dict[str, Any] = {}
        for key, value in part.items():
            if key == "thoughtSignature":
                out["thought_signature"] = base64.urlsafe_b64encode(
                    base64.b64decode(value)
                ).decode()
            elif key == "functionCall":
                out["function_call"] = value
            else:
                out[key] = value
        parts.append(out)
    return {"parts": parts, "role": content["role"]}


def first_exchange(api: APIClient, conversation: str) -> tuple[dict[str, Any], Any]:
    samples = demo(Facts())
    r = post_json(api, URL, body(samples[0], conversation))
    assert r.status_code == 201, r.json()
    return json.loads(samples[0].response or ""), samples[1]


def second(sample: Any, contents: list[Any]) -> Any:
    request = json.loads(sample.request)
    request["contents"] = contents
    return type(sample)(json.dumps(request), stream=sample.stream, endpoint=sample.endpoint)


def test_a_tool_loop_sent_back_as_the_sdk_sends_it_is_stored_once(api: APIClient) -> None:
    resp1, sample2 = first_exchange(api, "g-loop")
    content = resp1["candidates"][0]["content"]
    request2 = json.loads(sample2.request)
    contents = [request2["contents"][0], sdk_form(content), request2["contents"][2]]
    r = post_json(api, URL, body(second(sample2, contents), "g-loop"))
    assert r.status_code == 201, r.json()
    assert r.json()["history_rewritten"] is False
    exchange = Exchange.objects.filter(conversation__external_id="g-loop").latest("ordinal")
    assert exchange.rewrite_kind in ("", "reserialised")
    # Stored once: the question, the call, its answer, the streamed reply.
    assert Message.objects.filter(conversation__external_id="g-loop").count() == 4
    replay = api.get(f"/api/v1/conversations/{'g-loop'}/messages").json()["messages"]
    assert replay[1] == content
    # The continuation keeps every signature of the current turn, byte for byte.
    text = api.get("/api/v1/conversations/g-loop/messages?for=continuation").content.decode()
    assert signature(Facts.order) in text and signature(Facts.answer) in text


@pytest.mark.parametrize("change", ["dropped", "altered"])
def test_a_signature_changed_in_the_current_turn_is_refused_history(
    api: APIClient, change: str
) -> None:
    conversation = f"g-{change}"
    resp1, sample2 = first_exchange(api, conversation)
    content = json.loads(json.dumps(resp1["candidates"][0]["content"]))
    call = content["parts"][1]
    if change == "dropped":
        del call["thoughtSignature"]
    else:
        call["thoughtSignature"] = signature("another")
    request2 = json.loads(sample2.request)
    contents = [request2["contents"][0], content, request2["contents"][2]]
    r = post_json(api, URL, body(second(sample2, contents), conversation))
    assert r.status_code == 201, r.json()
    assert r.json()["history_rewritten"] is True
    exchange = Exchange.objects.filter(conversation__external_id=conversation).latest("ordinal")
    assert exchange.rewrite_kind == "tool_loop_reasoning"
    said = " ".join(exchange_summary(exchange, conformance=True).conformance or [])
    assert "the provider refuses this history" in said
    assert "ai.google.dev/gemini-api/docs/thought-signatures" in said


@pytest.mark.parametrize(
    "endpoint", [None, "/v1beta/models", "/v1beta/cachedContents/x", "https://h/v1/models/m:x"]
)
def test_an_endpoint_naming_no_model_is_refused(api: APIClient, endpoint: str | None) -> None:
    sample = demo(Facts())[0]
    data = body(sample, "g-endpoint")
    if endpoint is None:
        del data["endpoint"]
    else:
        data["endpoint"] = endpoint
    r = post_json(api, URL, data)
    assert r.status_code == 400
    assert (r.json()["field"], r.json()["at"]) == ("endpoint", "$.endpoint")
    assert not Conversation.objects.filter(external_id="g-endpoint").exists()


@pytest.mark.parametrize(
    "endpoint",
    [
        "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse",
        "/v1/projects/p/locations/global/publishers/google/models/gemini-3-pro-preview"
        ":generateContent",
        "/gateway/acct/google-ai-studio/v1beta/models/gemini-3-pro-preview:generateContent",
    ],
)
def test_the_model_is_read_from_the_endpoint(api: APIClient, endpoint: str) -> None:
    data = {**body(demo(Facts())[0], "g-model"), "endpoint": endpoint}
    assert post_json(api, URL, data).status_code == 201
    exchange = Exchange.objects.get(conversation__external_id="g-model")
    assert exchange.requested_model == "gemini-3-pro-preview"


def test_an_unknown_part_is_kept_verbatim_and_hidden(api: APIClient) -> None:
    part = {"futurePart": {"secret": "SECRET-UNSEEN-1"}, "thoughtSignature": "c2ln"}
    response = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [part, {"text": "Hi"}]},
                "finishReason": "STOP",
            }
        ]
    }
    request = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    data = {
        "conversation": "g-unknown",
        "customer": "cus_1",
        "format": FMT,
        "endpoint": GENERATE,
        "request": json.dumps(request),
        "response": json.dumps(response),
    }
    r = post_json(api, URL, data)
    assert r.status_code == 201, r.json()
    replay = api.get("/api/v1/conversations/g-unknown/messages").json()["messages"]
    assert replay[1]["parts"][0] == part
    stored = (
        Message.objects.filter(conversation__external_id="g-unknown").order_by("sequence").last()
    )
    assert stored is not None
    classes = [b.block_class for b in stored.blocks.order_by("position")]
    assert classes == [BlockClass.NEVER, BlockClass.UNKNOWN, BlockClass.VISIBLE]


def test_every_recorded_exchange_is_accepted_and_replayed_exactly(api: APIClient) -> None:
    names = [
        "vercel-ai__google-tool-call.chunks.txt",
        "vercel-ai__google-reasoning-gemini3.chunks.txt",
        "vercel-ai__issue-18073-empty-text-thought-signature.chunks.txt",
        "vercel-ai__google-code-execution-multiple-results.json",
        "vercel-ai__issue-19822-google-search-live.chunks.txt",
    ]
    for n, name in enumerate(names):
        (recorded,) = load(name)
        data = {
            "conversation": f"g-rec-{n}",
            "customer": "cus_1",
            "format": FMT,
            "endpoint": STREAM,
            "request": recorded.request or json.dumps({"contents": []}),
        }
        data.update(
            {"response": recorded.response}
            if recorded.response is not None
            else {"stream": recorded.stream}
        )
        r = post_json(api, URL, data)
        assert r.status_code == 201, (name, r.json())
        got = api.get(f"/api/v1/conversations/g-rec-{n}/messages")
        answer = got.json()["messages"][-1]
        if recorded.response is not None:
            assert answer == json.loads(recorded.response)["candidates"][0]["content"]
        # Every signature the provider sent is in the stored answer, unmodified.
        sent = [
            line
            for line in (recorded.response or recorded.stream or "").split('"thoughtSignature":')[
                1:
            ]
        ]
        for piece in sent:
            value = json.loads(piece.split(",")[0].split("}")[0])
            assert value in got.content.decode()
