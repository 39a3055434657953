"""The real SDKs (anthropic, openai; sync and async), instrumented, against a fake provider that
serves every recorded fixture (JSON and SSE) and a real console: every exchange arrives once,
and the replay returns the bytes the SDK sent and the fake sent back."""

from __future__ import annotations

import json
from pathlib import Path

import console_client
import pytest

from conversations.models import Conversation, Exchange

from .calls import Call, run, sdk_formats
from .conftest import ConsoleServer, Served, all_served, expected_replay
from .provider import FakeProvider

pytestmark = pytest.mark.slow

SERVED = all_served()
FAST = {"backoff": 0.05, "backoff_max": 0.2}


def check_arrived(
    call: Call, served: Served, provider: FakeProvider, console: ConsoleServer, token: str
) -> None:
    (received,) = provider.requests_for(served.model)
    history = console_client.history(call.conversation, url=console.url, token=token)
    assert history.raw == expected_replay(call.format, received.body, served)
    # The user's message is the request's element, byte for byte as the SDK sent it.
    assert history.raw_messages[0] in received.body
    if not served.streamed and call.format != "openai.chat":
        # The answer's content (Anthropic) or output items (Responses): the fake's bytes.
        assert all(
            m in served.body or m[m.index(b":[") + 1 : -1] in served.body
            for m in history.raw_messages[1:]
        )
    row = Conversation.objects.get(external_id=call.conversation)
    assert row.customer_external_id == call.customer
    assert Exchange.objects.filter(conversation=row).count() == 1


def test_every_fixture_arrives_byte_for_byte(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    """All recordings, one conversation each, through the sync clients (one test: a test that
    starts from an empty database costs a flush of every table)."""
    calls = []
    for s in SERVED:
        provider.route(s.model, s.reply())
        calls.append(Call(f"conv-{s.model}", "cus-1", s.format, s.model, s.streamed))
    answers, info = run(
        calls, provider.url, url=live_console.url, token=token, spool_dir=tmp_path, **FAST
    )
    assert info == {"library": "httpx2", "transport": "CaptureTransport"}
    assert all(answers), "an SDK call returned nothing"
    assert console_client.flush(timeout=60)
    counts = console_client.counters()
    assert (counts.captured, counts.sent, counts.dropped, counts.rejected) == (
        len(calls),
        len(calls),
        0,
        0,
    )
    for call, s in zip(calls, SERVED, strict=True):
        check_arrived(call, s, provider, live_console, token)


def test_async_clients_and_concurrent_conversations(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    """Async tasks running together, each in its own conversation: each exchange lands in its
    own conversation (the context variable is per task)."""
    chosen: list[Served] = []
    for fmt in sdk_formats():  # every format whose kit names a Python SDK
        chosen += [s for s in SERVED if s.format == fmt][:2]
    calls = []
    for i, s in enumerate(chosen):
        provider.route(s.model, s.reply(chunk=31))
        calls.append(
            Call(
                f"conv-async-{i}",
                f"cus-async-{i}",
                s.format,
                s.model,
                s.streamed,
                {"queue": "billing"},
                True,
            )
        )
    answers, _ = run(
        calls, provider.url, url=live_console.url, token=token, spool_dir=tmp_path, **FAST
    )
    assert all(answers)
    assert console_client.flush(timeout=30)
    assert console_client.counters().sent == len(calls)
    for call, s in zip(calls, chosen, strict=True):
        check_arrived(call, s, provider, live_console, token)
        assert Conversation.objects.get(external_id=call.conversation).queue == "billing"


def test_nothing_of_the_context_reaches_the_provider(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    served = next(s for s in SERVED if s.streamed and s.format == "anthropic.messages")
    provider.route(served.model, served.reply())
    call = Call(
        "conv-SECRET-ID-77",
        "cus-SECRET-CUSTOMER-88",
        served.format,
        served.model,
        True,
        {"queue": "LABEL-SECRET-99"},
    )
    run([call], provider.url, url=live_console.url, token=token, spool_dir=tmp_path, **FAST)
    assert console_client.flush(timeout=30)
    (received,) = provider.requests_for(served.model)
    sent = json.dumps(received.headers).encode() + received.path.encode() + received.body
    for secret in (b"SECRET-ID-77", b"SECRET-CUSTOMER-88", b"LABEL-SECRET-99", token.encode()):
        assert secret not in sent
    assert Conversation.objects.filter(external_id=call.conversation).exists()
