"""Conversations that branch, driven by real chat loops through the client libraries (DESIGN
section 20): a customer regenerates an answer and edits a message they sent.

- The AI SDK's chat (``AbstractChat``, what ``useChat`` wraps) in Node, posting to the route
  handler of docs/client.md, which captures the UI message stream with the Node client
  (``clients/js/e2e/chat.mjs``): send, send, regenerate, edit.
- The official Python SDKs' loops (``anthropic``, ``openai`` Chat Completions and Responses)
  through ``console_client``: the backend calls again with the same history (regenerate), then
  with the last question replaced (edit).

Each time: the branch is recorded with its kind and position, nothing is flagged as rewritten,
both branches replay byte for byte, and the page shows the latest path with its branch point.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import console_client
import openai
import pytest

from conversations.models import Conversation, Exchange
from conversations.monitoring.rewrites import SEEN
from tests.factories import UserFactory, roles

from .conftest import ConsoleServer
from .js import NODE, PACKAGE, install
from .provider import JSON, SSE, FakeProvider, Reply
from .test_ai_sdk import guide_blocks

pytestmark = pytest.mark.slow

COMMON: dict[str, Any] = {"api_key": "sk-fake", "max_retries": 0, "timeout": 30.0}
LABELS = {"queue": "billing"}


def _anthropic_stream(text: str, n: int) -> bytes:
    """An Anthropic stream answering ``text`` (the AI SDK's provider streams)."""
    events = [
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 20, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _exchanges(conversation: str) -> list[Exchange]:
    return list(Exchange.objects.filter(conversation__external_id=conversation).order_by("ordinal"))


def _replay(
    console: ConsoleServer, token: str, conversation: str, exchange: int | None = None
) -> list[Any]:
    import httpx

    query = f"?exchange={exchange}" if exchange is not None else ""
    response = httpx.get(
        f"{console.url}/api/v1/conversations/{conversation}/messages{query}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()["messages"]


def _page(client: Any, conversation: str) -> str:
    roles()
    agent = UserFactory(
        username=f"agent-{conversation}"[:150], groups=["support_agent"], queues=["web", "billing"]
    )
    client.force_login(agent)
    pk = Conversation.objects.get(external_id=conversation).pk
    response = client.get(f"/conversations/{pk}/")
    assert response.status_code == 200
    return response.content.decode()


def _no_flag(exchanges: list[Exchange]) -> None:
    for e in exchanges:
        assert not e.history_rewritten, (e.ordinal, e.rewrite_kind, e.rewritten_at)
        assert e.rewrite_kind not in SEEN, (e.ordinal, e.rewrite_kind)


# --- The AI SDK's chat (useChat) ----------------------------------------------------------------


def test_use_chat_regenerate_and_edit_make_branches(
    provider: FakeProvider, live_console: ConsoleServer, token: str, client: Any, tmp_path: Path
) -> None:
    install()
    assert NODE is not None
    steps = [
        {"send": "Where is my order A-1042?"},
        {"send": "And when will it arrive?"},
        {"regenerate": True},
        {"edit": 2, "text": "And when will order A-1042 arrive, exactly?"},
    ]
    answers = ["It is in transit.", "Tomorrow.", "On Friday.", "Friday before noon."]
    for i, text in enumerate(answers):
        provider.route(f"claude-chat-{i}", Reply(_anthropic_stream(text, i), SSE))
    conversation = f"use-chat-{tmp_path.name}"[:100]
    run_dir = PACKAGE / "e2e" / f".run-{tmp_path.name}"
    run_dir.mkdir()
    try:
        for name, code in guide_blocks().items():
            (run_dir / name).write_text(code)
        node = subprocess.run(
            [
                NODE,
                str(PACKAGE / "e2e" / "chat.mjs"),
                provider.url,
                "claude-chat",
                live_console.url,
                token,
                conversation,
                "cus-chat",
                str(tmp_path / "spool"),
            ],
            input=json.dumps(steps),
            env={**os.environ, "ROUTE_DIR": run_dir.as_uri()},
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    assert node.returncode == 0, node.stderr
    out = json.loads(node.stdout.strip().splitlines()[-1])
    assert out["flushed"], node.stderr
    texts = [
        " ".join(p["text"] for p in m["parts"] if p["type"] == "text") for m in out["messages"]
    ]
    assert texts == [steps[0]["send"], answers[0], steps[3]["text"], answers[3]]

    exchanges = _exchanges(conversation)
    # The chat sent back the first answer with an id of its own (the stream carried none): a
    # member the model never sees, not a rewrite.
    assert '"role":"assistant"' in out["sent"][1]
    assert [(e.branch, e.branched_at) for e in exchanges] == [
        ("", None),
        ("", None),
        ("regenerated", 3),
        ("edited", 2),
    ]
    _no_flag(exchanges)

    # The latest path is what the chat shows now; each branch replays as it was.
    def said(messages: list[Any]) -> list[str]:
        return [
            " ".join(p.get("text", "") for p in m["parts"] if p["type"] == "text") for m in messages
        ]

    assert said(_replay(live_console, token, conversation)) == texts
    regenerated = _replay(live_console, token, conversation, exchanges[2].pk)
    assert said(regenerated)[-1] == answers[2]
    first = _replay(live_console, token, conversation, exchanges[1].pk)
    assert said(first)[-2:] == [steps[1]["send"], answers[1]]
    html = _page(client, conversation)
    assert answers[3] in html and answers[2] not in html and answers[1] not in html
    assert "Customer edited message 3" in html
    assert f"?exchange={exchanges[2].pk}" in html


# --- The official SDKs' loops -------------------------------------------------------------------

Loop = Callable[[FakeProvider, ConsoleServer, str, str], list[str]]


def _anthropic_loop(
    provider: FakeProvider, console: ConsoleServer, token: str, conversation: str
) -> list[str]:
    """Ask, ask again, regenerate (the same messages once more), edit the second question."""
    model = f"claude-{conversation}"
    client = console_client.instrument(
        anthropic.Anthropic(base_url=provider.url, **COMMON), url=console.url, token=token
    )
    said: list[str] = []

    def call(messages: list[Any], n: int) -> Any:
        reply = {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": f"Answer {n}."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 20, "output_tokens": 5},
        }
        provider.route(model, Reply(json.dumps(reply).encode(), JSON))
        response = client.messages.create(model=model, max_tokens=256, messages=messages)
        said.append(response.content[0].text)
        return {"role": "assistant", "content": response.content}

    with console_client.conversation(conversation, customer="cus-loops", labels=LABELS):
        q1 = {"role": "user", "content": "Where is order O-1?"}
        a1 = call([q1], 0)
        q2 = {"role": "user", "content": "When will it arrive?"}
        call([q1, a1, q2], 1)
        call([q1, a1, q2], 2)  # regenerate: the same history, without the answer
        call([q1, a1, {"role": "user", "content": "When will O-1 arrive?"}], 3)  # edit
    client.close()
    assert console_client.flush(timeout=60)
    return said


def _chat_loop(
    provider: FakeProvider, console: ConsoleServer, token: str, conversation: str
) -> list[str]:
    model = f"gpt-{conversation}"
    client = console_client.instrument(
        openai.OpenAI(base_url=provider.url + "/v1", **COMMON), url=console.url, token=token
    )
    said: list[str] = []

    def call(messages: list[Any], n: int) -> Any:
        reply = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": f"Answer {n}.",
                        "refusal": None,
                        "annotations": [],
                    },
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }
        provider.route(model, Reply(json.dumps(reply).encode(), JSON))
        response = client.chat.completions.create(model=model, messages=messages)
        said.append(response.choices[0].message.content or "")
        # What a backend keeps of the answer: the SDK's message, dumped.
        return response.choices[0].message.model_dump(exclude_none=True)

    with console_client.conversation(conversation, customer="cus-loops", labels=LABELS):
        q1 = {"role": "user", "content": "Where is order O-1?"}
        a1 = call([q1], 0)
        q2 = {"role": "user", "content": "When will it arrive?"}
        call([q1, a1, q2], 1)
        call([q1, a1, q2], 2)
        call([q1, a1, {"role": "user", "content": "When will O-1 arrive?"}], 3)
    client.close()
    assert console_client.flush(timeout=60)
    return said


def _responses_loop(
    provider: FakeProvider, console: ConsoleServer, token: str, conversation: str
) -> list[str]:
    model = f"gpt-5.5-{conversation}"
    client = console_client.instrument(
        openai.OpenAI(base_url=provider.url + "/v1", **COMMON), url=console.url, token=token
    )
    said: list[str] = []

    def call(items: list[Any], n: int) -> list[Any]:
        reply = {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": 1,
            "model": model,
            "status": "completed",
            "output": [
                {
                    "id": f"msg_{n}",
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": f"Answer {n}.", "annotations": []}],
                }
            ],
            "usage": {"input_tokens": 20, "output_tokens": 5, "total_tokens": 25},
        }
        provider.route(model, Reply(json.dumps(reply).encode(), JSON))
        response = client.responses.create(model=model, input=items, store=False)
        said.append(response.output_text)
        return list(response.output)

    with console_client.conversation(conversation, customer="cus-loops", labels=LABELS):
        q1 = {"role": "user", "content": "Where is order O-1?"}
        a1 = call([q1], 0)
        q2 = {"role": "user", "content": "When will it arrive?"}
        call([q1, *a1, q2], 1)
        call([q1, *a1, q2], 2)
        call([q1, *a1, {"role": "user", "content": "When will O-1 arrive?"}], 3)
    client.close()
    assert console_client.flush(timeout=60)
    return said


LOOPS: dict[str, Loop] = {
    "anthropic": _anthropic_loop,
    "openai-chat": _chat_loop,
    "openai-responses": _responses_loop,
}


@pytest.mark.parametrize("sdk", list(LOOPS))
def test_the_official_sdks_regenerate_and_edit_make_branches(
    provider: FakeProvider, live_console: ConsoleServer, token: str, client: Any, sdk: str
) -> None:
    conversation = f"branches-{sdk}"
    said = LOOPS[sdk](provider, live_console, token, conversation)
    assert said == ["Answer 0.", "Answer 1.", "Answer 2.", "Answer 3."]
    exchanges = _exchanges(conversation)
    assert [(e.branch, e.branched_at) for e in exchanges] == [
        ("", None),
        ("", None),
        ("regenerated", 3),
        ("edited", 2),
    ]
    _no_flag(exchanges)
    latest = json.dumps(_replay(live_console, token, conversation))
    assert "Answer 3." in latest and "When will O-1 arrive?" in latest and "Answer 1." not in latest
    regenerated = json.dumps(_replay(live_console, token, conversation, exchanges[2].pk))
    assert "Answer 2." in regenerated and "Answer 1." not in regenerated
    first = json.dumps(_replay(live_console, token, conversation, exchanges[1].pk))
    assert "Answer 1." in first and "Answer 2." not in first
    html = _page(client, conversation)
    assert "Answer 3." in html and "Answer 2." not in html
    assert "Customer edited message 3" in html
