"""Invariant 3: deliberation exists at rest only inside the encrypted verbatim store.

Unique markers are planted in every kind of reasoning content (thinking text, signatures,
redacted_thinking data, OpenAI reasoning summaries and encrypted_content, reasoning_content, AI SDK
reasoning parts, a ``<think>`` span inline in Chat content and in an AI SDK text part), in an
unknown block type and in a tool-result field with no policy. After
ingest, none appears in a pg_dump of the main database, nor in Redis; replay still returns them
all (so the test would see a leak)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.models import Conversation
from conversations.services import service_token_create
from tests.dumps import pg_dump, redis_dump

M = {
    "thinking": "MARKER-THINKING-8c1f",
    "signature": "MARKER-SIGNATURE-2b7e",
    "redacted": "MARKER-REDACTED-DATA-44aa",
    "unknown": "MARKER-UNKNOWN-TYPE-91d0",
    "tool_field": "MARKER-TOOL-FIELD-5e3c",
    "oai_summary": "MARKER-OAI-SUMMARY-07bd",
    "oai_encrypted": "MARKER-OAI-ENCRYPTED-c3f2",
    "reasoning_content": "MARKER-REASONING-CONTENT-6a19",
    "ai_sdk": "MARKER-AISDK-REASONING-d8e4",
    "ai_sdk_stream": "MARKER-AISDK-STREAM-0f5b",
    "anthropic_stream": "MARKER-ANTHROPIC-STREAM-71c2",
    "system": "MARKER-SYSTEM-PROMPT-3b90",
    "inline_chat": "MARKER-INLINE-THINK-CHAT-5d21",
    "inline_ai_sdk": "MARKER-INLINE-THINK-AISDK-e60a",
}


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def bodies() -> list[dict[str, Any]]:
    anthropic_content = [
        {
            "type": "thinking",
            "thinking": f"The user {M['thinking']} asks",
            "signature": M["signature"],
        },
        {"type": "redacted_thinking", "data": M["redacted"]},
        {"type": "hologram", "payload": M["unknown"]},
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"order_id": "ORD-1"}},
    ]
    tool_result = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": compact(
                    {"order_id": "ORD-1", "status": "shipped", "secret_note": M["tool_field"]}
                ),
            }
        ],
    }
    user = {"role": "user", "content": "Where is ORD-1?"}
    request1 = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "system": M["system"],
        "messages": [user],
    }
    response1 = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": anthropic_content,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }
    request2 = {
        **request1,
        "messages": [user, {"role": "assistant", "content": anthropic_content}, tool_result],
    }
    stream = "".join(
        f"event: {e['type']}\ndata: {compact(e)}\n\n"
        for e in [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_2",
                    "type": "message",
                    "role": "assistant",
                    "model": "m",
                    "content": [],
                    "usage": {"input_tokens": 1},
                },
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": M["anthropic_stream"]},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "sig"},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": "Shipped."},
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 3},
            },
            {"type": "message_stop"},
        ]
    )
    oai_response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "error": None,
        "model": "gpt-5-mini",
        "output": [
            {
                "id": "rs_1",
                "type": "reasoning",
                "encrypted_content": M["oai_encrypted"],
                "summary": [{"type": "summary_text", "text": M["oai_summary"]}],
            },
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
            },
        ],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    chat_response = {
        "id": "c1",
        "object": "chat.completion",
        "model": "deepseek-reasoner",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hi.",
                    "reasoning_content": M["reasoning_content"],
                },
                "finish_reason": "stop",
            }
        ],
    }
    # A server without a reasoning parser: the deliberation inline, in <think> at the start.
    think_response = {
        "id": "c2",
        "object": "chat.completion",
        "model": "deepseek-r1-distill-qwen-32b",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": f"<think>\nThe user {M['inline_chat']} asks.\n</think>\n\nHi.",
                },
                "finish_reason": "stop",
            }
        ],
    }
    ai_user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}
    ai_response = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "text": M["ai_sdk"], "state": "done"},
            {"type": "text", "text": "Hi!"},
            {"type": "text", "text": f"<think>{M['inline_ai_sdk']}</think>And more."},
        ],
    }
    ai_stream = (
        "".join(
            f"data: {compact(c)}\n\n"
            for c in [
                {"type": "start", "messageId": "a2"},
                {"type": "reasoning-start", "id": "r1"},
                {"type": "reasoning-delta", "id": "r1", "delta": M["ai_sdk_stream"]},
                {"type": "reasoning-end", "id": "r1"},
                {"type": "text-start", "id": "t1"},
                {"type": "text-delta", "id": "t1", "delta": "Yes."},
                {"type": "text-end", "id": "t1"},
                {"type": "finish"},
            ]
        )
        + "data: [DONE]\n\n"
    )

    def body(conversation: str, fmt: str, request: Any, **answer: str) -> dict[str, Any]:
        return {
            "conversation": conversation,
            "customer": "cus_marker",
            "format": fmt,
            "request": compact(request),
            "labels": {"queue": "billing"},
            **answer,
        }

    return [
        body("m-anthropic", "anthropic.messages", request1, response=compact(response1)),
        body("m-anthropic", "anthropic.messages", request2, stream=stream),
        body(
            "m-oai",
            "openai.responses",
            {"model": "gpt-5-mini", "input": "Hi"},
            response=compact(oai_response),
        ),
        body(
            "m-chat",
            "openai.chat",
            {"model": "deepseek-reasoner", "messages": [{"role": "user", "content": "Hi"}]},
            response=compact(chat_response),
        ),
        body(
            "m-chat-think",
            "openai.chat",
            {"model": "deepseek-r1", "messages": [{"role": "user", "content": "Hi"}]},
            response=compact(think_response),
        ),
        body("m-aisdk", "ai-sdk.ui", {"messages": [ai_user]}, response=compact(ai_response)),
        body(
            "m-aisdk",
            "ai-sdk.ui",
            {
                "messages": [
                    ai_user,
                    ai_response,
                    {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "More"}]},
                ]
            },
            stream=ai_stream,
        ),
    ]


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_no_marker_in_the_database_dump_nor_in_redis(admin_client: Any) -> None:
    _, token = service_token_create(name="markers")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    for b in bodies():
        response = api.post("/api/v1/exchanges", b, format="json")
        assert response.status_code == 201, response.json()

    # Replay returns every marker: they were stored (encrypted), so the checks below can fail.
    replayed = "".join(
        api.get(f"/api/v1/conversations/{c}/messages").content.decode()
        for c in ("m-anthropic", "m-oai", "m-chat", "m-chat-think", "m-aisdk")
    )
    for name, marker in M.items():
        if name != "system":  # the system prompt is a request setting, not a message
            assert marker in replayed, name

    # Share links made before the dump: they keep a boundary and a token hash, never text.
    from django.contrib.auth import get_user_model
    from django.test import Client

    from conversations.sharing.links import share_link_create

    admin = get_user_model().objects.get(username="admin")
    tokens = [
        share_link_create(actor=admin, conversation_id=pk)[1]
        for pk in Conversation.objects.values_list("pk", flat=True)
    ]

    dump = pg_dump("default")
    assert "conversations_message" in dump and "COPY public.conversations_block" in dump
    leaked = [name for name, marker in M.items() if marker in dump]
    assert leaked == [], f"markers in the pg_dump of the main database: {leaked}"

    # The console and the admin show none of it either.
    pages = [
        "/",
        "/admin/conversations/fieldpolicy/",
        "/admin/conversations/exchange/",
        "/admin/conversations/unknownblocktype/",
    ]
    pages += [f"/conversations/{pk}/" for pk in Conversation.objects.values_list("pk", flat=True)]
    # ...nor do the text exports of every conversation in every format,
    pages += [
        f"/conversations/{pk}/export.{fmt}"
        for pk in Conversation.objects.values_list("pk", flat=True)
        for fmt in ("md", "txt", "json")
    ]
    for url in pages:
        response = admin_client.get(url)
        assert response.status_code == 200, url
        page = response.content.decode()
        assert not [n for n, m in M.items() if m in page], url
    # ...nor the public share pages.
    anonymous = Client()
    for token in tokens:
        response = anonymous.get(f"/s/{token}/", REMOTE_ADDR="10.200.0.1")
        assert response.status_code == 200
        assert not [n for n, m in M.items() if m in response.content.decode()], token

    cache_dump = redis_dump()
    leaked = [name for name, marker in M.items() if marker in cache_dump]
    assert leaked == [], f"markers in Redis: {leaked}"
