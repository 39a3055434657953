"""The kit of ``google.generate_content`` (``formats/kit.py`` says what each part is for)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from ..kit import (
    DemoFacts,
    Fixture,
    Kit,
    LiveSample,
    PythonSdk,
    ReasoningSample,
    Sample,
    json_text,
    sse,
)
from .profile import FORMAT

MODEL = "gemini-3-pro-preview"
GENERATE = f"/v1beta/models/{MODEL}:generateContent"
STREAM = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"


def signature(seed: str) -> str:
    """A made-up thought signature (standard base64 of bytes drawn from ``seed``): opaque,
    like the provider's."""
    data = b"".join(hashlib.sha256(f"{seed}{i}".encode()).digest() for i in range(3))
    return base64.b64encode(b"\x12\x34" + data).decode("ascii")


MINIMAL_REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Where is ORD-1234567?"}]}]}

EXAMPLE = {
    "conversation": "c-gemini-1",
    "customer": "u-9",
    "format": FORMAT,
    "endpoint": GENERATE,
    "request": json_text(
        {
            "contents": [{"role": "user", "parts": [{"text": "Where is order ORD-1?"}]}],
            "generationConfig": {"thinkingConfig": {"thinkingLevel": "low"}},
        }
    ),
    "response": json_text(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "It shipped yesterday.", "thoughtSignature": "EjQKMg..."}
                        ],
                    },
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 9,
                "candidatesTokenCount": 5,
                "thoughtsTokenCount": 40,
                "totalTokenCount": 54,
            },
            "modelVersion": MODEL,
            "responseId": "resp-1",
        }
    ),
    "started_at": "2026-11-29T10:00:00Z",
    "latency_ms": 1234,
    "labels": {"queue": "billing"},
}


def _chunk(
    parts: list[dict[str, Any]], finish: str | None = None, usage: dict[str, int] | None = None
) -> Any:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL}
    if usage:
        out["usageMetadata"] = usage
    return out


def demo(s: DemoFacts) -> list[Sample]:
    """An order lookup: a thought summary and a signed function call, its response, then the
    answer streamed (its signature on an empty text part in the last chunk, as Gemini 3 sends
    it)."""
    user = {"role": "user", "parts": [{"text": s.question}]}
    tools = [
        {
            "functionDeclarations": [
                {
                    "name": "get_order",
                    "description": "Look an order up",
                    "parameters": {
                        "type": "object",
                        "properties": {"order_id": {"type": "string"}},
                    },
                }
            ]
        }
    ]
    config = {"thinkingConfig": {"thinkingLevel": "high", "includeThoughts": True}}
    content1 = {
        "role": "model",
        "parts": [
            {"text": s.thinking, "thought": True},
            {
                "functionCall": {"name": "get_order", "args": {"order_id": s.order}},
                "thoughtSignature": signature(s.order),
            },
        ],
    }
    req1 = {"contents": [user], "tools": tools, "generationConfig": config}
    resp1 = {
        "candidates": [{"content": content1, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": 412,
            "candidatesTokenCount": 21,
            "thoughtsTokenCount": 140,
            "totalTokenCount": 573,
        },
        "modelVersion": MODEL,
        "responseId": f"r-{s.order[-6:]}a",
    }
    answer = {
        "role": "user",
        "parts": [{"functionResponse": {"name": "get_order", "response": s.tool_result()}}],
    }
    req2 = {**req1, "contents": [user, content1, answer]}
    half = len(s.answer) // 2
    usage = {"promptTokenCount": 640, "cachedContentTokenCount": 412, "thoughtsTokenCount": 12}
    chunks = [
        _chunk([{"text": s.answer[:half]}], None, {**usage, "candidatesTokenCount": 20}),
        _chunk([{"text": s.answer[half:]}], None, {**usage, "candidatesTokenCount": 46}),
        _chunk(
            [{"text": "", "thoughtSignature": signature(s.answer)}],
            "STOP",
            {**usage, "candidatesTokenCount": 46},
        ),
    ]
    return [
        Sample(json_text(req1), response=json_text(resp1), endpoint=GENERATE),
        Sample(json_text(req2), stream=sse(chunks), endpoint=STREAM),
    ]


def finish(raw: str) -> Sample:
    request = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    response = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "x"}]}, "finishReason": raw}
        ],
        "modelVersion": MODEL,
    }
    return Sample(json.dumps(request), response=json.dumps(response), endpoint=GENERATE)


def live_text(deltas: Sequence[str]) -> str:
    chunks = [_chunk([{"text": d}]) for d in deltas]
    chunks.append(_chunk([{"text": "", "thoughtSignature": signature("live")}], "STOP"))
    return sse(chunks)


def _client(base_url: str, asynchronous: bool) -> Any:
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=base_url, timeout=30_000, retry_options=types.HttpRetryOptions(attempts=1)
    )
    if asynchronous:
        # The SDK's own async client sends through one inner client per event loop, built
        # afresh: an async client of the caller's is used as it is, so it is the one captured.
        import httpx2

        options.httpx_async_client = httpx2.AsyncClient(timeout=30.0)
    client = genai.Client(api_key="sk-fake", http_options=options)
    return _Async(client.aio) if asynchronous else client


class _Async:
    """``google-genai``'s async client as the client tests hold an async SDK client: its
    ``_api_client`` (where ``instrument()`` finds the httpx clients) and an awaitable
    ``close``."""

    def __init__(self, aio: Any) -> None:
        self.aio = aio
        self._api_client = aio._api_client

    async def close(self) -> None:
        await self.aio.aclose()
        http = self._api_client._http_options.httpx_async_client
        if http is not None:
            await http.aclose()  # the caller's own: the SDK leaves it open


def _call(client: Any, model: str, question: str, streamed: bool) -> Any:
    if isinstance(client, _Async):
        return _async_call(client.aio, model, question, streamed)
    if streamed:
        return list(client.models.generate_content_stream(model=model, contents=question))
    return [client.models.generate_content(model=model, contents=question)]


async def _async_call(client: Any, model: str, question: str, streamed: bool) -> list[Any]:
    if streamed:
        stream = await client.models.generate_content_stream(model=model, contents=question)
        return [chunk async for chunk in stream]
    return [await client.models.generate_content(model=model, contents=question)]


KIT = Kit(
    format=FORMAT,
    minimal_request=MINIMAL_REQUEST,
    example=EXAMPLE,
    demo=demo,
    reasoning=ReasoningSample(
        {
            "role": "model",
            "parts": [
                {"text": "weigh it", "thought": True},
                {"text": "Done.", "thoughtSignature": "c2ln"},
            ],
        },
        ("weigh it",),
    ),
    finish=finish,
    live=LiveSample(idle=sse([_chunk([])]), text=live_text),
    fixtures=(
        Fixture("providers/*__google-*"),
        Fixture("providers/*__issue-18073-*"),
        Fixture("providers/*__issue-19758-*"),
        Fixture("providers/*__issue-19822-*"),
        Fixture("streams/google-*"),
    ),
    sdk=PythonSdk("google-genai", _client, _call),
)
