"""``console_client.history(..., for_continuation=True)`` against a real console, and the
continuation sent on to the fake provider: for each format with a provider endpoint (the AI SDK
format is a UI store, it has none), in an open tool loop and outside one, every element the
console kept reaches the provider byte for byte, and the earlier turns' reasoning does not."""

from __future__ import annotations

import json
import urllib.request

import console_client
import pytest

from tests.conversations.continuation_cases import CASES, REASONING

from .conftest import ConsoleServer
from .provider import FakeProvider, Reply

pytestmark = pytest.mark.slow

# Where each format continues, and the name of its history in the request.
ENDPOINTS = {
    "anthropic.messages": ("/v1/messages", "messages"),
    "openai.responses": ("/v1/responses", "input"),
    "openai.chat": ("/v1/chat/completions", "messages"),
}


def post(url: str, body: bytes, token: str | None = None) -> int:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (loopback)
        return int(response.status)


@pytest.mark.parametrize(
    ("name", "open_loop"), [key for key in CASES if CASES[key].fmt in ENDPOINTS]
)
def test_continued_through_the_fake_provider(
    provider: FakeProvider, live_console: ConsoleServer, token: str, name: str, open_loop: bool
) -> None:
    case = CASES[(name, open_loop)]
    conversation = f"continue-{name}-{open_loop}"
    body = json.dumps(case.body(conversation)).encode()
    assert post(f"{live_console.url}/api/v1/exchanges", body, token) == 201
    full = console_client.history(conversation, url=live_console.url, token=token)
    kept = console_client.history(
        conversation, url=live_console.url, token=token, for_continuation=True
    )
    assert kept.left_out_elements == case.left_out
    assert kept.left_out_bytes == len(b"".join(full.raw_messages)) - len(
        b"".join(kept.raw_messages)
    )
    if open_loop:
        assert kept.raw_messages[-1] == full.raw_messages[-1]  # the loop, unmodified
    # The backend sends the kept elements on, as they are, with the next turn.
    path, member = ENDPOINTS[case.fmt]
    model = f"model-{name}-{open_loop}"
    provider.route(model, Reply(b'{"id":"x"}'))
    request = (
        f'{{"model":"{model}","max_tokens":16,"{member}":['.encode()
        + b",".join(kept.raw_messages)
        + b"]}"
    )
    assert post(provider.url + path, request) == 200
    (received,) = provider.requests_for(model)
    for element in kept.raw_messages:
        assert element in received.body
    assert f"{REASONING}-1".encode() not in received.body
    assert (f"{REASONING}-2".encode() in received.body) == (
        open_loop and case.fmt != "openai.responses"
    )


def test_history_parses_the_left_out_member() -> None:
    from console_client._history import split_envelope

    assert split_envelope(b'{"messages":[{"a":1}, 2],"left_out":{"elements":1,"bytes":9}}') == (
        b'{"a":1}',
        b"2",
    )
    assert split_envelope(b'{"messages":[]}') == ()
    with pytest.raises(ValueError, match="end with"):
        split_envelope(b'{"messages":[],"other":1}')
