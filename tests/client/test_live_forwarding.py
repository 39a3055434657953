"""Live forwarding (``live=True``): a streamed call's chunks reach the console's
``POST /api/v1/live/chunks`` as they arrive, in order, before the exchange that closes the live
stream; what the console keeps of the watch (time to first visible text) proves it saw them. The
record is unchanged: the replay is the bytes the provider sent. Off by default, and a stream the
console cannot take live (gzip'd) is not forwarded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import console_client
import pytest

from conversations import formats
from conversations.models import Exchange, Message
from tests.conftest import raw_of

from .conftest import ConsoleServer
from .provider import FakeProvider
from .test_delivery import instrumented, pick

pytestmark = pytest.mark.slow


def _streamed_call(client: Any, model: str) -> None:
    with client.messages.stream(
        model=model, max_tokens=512, messages=[{"role": "user", "content": "Where is my order?"}]
    ) as stream:
        for _ in stream:
            pass


def test_a_live_stream_reaches_the_console_chunk_by_chunk_before_its_exchange(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    served = pick("anthropic-clear-thinking")
    provider.route(served.model, served.reply(chunk=61))
    chunks = -(-len(served.body) // 61)
    client = instrumented(provider, live_console.url, token, tmp_path, live=True)
    try:
        with console_client.conversation("conv-live", customer="cus-live"):
            _streamed_call(client, served.model)  # the first: the console has no conversation yet
            assert console_client.flush(timeout=30)
            _streamed_call(client, served.model)  # the second: watched live
    finally:
        client.close()
    assert console_client.flush(timeout=30)
    counts = console_client.counters()
    assert (counts.sent, counts.rejected, counts.dropped) == (2, 0, 0)
    # Every chunk of both calls was accepted (202), none lost; each chunk of the second went
    # out before its exchange, or the console could not have timed its first text. The SDK
    # reads what the socket holds: on a loaded machine two of the provider's chunks can arrive
    # in one read, and go out as one (at most one post per provider chunk, at least one a call).
    assert counts.live_dropped == 0
    assert 2 <= counts.live_sent <= 2 * chunks
    first, second = Exchange.objects.filter(conversation__external_id="conv-live").order_by(
        "ordinal"
    )
    assert first.live_first_text_ms is None  # nothing to watch before the conversation existed
    assert second.live_first_text_ms is not None
    assert second.live_thinking_ms is not None
    # The record is what the provider sent, whatever went out live.
    received = provider.requests_for(served.model)[-1]
    parsed = formats.get(served.format).parse(
        request=received.body.decode(), stream=served.body.decode()
    )
    (answer,) = Message.objects.filter(exchange=second, role="assistant")
    assert raw_of(answer) == parsed.output[0].raw


def test_live_is_off_by_default_and_skips_a_gzipped_stream(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    served = pick("anthropic-clear-thinking")
    provider.route(served.model, served.reply(chunk=61))
    plain = instrumented(provider, live_console.url, token, tmp_path)
    try:
        with console_client.conversation("conv-not-live", customer="cus-live"):
            _streamed_call(plain, served.model)
            _streamed_call(plain, served.model)
    finally:
        plain.close()
    assert console_client.flush(timeout=30)
    assert console_client.counters().live_sent == 0
    console_client.shutdown(timeout=5)

    provider.route(served.model, served.reply(chunk=61, gzip=True))
    zipped = instrumented(provider, live_console.url, token, tmp_path, live=True)
    try:
        with console_client.conversation("conv-not-live", customer="cus-live"):
            _streamed_call(zipped, served.model)
    finally:
        zipped.close()
    assert console_client.flush(timeout=30)
    counts = console_client.counters()
    assert (counts.sent, counts.live_sent, counts.live_dropped) == (1, 0, 0)
