"""What ``console_client`` adds to a streamed provider call: time to first token and total time,
instrumented vs not, in the same run.

What it measures: a fake Anthropic provider in a process of its own (``tests/client/provider.py``:
a recorded stream with thinking and text, sent in chunks, with a pause before the first byte and
between chunks like a real provider's) and a real console (gunicorn on the bench database, as in
``ingest_api.py``). Two ``anthropic.Anthropic`` clients, one instrumented with ``console_client``
(posting every exchange to the console from its background thread), the other not, take turns
call by call, ``--calls`` streamed calls each, inside ``console_client.conversation()``. Time to
first token: from the call to the first ``content_block_delta`` event the SDK yields; total: to
the end of the stream. At the end the instrumented exchanges are flushed and must all have
reached the console (else exit 1).

Then the same alternation again with the provider in process (an ``httpx2.MockTransport``
answering with the same stream, chunk by chunk, no network, no pause): what is left of a call is
the SDK's and the client's own work, so the difference is the client's cost on the chat path
without the network's noise (the posts to the console still run, and share the cores).

How to read the output: p50 and p99 of each, in ms, for both clients, the ratio
instrumented/plain, and the p99 time to first token the client adds (instrumented p99 minus
plain p99; target: under 1 ms). On a shared machine the network run's p99 swings by several
milliseconds between runs either way; the in-process run is the precise one.
``--first-byte-ms 0 --chunk-ms 0`` is the worst case for the network run: the background post
of one exchange then overlaps the next call's first token on the same cores.

    .venv/bin/python bench/client.py [--calls 400] [--mock-calls 2000] [--first-byte-ms 20]
        [--chunk-ms 1] [--quick]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, BenchError, percentile, run_benchmark, setup_django
from bench.ingest_api import gunicorn

TARGET_ADDED_P99_MS = 1.0
FIXTURE = (
    ROOT / "tests" / "fixtures" / "providers" / "vercel-ai__anthropic-clear-thinking.1.chunks.txt"
)


def anthropic_sse() -> bytes:
    """The recording with the ``event:`` lines Anthropic sends (its SDK reads named events)."""
    import json

    out = []
    for line in FIXTURE.read_text().splitlines():
        if line.strip():
            out.append(f"event: {json.loads(line)['type']}\ndata: {line}\n\n")
    return "".join(out).encode()


def start_provider(body: Path, args: argparse.Namespace) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.client.provider",
            str(body),
            "--sse",
            "--chunk",
            str(args.chunk),
            "--first-byte-ms",
            str(args.first_byte_ms),
            "--chunk-ms",
            str(args.chunk_ms),
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        raise BenchError(f"the fake provider did not start: {url!r}")
    return process, url


def one_call(client: object, model: str) -> tuple[float, float]:
    """(time to first token, total), seconds."""
    began = time.perf_counter()
    first = None
    with client.messages.create(  # type: ignore[attr-defined]
        model=model,
        max_tokens=1024,
        messages=[{"role": "user", "content": "Where is my parcel?"}],
        stream=True,
    ) as stream:
        for event in stream:
            if first is None and event.type == "content_block_delta":
                first = time.perf_counter()
    end = time.perf_counter()
    if first is None:
        raise BenchError("the stream had no content_block_delta")
    return first - began, end - began


def mock_client(sse: bytes, chunk: int) -> object:
    """An Anthropic client whose provider is in process: the stream in ``chunk``-byte pieces."""
    import anthropic
    import httpx2

    class Chunks(httpx2.SyncByteStream):
        def __iter__(self):  # type: ignore[no-untyped-def]
            for start in range(0, len(sse), chunk):
                yield sse[start : start + chunk]

    def answer(request: httpx2.Request) -> httpx2.Response:
        request.read()
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Chunks())

    return anthropic.Anthropic(
        api_key="sk-fake",
        base_url="http://provider.invalid",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(answer)),
    )


def alternate(
    clients: dict[str, object], calls: int, warmup: int, prefix: str
) -> dict[str, tuple[list[float], list[float]]]:
    import console_client

    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in clients}
    order = list(clients.items())
    for i in range(warmup + calls):
        # Alternate, so load on the machine weighs on both alike.
        with console_client.conversation(f"{prefix}-{i}", customer="bench-customer"):
            for name, client in order if i % 2 else reversed(order):
                ttft, total = one_call(client, f"{prefix}-{i}")
                if i >= warmup:
                    times[name][0].append(ttft)
                    times[name][1].append(total)
    return times


def report(title: str, times: dict[str, tuple[list[float], list[float]]]) -> float:
    """Prints the table; returns the p99 time to first token added, in ms."""
    print(title)
    print(f"{'':<14} {'TTFT p50':>10} {'TTFT p99':>10} {'total p50':>10} {'total p99':>10}  (ms)")
    for name in ("plain", "instrumented"):
        print(row(name, *times[name]))
    (pt, ptot), (it, itot) = times["plain"], times["instrumented"]
    ratios = [
        percentile(i, p) / percentile(b, p) for i, b in ((it, pt), (itot, ptot)) for p in (50, 99)
    ]
    print(f"{'ratio':<14} " + " ".join(f"{r:>10.3f}" for r in ratios))
    added = (percentile(it, 99) - percentile(pt, 99)) * 1000
    verdict = "ok" if added < TARGET_ADDED_P99_MS else "ABOVE TARGET"
    added50 = (percentile(it, 50) - percentile(pt, 50)) * 1000
    print(
        f"TTFT added: p50 {added50:+.3f} ms, p99 {added:+.3f} ms "
        f"(target: p99 < {TARGET_ADDED_P99_MS:g} ms): {verdict}\n"
    )
    return added


def row(name: str, ttft: list[float], total: list[float]) -> str:
    cells = [percentile(v, p) * 1000 for v in (ttft, total) for p in (50, 99)]
    return f"{name:<14} " + " ".join(f"{c:>10.2f}" for c in cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--calls", type=int, default=400, help="streamed calls per client (at least 1)"
    )
    parser.add_argument("--mock-calls", type=int, default=2000, help="calls per client, in process")
    parser.add_argument("--warmup", type=int, default=20, help="calls per client, untimed")
    parser.add_argument(
        "--first-byte-ms", type=float, default=20.0, help="provider's wait before the stream"
    )
    parser.add_argument(
        "--chunk-ms", type=float, default=1.0, help="provider's wait between chunks"
    )
    parser.add_argument("--chunk", type=int, default=200, help="bytes per chunk")
    parser.add_argument("--quick", action="store_true", help="100 calls per client")
    args = parser.parse_args(argv)
    if args.calls < 1 or args.mock_calls < 0:
        parser.error("--calls must be at least 1, --mock-calls at least 0")
    if args.quick:
        args.calls, args.mock_calls, args.warmup = 100, 400, 10

    env = setup_django()
    import logging

    logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per request otherwise
    from conversations.services import service_token_create

    _, token = service_token_create(name="bench-client")
    import anthropic
    import console_client

    with tempfile.TemporaryDirectory(prefix="bench-client-") as tmp:
        body = Path(tmp) / "stream.sse"
        body.write_bytes(anthropic_sse())
        provider, provider_url = start_provider(body, args)
        try:
            with gunicorn(env, 2, Path(tmp) / "gunicorn.log") as port:
                console_url = f"http://127.0.0.1:{port}"
                common = {"api_key": "sk-fake", "base_url": provider_url, "max_retries": 0}
                plain = anthropic.Anthropic(**common)
                instrumented = console_client.instrument(
                    anthropic.Anthropic(**common),
                    url=console_url,
                    token=token,
                    spool_dir=Path(tmp) / "spool",
                )
                network = alternate(
                    {"plain": plain, "instrumented": instrumented}, args.calls, args.warmup, "net"
                )
                sse = body.read_bytes()
                mock_plain = mock_client(sse, args.chunk)
                mock_instrumented = console_client.instrument(
                    mock_client(sse, args.chunk),
                    url=console_url,
                    token=token,
                    spool_dir=Path(tmp) / "spool",
                )
                in_process = alternate(
                    {"plain": mock_plain, "instrumented": mock_instrumented},
                    args.mock_calls,
                    args.warmup,
                    "mock",
                )
                delivered = console_client.flush(timeout=120)
                counts = console_client.counters()
                for client in (plain, instrumented, mock_plain, mock_instrumented):
                    client.close()  # type: ignore[attr-defined]
        finally:
            assert provider.stdin is not None
            provider.stdin.close()
            provider.wait(timeout=10)

    report(
        f"{args.calls} streamed calls per client, provider: {args.first_byte_ms:g} ms to the "
        f"first byte, {args.chunk_ms:g} ms between {args.chunk}-byte chunks; "
        f"{os.cpu_count()} cores",
        network,
    )
    if args.mock_calls:
        report(f"{args.mock_calls} streamed calls per client, provider in process", in_process)
    print(f"delivery: {counts.as_dict()}")
    expected = 2 * args.warmup + args.calls + args.mock_calls
    if not delivered or counts.sent != expected:
        print(f"error: {counts.sent} of {expected} exchanges reached the console", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    run_benchmark(main)
