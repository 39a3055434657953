"""Gemini's documented loop through the official ``google-genai`` SDK, instrumented by
``console_client``, against a fake provider on loopback: a chat (``client.chats``) streams each
answer, as Gemini 3 sends it (a thought summary, a ``functionCall`` carrying its signature, the
signature of a text answer alone on an empty last part), the backend answers each call with a
``functionResponse`` and asks again after an answer. The SDK's chat keeps each streamed answer
as one ``Content`` per chunk and sends it back so, its signatures URL-safe base64: nothing is
flagged on any call, every signature the provider sent is stored, and the continuation carries
them all."""

from __future__ import annotations

import json
from typing import Any

import console_client
import pytest

from conversations.formats.google.kit import signature
from conversations.models import Exchange
from conversations.monitoring.rewrites import SEEN

from .conftest import ConsoleServer
from .provider import SSE, FakeProvider, Reply

pytestmark = pytest.mark.slow

PLAN = ["call", "call", "answer", "call", "answer"]
MODEL = "gemini-3-pro-loop"


def _stream(n: int, kind: str) -> bytes:
    def chunk(parts: list[Any], finish: str | None = None) -> str:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        body = {
            "candidates": [candidate],
            "usageMetadata": {"promptTokenCount": 100 + n, "candidatesTokenCount": 9},
            "modelVersion": "gemini-3-pro-preview",
        }
        return f"data: {json.dumps(body)}\r\n\r\n"

    chunks = [chunk([{"text": f"Thinking about step {n}.", "thought": True}])]
    if kind == "call":
        call = {"name": "get_order", "args": {"order_id": f"O-{n}"}}
        chunks.append(chunk([{"functionCall": call, "thoughtSignature": signature(f"c{n}")}]))
        chunks.append(chunk([{"text": ""}], "STOP"))
    else:
        chunks.append(chunk([{"text": f"Your order O-{n} "}]))
        chunks.append(chunk([{"text": "has shipped."}]))
        chunks.append(chunk([{"text": "", "thoughtSignature": signature(f"a{n}")}], "STOP"))
    return "".join(chunks).encode()


def test_the_documented_chat_loop_is_never_flagged(
    provider: FakeProvider, live_console: ConsoleServer, token: str
) -> None:
    from google import genai
    from google.genai import types

    conversation = "loop-google-genai"
    client = console_client.instrument(
        genai.Client(
            api_key="sk-fake",
            http_options=types.HttpOptions(
                base_url=provider.url, retry_options=types.HttpRetryOptions(attempts=1)
            ),
        ),
        url=live_console.url,
        token=token,
    )
    tool = types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="get_order",
                description="Look an order up",
                parameters=types.Schema(type="OBJECT", properties={"order_id": {"type": "STRING"}}),
            )
        ]
    )
    config = types.GenerateContentConfig(
        tools=[tool],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    chat = client.chats.create(model=MODEL, config=config)
    message: Any = "Where is order O-1?"
    with console_client.conversation(conversation, customer="cus-loops"):
        for n, kind in enumerate(PLAN):
            provider.route(MODEL, Reply(_stream(n, kind), SSE))
            chunks = list(chat.send_message_stream(message))
            calls = [p.function_call for c in chunks for p in c.parts or [] if p.function_call]
            if calls:
                message = [
                    types.Part.from_function_response(name=c.name or "", response={"ok": True})
                    for c in calls
                ]
            else:
                message = f"And question {n + 2}?"
    client.close()
    assert console_client.flush(timeout=60)
    exchanges = list(
        Exchange.objects.filter(conversation__external_id=conversation).order_by("ordinal")
    )
    assert len(exchanges) == 5
    for e in exchanges:
        assert not e.history_rewritten, (e.ordinal, e.rewrite_kind, e.rewritten_at)
        assert e.rewrite_kind not in SEEN, (e.ordinal, e.rewrite_kind)
        assert e.requested_model == MODEL
    replay = console_client.history(conversation, url=live_console.url, token=token)
    text = replay.raw.decode()
    for n, kind in enumerate(PLAN):
        assert signature(f"c{n}" if kind == "call" else f"a{n}") in text
