"""Delivery against a real console that is down, then up; full spool; answering 500; hanging;
cancelled streams. The chat call is never blocked or broken by the console: a call that
returns while the console is down or frozen did not wait for it."""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import console_client
import pytest

from conversations import formats
from conversations.models import Conversation, Exchange
from conversations.replay import envelope

from .calls import COMMON, Call, run
from .conftest import HOST, ConsoleServer, Served, all_served, expected_replay, free_port
from .provider import FakeProvider

pytestmark = pytest.mark.slow

SERVED = all_served()
FAST = {"backoff": 0.05, "backoff_max": 0.2, "timeout": 1.0, "connect_timeout": 0.5}
WAIT_SECONDS = 60


def pick(part: str) -> Served:
    return next(s for s in SERVED if part in s.source)


def eventually(what: str, condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {WAIT_SECONDS}s waiting for {what}"
        time.sleep(0.05)


def instrumented(
    provider: FakeProvider, url: str, token: str, spool: Path, **options: Any
) -> anthropic.Anthropic:
    """An Anthropic client on the fake provider, instrumented for the console at ``url`` with
    the fast retry settings."""
    return console_client.instrument(
        anthropic.Anthropic(base_url=provider.url, **COMMON),
        url=url,
        token=token,
        spool_dir=spool,
        **FAST,
        **options,
    )


def spooled_bodies(spool: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted(spool.rglob("*.exchange")):
        _, _, body = path.read_bytes().partition(b"\n")
        out.append(json.loads(body))
    return out


def anthropic_turns(
    provider: FakeProvider,
    served: list[Served],
    conversation: str,
    *,
    url: str,
    token: str,
    spool: Path,
) -> list[bytes]:
    """A conversation of several turns: each request carries the earlier turns (the assistant's
    as the console's parser reads the answer). Returns the request bytes the fake received."""
    client = instrumented(provider, url, token, spool)
    messages: list[Any] = []
    requests = []
    try:
        for i, s in enumerate(served):
            provider.route(s.model, s.reply())
            messages.append({"role": "user", "content": f"turn {i}: where is my parcel?"})
            with console_client.conversation(conversation, customer="cus-turns"):
                if s.streamed:
                    with client.messages.create(
                        model=s.model, max_tokens=1024, messages=messages, stream=True
                    ) as stream:
                        assert list(stream)
                else:
                    assert client.messages.create(
                        model=s.model, max_tokens=1024, messages=messages
                    ).id
            (received,) = provider.requests_for(s.model)
            requests.append(received.body)
            text = s.body.decode()
            parsed = formats.get(s.format).parse(
                request=received.body.decode(),
                response=None if s.streamed else text,
                stream=text if s.streamed else None,
            )
            messages.append(json.loads(parsed.output[0].raw))
    finally:
        client.close()
    return requests


def turns_replay(served: list[Served], requests: list[bytes]) -> bytes:
    elements: list[str] = []
    for s, request in zip(served, requests, strict=True):
        text = s.body.decode()
        parsed = formats.get(s.format).parse(
            request=request.decode(),
            response=None if s.streamed else text,
            stream=text if s.streamed else None,
        )
        elements += [m.raw for m in parsed.history[len(elements) :]] + [
            m.raw for m in parsed.output
        ]
    return envelope(elements)


TURNS = ["anthropic-mcp.1.json", "anthropic-clear-thinking", "thinking_part_redacted_stream"]


def test_console_down_then_up_everything_spooled_arrives_once(
    provider: FakeProvider, console_factory: Any, token: str, tmp_path: Path
) -> None:
    """Down for the whole conversation: every exchange spooled (the spool holds the exact bytes),
    the process's delivery stopped; a later one on the same spool, with the console up,
    delivers them all, in order, once."""
    server: ConsoleServer = console_factory(port=free_port())  # not started: connection refused
    spool = tmp_path / "spool"
    served = [pick(p) for p in TURNS]
    requests = anthropic_turns(
        provider, served, "conv-down-up", url=server.url, token=token, spool=spool
    )
    others = [pick("openai-web-search-tool.1.chunks"), pick("deepseek-reasoning.json")]
    calls = [
        Call(f"conv-down-up-{i}", "cus-2", s.format, s.model, s.streamed)
        for i, s in enumerate(others)
    ]
    for s in others:
        provider.route(s.model, s.reply())
    answers, _ = run(calls, provider.url, url=server.url, token=token, spool_dir=spool, **FAST)
    assert all(answers)
    total = len(served) + len(others)

    assert not console_client.flush(timeout=1)  # bounded: the console is down
    counts = console_client.counters()
    assert (counts.captured, counts.spooled, counts.sent, counts.dropped) == (total, total, 0, 0)
    # The spool holds what the SDK sent and what the fake sent back, byte for byte.
    bodies = spooled_bodies(spool)
    assert [b["conversation"] for b in bodies] == ["conv-down-up"] * 3 + [
        "conv-down-up-0",
        "conv-down-up-1",
    ]
    for body, s in zip(bodies, served + others, strict=True):
        assert body["stream" if s.streamed else "response"] == s.body.decode()
        assert body["request"].encode() == provider.requests_for(s.model)[0].body
    console_client.shutdown(timeout=0)  # this "process" ends with everything in the spool
    assert len(spooled_bodies(spool)) == total

    server.start()
    later = console_client.console(url=server.url, token=token, spool_dir=spool, **FAST)
    assert later.flush(timeout=WAIT_SECONDS)
    assert later.counters().sent == total
    assert spooled_bodies(spool) == []
    assert Exchange.objects.count() == total
    assert not Exchange.objects.filter(history_rewritten=True).exists()
    history = console_client.history("conv-down-up", url=server.url, token=token)
    assert history.raw == turns_replay(served, requests)
    for call, s in zip(calls, others, strict=True):
        (received,) = provider.requests_for(s.model)
        replay = console_client.history(call.conversation, url=server.url, token=token)
        assert replay.raw == expected_replay(s.format, received.body, s)


def test_a_full_spool_drops_the_oldest_first_and_says_so(
    provider: FakeProvider,
    console_factory: Any,
    token: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server: ConsoleServer = console_factory(port=free_port())
    served = pick("anthropic-mcp.1.json")
    provider.route(served.model, served.reply())
    calls = [
        Call(f"conv-full-{i}", "cus-full", served.format, served.model, False) for i in range(5)
    ]
    caplog.set_level(logging.WARNING, logger="console_client")
    answers, _ = run(
        calls,
        provider.url,
        url=server.url,
        token=token,
        spool_dir=tmp_path,
        spool_max_files=3,
        **FAST,
    )
    assert all(answers)
    eventually("five exchanges through the spool", lambda: console_client.counters().spooled == 5)
    counts = console_client.counters()
    assert (counts.spooled, counts.dropped) == (5, 2)
    assert [b["conversation"] for b in spooled_bodies(tmp_path)] == [
        "conv-full-2",
        "conv-full-3",
        "conv-full-4",
    ]
    full = [r.getMessage() for r in caplog.records if "the spool is full" in r.getMessage()]
    assert len(full) == 2
    assert "conv-full-0" in full[0] and "conv-full-1" in full[1]

    server.start()
    assert console_client.flush(timeout=WAIT_SECONDS)
    stored = set(Conversation.objects.values_list("external_id", flat=True))
    assert stored == {"conv-full-2", "conv-full-3", "conv-full-4"}


def test_a_console_without_its_database_never_breaks_a_chat_call(
    provider: FakeProvider, console_factory: Any, token: str, tmp_path: Path
) -> None:
    port = free_port()
    broken: ConsoleServer = console_factory(port=port, broken_database=True).start()
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    conn.request(
        "POST", "/api/v1/exchanges", body=b"{}", headers={"Authorization": f"Bearer {token}"}
    )
    assert conn.getresponse().status == 503  # a console that cannot reach its database
    conn.close()

    served = [pick("anthropic-clear-thinking"), pick("openai-reasoning-encrypted-content.1.json")]
    calls = [
        Call(f"conv-500-{i}", "cus-500", s.format, s.model, s.streamed)
        for i, s in enumerate(served)
    ]
    for s in served:
        provider.route(s.model, s.reply())
    answers, _ = run(calls, provider.url, url=broken.url, token=token, spool_dir=tmp_path, **FAST)
    # The SDK's answers are the provider's, whole.
    assert answers[0][-1].type == "message_stop"
    assert answers[1][0].id == json.loads(served[1].body)["id"]
    eventually(
        "both exchanges retried, then spooled", lambda: console_client.counters().spooled == 2
    )
    counts = console_client.counters()
    assert counts.retried >= 2 and counts.sent == 0 and counts.dropped == 0

    broken.stop()
    console_factory(port=port).start()
    assert console_client.flush(timeout=WAIT_SECONDS)
    assert Exchange.objects.count() == 2


def test_a_hanging_console_never_blocks_a_chat_call_and_a_retry_stores_once(
    provider: FakeProvider, console_factory: Any, token: str, tmp_path: Path
) -> None:
    """Frozen (SIGSTOP): connections are accepted, nothing answers. The calls return all the
    same; the first post times out (bounded) and is retried. Thawed, the console also handles
    the post it had queued: the Idempotency-Key makes the two one exchange."""
    server: ConsoleServer = console_factory().start()
    served = [pick("anthropic-clear-thinking"), pick("deepseek-reasoning.chunks")]
    calls = [
        Call(f"conv-hang-{i}", "cus-hang", s.format, s.model, s.streamed)
        for i, s in enumerate(served)
    ]
    for s in served:
        provider.route(s.model, s.reply())
    server.freeze()
    try:
        answers, _ = run(
            calls, provider.url, url=server.url, token=token, spool_dir=tmp_path, **FAST
        )
        assert all(answers)
        eventually(
            "a post to the frozen console timed out", lambda: console_client.counters().retried >= 1
        )
        assert not console_client.flush(timeout=0.5)
        assert console_client.counters().sent == 0
    finally:
        server.thaw()
    assert console_client.flush(timeout=WAIT_SECONDS)
    assert Exchange.objects.count() == 2
    for call, s in zip(calls, served, strict=True):
        (received,) = provider.requests_for(s.model)
        assert console_client.history(
            call.conversation, url=server.url, token=token
        ).raw == expected_replay(s.format, received.body, s)


def test_a_stream_cancelled_mid_way_is_stored_as_received_and_flagged(
    provider: FakeProvider,
    live_console: ConsoleServer,
    token: str,
    tmp_path: Path,
) -> None:
    """The customer stops the answer: what arrived is posted with ``cancelled``, and the
    console stores it as received, flagged: the exchange says cancelled, and the answer is
    the text of the deltas that had arrived (here the first content block's start and one
    delta of thinking, none of it shown).

    The SDK gets the first events while the fake holds back the rest of the stream: the tee
    hands each chunk on as it arrives (were it buffering, ``next()`` would wait for a gate that
    opens only after it)."""
    served = pick("anthropic-clear-thinking")
    gate = threading.Event()
    # The first chunk holds message_start whole, and no more than that.
    first_event = served.body.index(b"\n\n") + 2
    provider.route(served.model, served.reply(chunk=first_event, gate=gate, gate_after=1))
    client = instrumented(provider, live_console.url, token, tmp_path)
    try:
        with (
            console_client.conversation("conv-cancelled", customer="cus-c"),
            client.messages.create(
                model=served.model,
                max_tokens=64,
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
            ) as stream,
        ):
            first = next(iter(stream))
        assert first.type == "message_start"
    finally:
        gate.set()
        client.close()
    assert console_client.flush(timeout=WAIT_SECONDS)
    counts = console_client.counters()
    assert (counts.cancelled, counts.rejected, counts.sent) == (1, 0, 1)
    (exchange,) = Exchange.objects.filter(conversation__external_id="conv-cancelled")
    assert exchange.cancelled and exchange.streamed
    assert exchange.stop_reason == ""  # message_delta never arrived
    replay = console_client.history("conv-cancelled", url=live_console.url, token=token)
    # The request's message, then the assistant turn as far as it had arrived: no blocks yet.
    assert replay.raw_messages[-1] == b'{"role":"assistant","content":[]}'


def test_a_stream_closed_after_its_last_event_is_stored(
    provider: FakeProvider, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    """Closed before the connection ended but after message_stop: flagged cancelled by the
    client, whole for the console."""
    served = pick("anthropic-clear-thinking")
    hold = threading.Event()
    provider.route(served.model, served.reply(hold_end=hold))
    client = instrumented(provider, live_console.url, token, tmp_path)
    try:
        with (
            console_client.conversation("conv-closed", customer="cus-c"),
            client.messages.create(
                model=served.model,
                max_tokens=64,
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
            ) as stream,
        ):
            for event in stream:
                if event.type == "message_stop":
                    break
    finally:
        hold.set()
        client.close()
    assert console_client.flush(timeout=WAIT_SECONDS)
    counts = console_client.counters()
    assert (counts.cancelled, counts.sent, counts.rejected) == (1, 1, 0)
    (received,) = provider.requests_for(served.model)
    replay = console_client.history("conv-closed", url=live_console.url, token=token)
    assert replay.raw == expected_replay(served.format, received.body, served)


def test_history_errors(live_console: ConsoleServer, token: str) -> None:
    with pytest.raises(console_client.ConversationNotFound) as missing:
        console_client.history("conv-never-seen", url=live_console.url, token=token)
    assert missing.value.status == 404
    with pytest.raises(console_client.ConsoleError) as refused:
        console_client.history("conv-never-seen", url=live_console.url, token="not-a-token")
    assert refused.value.status == 401
