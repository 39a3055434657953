"""Capture without a console: the real SDKs against the fake provider, the console's port
closed, and what the client would post read back from its spool. No database."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import console_client
import httpx
import httpx2
import openai
import pytest
from console_client._capture import format_for
from console_client._capture_table import PATHS
from console_client._history import split_envelope

from conversations.formats import formats

from .calls import COMMON
from .conftest import free_port
from .provider import JSON, SSE, FakeProvider, Reply

WAIT_SECONDS = 30
# The console is down: the first failed post spools, the next try is far off.
SLOW_RETRY = {
    "backoff": 30.0,
    "backoff_max": 60.0,
    "connect_timeout": 0.5,
    "retries_before_spool": 0,
}
SSE_TEXT = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    '"role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":3,'
    '"output_tokens":1}}}\n\nevent: content_block_start\ndata: {"type":"content_block_start",'
    '"index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\n'
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta",'
    '"text":"Grüße, ça va? 📦"}}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop",'
    '"index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
    '"end_turn"},"usage":{"output_tokens":5}}\n\nevent: message_stop\n'
    'data: {"type":"message_stop"}\n\n'
)
JSON_BODY = (
    '{\n  "id": "msg_2", "type": "message", "role": "assistant", "model": "m",\n'
    '  "content": [ {"type": "text", "text": "Grüße \\u00e7a"} ],\n'
    '  "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 2}\n}'
)


@pytest.fixture
def down_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


@pytest.fixture
def sdk(provider: FakeProvider, down_url: str, tmp_path: Path) -> Iterator[anthropic.Anthropic]:
    provider.route("sse", Reply(SSE_TEXT.encode(), content_type=SSE, chunk=7))
    provider.route("json", Reply(JSON_BODY.encode()))
    client = console_client.instrument(
        anthropic.Anthropic(base_url=provider.url, **COMMON),
        url=down_url,
        token="tok",
        spool_dir=tmp_path,
        **SLOW_RETRY,
    )
    yield client
    client.close()


def eventually(what: str, condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def spooled(spool: Path, count: int) -> list[dict[str, Any]]:
    eventually(f"{count} spooled", lambda: console_client.counters().spooled >= count)
    out = []
    for path in sorted(spool.rglob("*.exchange")):
        header, _, body = path.read_bytes().partition(b"\n")
        out.append({**json.loads(body), "_key": json.loads(header)["key"]})
    return out


def ask(client: anthropic.Anthropic, model: str) -> Any:
    kwargs: dict[str, Any] = {
        "model": model,
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    if model.startswith("sse"):
        with client.messages.create(stream=True, **kwargs) as stream:
            return list(stream)
    return client.messages.create(**kwargs)


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/v1/messages", "anthropic.messages"),
        ("POST", "/proxy/v1/messages/", "anthropic.messages"),
        ("POST", "/v1/messages/count_tokens", None),
        ("POST", "/v1/messages/batches", None),
        ("POST", "/v1/responses", "openai.responses"),
        ("GET", "/v1/responses", None),
        ("POST", "/v1/responses/resp_1/cancel", None),
        ("POST", "/v1/chat/completions", "openai.chat"),
        ("POST", "/openai/deployments/gpt/chat/completions", "openai.chat"),
        ("POST", "/v1/embeddings", None),
    ],
)
def test_the_format_comes_from_the_path(method: str, path: str, expected: str | None) -> None:
    assert format_for(method, path) == expected


def test_the_capture_table_is_the_format_registry_s() -> None:
    # The client is a package of its own (it cannot import the console): its table of provider
    # paths is held to the profiles' capture paths here, so a format added to the console
    # without its path in the client (or a path changed on one side) fails.
    expected = {(path, f.name) for f in formats() for path in f.profile.capture.paths}
    assert set(PATHS) == expected
    for path, name in expected:
        assert format_for("POST", path) == name


def test_request_and_answer_bytes_are_captured_exactly(
    sdk: anthropic.Anthropic, provider: FakeProvider, tmp_path: Path
) -> None:
    with console_client.conversation("c-1", customer="u-9", labels={"queue": "billing"}):
        events = ask(sdk, "sse")
        message = ask(sdk, "json")
    assert events[2].delta.text == "Grüße, ça va? 📦"  # chunks of 7 bytes cut UTF-8 characters
    assert message.content[0].text == "Grüße ça"
    first, second = spooled(tmp_path, 2)
    assert first["stream"] == SSE_TEXT and "response" not in first
    assert second["response"] == JSON_BODY and "stream" not in second
    for body, model in ((first, "sse"), (second, "json")):
        assert body["request"].encode() == provider.requests_for(model)[0].body
        assert (body["conversation"], body["customer"], body["labels"]) == (
            "c-1",
            "u-9",
            {"queue": "billing"},
        )
        assert body["format"] == "anthropic.messages"
        assert body["latency_ms"] >= 0 and body["started_at"].endswith("+00:00")
    assert first["_key"] != second["_key"]  # one Idempotency-Key per exchange


@pytest.mark.parametrize("streamed", [True, False])
def test_a_gzip_answer_is_captured_as_the_sdk_read_it(
    streamed: bool, provider: FakeProvider, down_url: str, tmp_path: Path
) -> None:
    body = SSE_TEXT if streamed else JSON_BODY
    provider.route(
        "gz", Reply(body.encode(), content_type=SSE if streamed else JSON, gzip=True, chunk=11)
    )
    client = console_client.instrument(
        anthropic.Anthropic(base_url=provider.url, **COMMON),
        url=down_url,
        token="tok",
        spool_dir=tmp_path,
        **SLOW_RETRY,
    )
    kwargs: dict[str, Any] = {
        "model": "gz",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    with console_client.conversation("c-gz", customer="u-9"):
        if streamed:
            with client.messages.create(stream=True, **kwargs) as stream:
                assert list(stream)
        else:
            assert client.messages.create(**kwargs).id == "msg_2"
    client.close()
    assert "gzip" in provider.requests_for("gz")[0].headers.get("Accept-Encoding", "")
    (captured,) = spooled(tmp_path, 1)
    assert captured["stream" if streamed else "response"] == body


def test_calls_outside_a_conversation_are_counted_not_captured(
    sdk: anthropic.Anthropic, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="console_client")
    assert ask(sdk, "json").id == "msg_2"
    assert len(ask(sdk, "sse")) == 6
    counts = console_client.counters()
    assert (counts.uncaptured, counts.captured) == (2, 0)
    warnings = [
        r for r in caplog.records if r.levelno == logging.WARNING and "outside" in r.getMessage()
    ]
    assert len(warnings) == 1  # said once, then counted
    assert not list(tmp_path.rglob("*.exchange"))


def test_a_provider_error_reaches_the_sdk_unchanged_and_is_not_posted(
    sdk: anthropic.Anthropic, provider: FakeProvider
) -> None:
    provider.route(
        "overloaded",
        Reply(b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}', status=529),
    )
    with (
        console_client.conversation("c-err", customer="u-9"),
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        ask(sdk, "overloaded")
    assert raised.value.status_code == 529
    counts = console_client.counters()
    assert (counts.skipped, counts.captured) == (1, 0)


def test_the_context_is_per_thread_and_per_task(
    sdk: anthropic.Anthropic, provider: FakeProvider, down_url: str, tmp_path: Path
) -> None:
    barrier = threading.Barrier(2)

    def worker(name: str) -> None:
        with console_client.conversation(f"c-{name}", customer=f"u-{name}"):
            barrier.wait()
            ask(sdk, "json")
            barrier.wait()
            ask(sdk, "sse")

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=WAIT_SECONDS)
    bodies = spooled(tmp_path, 4)
    assert sorted((b["conversation"], b["customer"], "stream" in b) for b in bodies) == [
        ("c-a", "u-a", False),
        ("c-a", "u-a", True),
        ("c-b", "u-b", False),
        ("c-b", "u-b", True),
    ]

    async def tasks() -> None:
        client = console_client.instrument(
            anthropic.AsyncAnthropic(base_url=provider.url, **COMMON),
            url=down_url,
            token="tok",
            spool_dir=tmp_path,
            **SLOW_RETRY,
        )

        async def one(name: str) -> None:
            with console_client.conversation(f"c-task-{name}", customer="u-t"):
                await asyncio.sleep(0)  # let the other task enter its own conversation
                await client.messages.create(
                    model="json", max_tokens=1, messages=[{"role": "user", "content": "hi"}]
                )

        await asyncio.gather(one("x"), one("y"))
        await client.close()

    asyncio.run(tasks())
    names = {b["conversation"] for b in spooled(tmp_path, 6)}
    assert {"c-task-x", "c-task-y"} <= names


def test_a_thread_pool_worker_needs_the_context_copied(
    sdk: anthropic.Anthropic, tmp_path: Path
) -> None:
    with console_client.conversation("c-pool", customer="u-9"), ThreadPoolExecutor(1) as pool:
        pool.submit(ask, sdk, "json").result()  # the worker's own (empty) context
        context = contextvars.copy_context()
        pool.submit(context.run, ask, sdk, "json").result()
    assert console_client.counters().uncaptured == 1
    assert [b["conversation"] for b in spooled(tmp_path, 1)] == ["c-pool"]


def test_openai_clients_and_copies_share_the_instrumentation(
    provider: FakeProvider, down_url: str, tmp_path: Path
) -> None:
    chat = (
        '{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
        '"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}'
    )
    provider.route("chat", Reply(chat.encode()))
    client = console_client.instrument(
        openai.OpenAI(base_url=provider.url + "/v1", **COMMON),
        url=down_url,
        token="tok",
        spool_dir=tmp_path,
        **SLOW_RETRY,
    )
    again = console_client.instrument(client, url=down_url, token="tok")  # wraps nothing twice
    assert again is client
    assert type(client._client._transport).__name__ == "CaptureTransport"
    assert type(client._client._transport.inner).__name__ == "HTTPTransport"
    with console_client.conversation("c-oai", customer="u-9"):
        client.with_options(timeout=5).chat.completions.create(
            model="chat", messages=[{"role": "user", "content": "hi"}]
        )
    client.close()
    (body,) = spooled(tmp_path, 1)
    assert (body["format"], body["response"]) == ("openai.chat", chat)


def test_plain_httpx_clients_of_either_library(
    provider: FakeProvider, down_url: str, tmp_path: Path
) -> None:
    provider.route("json", Reply(JSON_BODY.encode()))
    for lib in (httpx2, httpx):
        http_client = console_client.instrument(
            lib.Client(), url=down_url, token="tok", spool_dir=tmp_path, **SLOW_RETRY
        )
        with console_client.conversation(f"c-{lib.__name__}", customer="u-9"):
            answer = http_client.post(provider.url + "/v1/messages", content=b'{"model":"json"}')
        assert answer.text == JSON_BODY
        http_client.close()
    assert [b["conversation"] for b in spooled(tmp_path, 2)] == ["c-httpx2", "c-httpx"]


def test_what_cannot_be_instrumented_or_named_is_refused() -> None:
    with pytest.raises(TypeError):
        console_client.instrument(object(), url="http://127.0.0.1:1", token="t")
    with pytest.raises(ValueError, match="url"):
        console_client.instrument(httpx2.Client(), url="console.example", token="t")
    with pytest.raises(ValueError, match="token"):
        console_client.instrument(httpx2.Client(), url="http://127.0.0.1:1", token="")
    with pytest.raises(ValueError, match="1 to 200"):
        console_client.conversation("x" * 201, customer="u").__enter__()
    with pytest.raises(TypeError):
        console_client.conversation("c", customer=9).__enter__()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="queue"):
        console_client.conversation("c", customer="u", labels={"queue": ""}).__enter__()
    with pytest.raises(TypeError, match="JSON"):
        console_client.conversation("c", customer="u", labels={"at": object()}).__enter__()


def test_a_backlog_goes_to_the_spool_in_order(
    provider: FakeProvider, down_url: str, tmp_path: Path
) -> None:
    """The thread is busy retrying the first exchange while calls keep coming: once the queue
    is over half full, the exchange in hand and the queue behind it go to the spool, in order,
    rather than fill the queue."""
    provider.route("json", Reply(JSON_BODY.encode()))
    client = console_client.instrument(
        anthropic.Anthropic(base_url=provider.url, **COMMON),
        url=down_url,
        token="tok",
        spool_dir=tmp_path,
        queue_size=4,
        **{**SLOW_RETRY, "retries_before_spool": 5},  # the first exchange waits in memory
    )
    (target,) = console_client._consoles.values()
    for i in range(8):
        with console_client.conversation(f"c-{i}", customer="u-9"):
            ask(client, "json")
        if i == 0:
            eventually("the first exchange in the thread's hands", lambda: target._busy)
        # Calls come as fast as the thread moves a backlog (on a loaded machine a burst of
        # eight could fill the queue of four before the thread runs: that drops, by design).
        eventually("the backlog moved to the spool", lambda: len(target._queue) <= 2)
    client.close()
    bodies = spooled(tmp_path, 8)
    assert [b["conversation"] for b in bodies] == [f"c-{i}" for i in range(8)]
    assert console_client.counters().dropped == 0


def test_a_full_queue_drops_and_counts(
    provider: FakeProvider, down_url: str, tmp_path: Path
) -> None:
    """Without a spool to move a backlog to, a full queue drops (the chat never waits)."""
    provider.route("json", Reply(JSON_BODY.encode()))
    no_spool = tmp_path / "a-file"
    no_spool.write_text("not a directory")
    client = console_client.instrument(
        anthropic.Anthropic(base_url=provider.url, **COMMON),
        url=down_url,
        token="tok",
        spool_dir=no_spool,
        queue_size=1,
        **{
            **SLOW_RETRY,
            "retries_before_spool": 5,
        },  # the thread waits on the first exchange's backoff
    )
    (target,) = console_client._consoles.values()
    with console_client.conversation("c-q", customer="u-9"):
        ask(client, "json")
        eventually(
            "the first exchange in the thread's hands", lambda: target._busy and not target._queue
        )
        ask(client, "json")  # queued
        ask(client, "json")  # the queue is full: dropped
    client.close()
    counts = console_client.counters()
    assert (counts.captured, counts.dropped) == (2, 1)


def test_a_spool_that_cannot_be_written_never_breaks_the_chat(
    provider: FakeProvider, down_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    provider.route("json", Reply(JSON_BODY.encode()))
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    caplog.set_level(logging.WARNING, logger="console_client")
    client = console_client.instrument(
        anthropic.Anthropic(base_url=provider.url, **COMMON),
        url=down_url,
        token="tok",
        spool_dir=blocked,
        retries_before_spool=0,
        backoff=0.01,
        backoff_max=0.02,
    )
    with console_client.conversation("c-nospool", customer="u-9"):
        assert ask(client, "json").id == "msg_2"
    client.close()
    eventually("the exchange dropped", lambda: console_client.counters().dropped == 1)
    assert any("no spool" in r.getMessage() for r in caplog.records)


def test_the_replay_is_cut_into_exact_elements() -> None:
    raw = '{"messages":[{"a": 1,  "b":"ç\\u00e7"},[1 ,2],"x" , {"c":{"d":[]}}]}'.encode()
    assert split_envelope(raw) == (
        '{"a": 1,  "b":"ç\\u00e7"}'.encode(),
        b"[1 ,2]",
        b'"x"',
        b'{"c":{"d":[]}}',
    )
    assert split_envelope(b'{"messages":[]}') == ()
    history = console_client.History("c", raw, split_envelope(raw))
    assert history.messages[0] == {"a": 1, "b": "çç"}
    for bad in (b'{"msgs":[]}', b'{"messages":[1,]}', b'{"messages":[1] ', b'{"messages":[1]}x'):
        with pytest.raises(ValueError):
            split_envelope(bad)


def test_a_cancelled_capture_is_sent_as_far_as_it_arrived() -> None:
    """A stream cut inside a character is sent without that character's first bytes, with
    ``cancelled``; a plain response body cut off is no exchange; a whole one has no flag."""
    from console_client._capture import Capture, Unsendable
    from console_client._context import Conversation

    def capture(chunks: list[bytes], *, streamed: bool, ended: bool) -> Capture:
        c = Capture(
            format="anthropic.messages",
            conversation=Conversation("c-1", "u-9"),
            request=b'{"messages":[]}',
            lib=httpx2,
        )
        c.streamed, c.chunks, c.ended = streamed, chunks, ended
        c.finish()
        return c

    euro = "€".encode()  # three bytes
    cut = capture([b"data: {}\n\ndata: caf", euro[:2]], streamed=True, ended=False)
    body = json.loads(cut.body())
    assert body["cancelled"] is True
    assert body["stream"] == "data: {}\n\ndata: caf"

    whole = capture([b"data: {}\n\n"], streamed=True, ended=True)
    assert "cancelled" not in json.loads(whole.body())

    with pytest.raises(Unsendable, match="cut off"):
        capture([b'{"id": "msg_'], streamed=False, ended=False).body()
    # Bytes that are not UTF-8 in the middle stay unsendable, cut or not.
    with pytest.raises(Unsendable, match="not UTF-8"):
        capture([b"data: \xff\xfe more"], streamed=True, ended=False).body()
