"""Live conversations: the delay from a chunk's POST to the viewers, beside a bare Redis pub/sub.

What it measures: uvicorn serves the console (``console.asgi``, as ``make run`` does) on a free
loopback port, against the bench database and Redis. ``--viewers`` SSE clients (one connection
each, asyncio sockets, in this process) watch one conversation's live stream
(``GET /conversations/<pk>/live``, logged in as an admin). One poster thread sends an Anthropic
stream of ``--deltas`` text deltas through ``POST /api/v1/live/chunks``, one chunk per delta, each
delta 48 characters ending in its number: with the hold-back of 48 characters, the POST of delta
``k + 1`` releases delta ``k`` (the filter keeps it back until it is sure no finding runs across),
so every text event names the POST that published it. Delay = a viewer's arrival time of the
event minus the start of that POST (the request, the filter, the Redis round trips, the SSE relay
and the read). The baseline, in the same run and the same event loop: as many bare
Redis subscribers on one channel, ``--deltas`` messages published one at a time at the pace the
live run's chunks were posted, delay = arrival minus the time just before PUBLISH. Each viewer
reads its stream on a bare socket (HTTP/1.1 and SSE framing read by hand, the arrival taken
before parsing), as cheap a reader as the baseline's: with a full HTTP client for each of the
200 viewers, sharing this process with the poster, the figure measured the clients.

How to read the output: p50 and p99 of both, over every (viewer, event) pair, and the difference
of the p99s: the figure to track (target: within 50 ms on this machine). For reference, the
POST's own round trip (the poster's request to its 202; the server publishes before it
answers). The hold-back adds, on top, the time until 48 more characters arrive (at a provider's
~50 tokens/s, about 0.25 s), which is reported from the posting rate but is the stream's pace,
not the server's.

The live filter's own cost, in this process before the server starts (``--filter-only``: just
that): microseconds a delta of ``conversations.live`` turning raw SSE text into published events
(the SSE framing, the JSON, the hold-back and redaction), over the chunks the live run posts and
over support-chat paragraphs of ``bench/redaction_chat.py`` (personal data, near-misses, ten
languages) streamed as Anthropic text deltas of 5 to 50 characters; and the hold-back alone
(``holdback.hold``) on those deltas, the redaction pipeline's share. Best of five passes.

The poster sends each chunk once the last was answered (a faster server is then measured at a
higher rate), or at ``--rate`` chunks per second: compare versions at the same rate.

``--profile`` runs the server under cProfile (in this script's own process, ``--serve-profiled``)
and prints where its event loop's time goes (the delays it prints are then slowed by the
profiler; the sync views run in threads, which cProfile does not see).

    .venv/bin/python bench/live.py [--viewers 200] [--deltas 2000] [--rate 25] [--quick] [--profile]
        [--filter-only]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import logging

import httpx

from bench.common import ROOT, BenchError, percentile, report, setup_django

HOST = "127.0.0.1"
TARGET_MS = 50.0
UVICORN = Path(sys.executable).parent / "uvicorn"


def _sse(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


def chunks(deltas: int) -> list[str]:
    head = _sse({"type": "message_start", "message": {"id": "m", "content": []}}) + _sse(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    out = [head]
    for k in range(deltas):
        text = "x" * 41 + f" {k:05d} "  # 48 characters, its number last
        delta = {"type": "text_delta", "text": text}
        out.append(_sse({"type": "content_block_delta", "index": 0, "delta": delta}))
    out.append(
        _sse({"type": "content_block_stop", "index": 0})
        + _sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
        + _sse({"type": "message_stop"})
    )
    return out


def _text_deltas(text: str, seed: int) -> list[str]:
    """``text`` streamed as an Anthropic text block, one SSE event a delta of 5-50 characters."""
    import random

    rng = random.Random(seed)
    head = _sse({"type": "message_start", "message": {"id": "m", "content": []}}) + _sse(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    out, i = [head], 0
    while i < len(text):
        n = rng.randint(5, 50)
        delta = {"type": "text_delta", "text": text[i : i + n]}
        out.append(_sse({"type": "content_block_delta", "index": 0, "delta": delta}))
        i += n
    out.append(_sse({"type": "content_block_stop", "index": 0}) + _sse({"type": "message_stop"}))
    return out


def filter_cost(deltas: int, paragraphs: int = 300, repeat: int = 5) -> list[tuple[str, str]]:
    """Microseconds a delta of the live filter (no server, no Redis), best of ``repeat``."""
    from bench import redaction_chat
    from conversations.live.filters import filter_for
    from conversations.live.holdback import flush, hold

    def per_delta(streams: list[list[str]]) -> float:
        best = float("inf")
        count = sum(len(s) for s in streams)
        for _ in range(repeat):
            t0 = time.perf_counter()
            for stream in streams:
                f = filter_for("anthropic.messages")
                for chunk in stream:
                    f.feed(chunk, now=0.0)
                f.close(now=0.0)
            best = min(best, time.perf_counter() - t0)
        return best / count * 1e6

    texts = [s.text for s in redaction_chat.corpus(paragraphs, seed=20261204)]
    chat = [_text_deltas(t, seed=k) for k, t in enumerate(texts)]
    pieces = [
        json.loads(chunk.split("data: ", 1)[1])["delta"]["text"]
        for stream in chat
        for chunk in stream[1:-1]
    ]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        pending = ""
        for k, piece in enumerate(pieces):
            _, pending = hold(pending, piece)
            if k % 20 == 19:  # a block of about 500 characters ends
                flush(pending)
                pending = ""
        best = min(best, time.perf_counter() - t0)
    return [
        ("live filter, this run's chunks", f"{per_delta([chunks(deltas)]):.1f} µs a delta"),
        ("live filter, support-chat deltas", f"{per_delta(chat):.1f} µs a delta"),
        ("hold-back alone, support-chat deltas", f"{best / len(pieces) * 1e6:.1f} µs a delta"),
    ]


def prepare() -> tuple[dict[str, str], int, str, str, str, str]:
    env = setup_django()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from bench.common import store_bodies
    from conversations.demo import demo_bodies
    from conversations.models import Conversation
    from conversations.services import service_token_create

    body = next(b for b in demo_bodies(20, seed=1) if b["format"] == "anthropic.messages")
    store_bodies([body])
    conversation = Conversation.objects.get(external_id=body["conversation"])
    _, token = service_token_create(name="bench-live")
    admin = get_user_model().objects.create_superuser("bench-live", "b@example.com", "x" * 20)
    client = Client()
    client.force_login(admin)
    session = client.cookies["sessionid"].value
    return (
        env,
        conversation.pk,
        conversation.external_id,
        conversation.customer_external_id,
        token,
        session,
    )


def serve_profiled(port: int, out: str) -> int:
    """uvicorn in this process under cProfile (``--profile``): the stats to ``out`` at its end."""
    import cProfile
    import signal

    import uvicorn

    config = uvicorn.Config(
        "console.asgi:application", host=HOST, port=port, log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    # uvicorn re-raises SIGTERM once it has stopped, which would end the process before the dump.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "should_exit", True))
    profiler = cProfile.Profile()
    profiler.enable()
    server.run()
    profiler.disable()
    profiler.dump_stats(out)
    return 0


def print_profile(path: Path) -> None:
    import pstats

    for order in ("tottime", "cumulative"):
        print(f"\n--- profile of the server, top 40 by {order} ---")
        pstats.Stats(str(path), stream=sys.stdout).sort_stats(order).print_stats(40)


def start_server(
    env: dict[str, str], port: int, log: Path, profile: Path | None = None
) -> subprocess.Popen[bytes]:
    command = [str(UVICORN), "console.asgi:application", "--host", HOST, "--port", str(port)]
    command += ["--no-access-log", "--log-level", "warning"]
    if profile is not None:
        command = [sys.executable, __file__, "--serve-profiled", str(port), str(profile)]
    server_env = {**os.environ, **env, "DJANGO_SETTINGS_MODULE": "console.settings"}
    # Every viewer is the same admin's session: the per-session stream limit would refuse all
    # but the first few (429), and the run would wait for them forever.
    server_env["LIVE_MAX_STREAMS_PER_SESSION"] = "100000"
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=server_env, stdout=out, stderr=out, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchError(f"uvicorn exited: {log.read_text()[-2000:]}")
        try:
            httpx.get(f"http://{HOST}:{port}/login/", timeout=2)
            return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise BenchError("uvicorn did not answer within 60 s")


async def viewer(
    base: str,
    pk: int,
    session: str,
    arrivals: list[dict[int, float]],
    ready: asyncio.Event,
    connected: list[int],
    expected: int,
) -> None:
    """One SSE viewer on a socket of its own: HTTP/1.1 read by hand (the chunked body, the
    frames split on blank lines), the arrival time taken as each piece of the body is read, before
    any parsing. 200 viewers share this process's one core with the poster: a full HTTP client
    per viewer measured the client more than the server (``httpx``'s line iterator cost about as
    much per event as the server's whole relay)."""
    seen: dict[int, float] = {}
    arrivals.append(seen)
    url = urlsplit(base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    try:
        writer.write(
            f"GET /conversations/{pk}/live HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Cookie: sessionid={session}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status != 200:
            raise BenchError(f"viewer got {status}")
        chunked = b"transfer-encoding: chunked" in head.lower()
        connected.append(1)
        pending = b""
        while True:
            if chunked:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    return
                data = (await reader.readexactly(size + 2))[:-2]
            else:
                data = await reader.read(65536)
                if not data:
                    return
            now = time.perf_counter()
            *frames, pending = (pending + data).split(b"\n\n")
            for frame in frames:
                for line in frame.split(b"\n"):
                    if line.startswith(b"retry:"):
                        ready.set()
                    elif line.startswith(b"data: "):
                        event = json.loads(line[6:])
                        if event["type"] == "text":
                            seen[int(event["text"].split()[-1])] = now
                        if event["type"] in ("finished", "error") or len(seen) >= expected:
                            return
    finally:
        writer.close()


def post_all(
    base: str,
    token: str,
    body: dict[str, Any],
    parts: list[str],
    starts: list[float],
    posts: list[float],
    rate: float,
) -> None:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as c:
        t0 = time.perf_counter()
        for seq, chunk in enumerate(parts):
            if rate:  # paced: chunk k at t0 + k / rate (or at once when behind)
                time.sleep(max(0.0, t0 + seq / rate - time.perf_counter()))
            starts.append(time.perf_counter())
            r = c.post("/api/v1/live/chunks", json={**body, "seq": seq, "chunk": chunk})
            posts.append((time.perf_counter() - starts[-1]) * 1000)
            if r.status_code != 202 or r.json()["status"] not in ("published", "held"):
                raise BenchError(f"chunk {seq}: {r.status_code} {r.text[:200]}")


async def live_run(
    base: str,
    pk: int,
    session: str,
    body: dict[str, Any],
    token: str,
    viewers: int,
    deltas: int,
    rate: float = 0.0,
) -> tuple[list[float], list[float], float]:
    arrivals: list[dict[int, float]] = []
    connected: list[int] = []
    ready = asyncio.Event()
    tasks = [
        asyncio.create_task(viewer(base, pk, session, arrivals, ready, connected, deltas))
        for _ in range(viewers)
    ]
    while len(connected) < viewers:
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)  # every viewer subscribed (the backlog read)
    parts = chunks(deltas)
    starts: list[float] = []
    posts: list[float] = []
    thread = threading.Thread(target=post_all, args=(base, token, body, parts, starts, posts, rate))
    t0 = time.perf_counter()
    thread.start()
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=600)
    thread.join()
    seconds = time.perf_counter() - t0
    delays = []
    for seen in arrivals:
        for k, at in seen.items():
            # delta k is published by the POST of delta k + 1 (chunk k + 2: the head is chunk 0);
            # the last delta by the closing chunk
            post = min(k + 2, len(starts) - 1)
            delays.append((at - starts[post]) * 1000)
    return delays, posts, len(parts) / seconds


async def redis_run(url: str, subscribers: int, messages: int, rate: float) -> list[float]:
    """``subscribers`` bare subscribers of one channel, ``messages`` published one at a time at
    ``rate`` a second (the live run's own pace: a burst would time the subscribers' queue)."""
    import redis.asyncio as aioredis

    channel = "bench-live-baseline"
    clients = [aioredis.from_url(url) for _ in range(subscribers)]
    subs = [c.pubsub() for c in clients]
    for s in subs:
        await s.subscribe(channel)
        await s.get_message(timeout=1)
    delays: list[float] = []
    sent: dict[int, float] = {}

    async def listen(s: Any) -> None:
        got = 0
        while got < messages:
            m = await s.get_message(ignore_subscribe_messages=True, timeout=30)
            if m is None:
                raise BenchError("a Redis subscriber timed out")
            now = time.perf_counter()
            k = int(m["data"])
            delays.append((now - sent[k]) * 1000)
            got += 1

    publisher = aioredis.from_url(url)
    tasks = [asyncio.create_task(listen(s)) for s in subs]
    t0 = time.perf_counter()
    for k in range(messages):
        await asyncio.sleep(max(0.0, t0 + k / rate - time.perf_counter()))
        sent[k] = time.perf_counter()
        await publisher.publish(channel, str(k))
    await asyncio.gather(*tasks)
    for s in subs:
        await s.aclose()
    for c in [*clients, publisher]:
        await c.aclose()
    return delays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--viewers", type=int, default=200)
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="20 viewers, 200 deltas")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="chunks posted per second (default 0: each as soon as the last was answered)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="the server under cProfile: where its time goes"
    )
    parser.add_argument(
        "--filter-only", action="store_true", help="only the live filter's cost a delta"
    )
    parser.add_argument("--serve-profiled", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_profiled:
        return serve_profiled(int(args.serve_profiled[0]), args.serve_profiled[1])
    logging.getLogger("httpx").setLevel(logging.WARNING)
    if args.quick:
        args.viewers, args.deltas = 20, 200
    if args.filter_only:  # the filter is pure: no database, no Redis, no settings
        report(filter_cost(args.deltas))
        return 0
    # Keys and channels of this run only (a database made afresh reuses conversation ids).
    os.environ["CACHE_KEY_PREFIX"] = f"bench-live-{os.getpid()}-{int(time.time())}"
    env, pk, external, customer, token, session = prepare()
    filter_rows = filter_cost(args.deltas)
    from bench.ingest_api import free_port

    port = free_port()
    log = ROOT / "var" / "bench-live-uvicorn.log"
    log.parent.mkdir(exist_ok=True)
    profile = ROOT / "var" / "bench-live-server.prof" if args.profile else None
    if profile is not None:
        profile.unlink(missing_ok=True)
    server = start_server(env, port, log, profile)
    base = f"http://{HOST}:{port}"
    body = {
        "conversation": external,
        "customer": customer,
        "format": "anthropic.messages",
        "exchange": "bench-1",
    }
    try:
        live, posts, rate_ = asyncio.run(
            live_run(base, pk, session, body, token, args.viewers, args.deltas, args.rate)
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
    if profile is not None:
        print_profile(profile)
    bare = asyncio.run(redis_run(env["REDIS_URL"], args.viewers, args.deltas, rate_))
    gap = percentile(live, 99) - percentile(bare, 99)
    report(
        [
            ("viewers x deltas", f"{args.viewers} x {args.deltas}"),
            ("posting", f"{args.rate:g} chunks/s" if args.rate else "as fast as answered"),
            ("chunk POST -> viewer p50", f"{percentile(live, 50):.1f} ms"),
            ("chunk POST -> viewer p99", f"{percentile(live, 99):.1f} ms"),
            ("bare Redis pub/sub p50", f"{percentile(bare, 50):.1f} ms"),
            ("bare Redis pub/sub p99", f"{percentile(bare, 99):.1f} ms"),
            ("chunks/s posted", f"{rate_:.0f}"),
            (
                "chunk POST round trip p50/p99",
                f"{percentile(posts, 50):.1f} / {percentile(posts, 99):.1f} ms",
            ),
            (
                "p99 live - p99 bare",
                f"{gap:.1f} ms (target <= {TARGET_MS:.0f} ms: "
                + ("met)" if gap <= TARGET_MS else "NOT met)"),
            ),
            ("hold-back at 50 tokens/s", "48 characters ~ 0.24 s of the provider's pace"),
            *filter_rows,
        ]
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
