"""The ``google-genai`` SDK's ``Chat`` as the oracle for ``google.generate_content`` streams: the
SDK itself reads the raw SSE text (over an httpx mock transport: nothing leaves the process)
through ``chat.send_message_stream``, and what its chat keeps afterwards (``get_history()``:
one ``Content`` per chunk, as the SDK sends them back) is the outcome, each ``Content`` as the
SDK serialises it for a request (camelCase, signatures URL-safe base64)."""

from __future__ import annotations

from typing import Any

import httpx

from .oracles import Outcome


def chat_history(text: str) -> Outcome:
    """The model contents ``google-genai``'s chat keeps after reading the stream ``text``."""
    from google import genai
    from google.genai import types

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=text.encode("utf-8")
        )

    http = httpx.Client(transport=httpx.MockTransport(handler))
    client = genai.Client(
        api_key="sk-fake",
        http_options=types.HttpOptions(
            base_url="http://provider.invalid",
            httpx_client=http,
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )
    try:
        chat = client.chats.create(model="gemini-test")
        for _ in chat.send_message_stream("hi"):
            pass
        kept: list[Any] = [
            c.model_dump(mode="json", exclude_none=True, by_alias=True)
            for c in chat.get_history()[1:]
        ]
    except Exception as exc:
        return Outcome(error=f"{type(exc).__name__}: {exc}")
    finally:
        http.close()
    return Outcome(messages=kept)
