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

How to read the output: p50 and p99 of each, in ms, for both clients, the ratio
instrumented/plain, and the p99 time to first token the client adds (instrumented p99 minus
plain p99; target: under 1 ms). ``--first-byte-ms 0 --chunk-ms 0`` is the worst case: the
background post of one exchange then overlaps the next call's first token on the same cores.

    .venv/bin/python bench/client.py [--calls 400] [--first-byte-ms 20] [--chunk-ms 1] [--quick]
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

from bench.common import ROOT, BenchError, percentile, setup_django
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


def row(name: str, ttft: list[float], total: list[float]) -> str:
    cells = [percentile(v, p) * 1000 for v in (ttft, total) for p in (50, 99)]
    return f"{name:<14} " + " ".join(f"{c:>10.2f}" for c in cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="streamed calls per client")
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
    if args.quick:
        args.calls, args.warmup = 100, 10

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
                times: dict[str, tuple[list[float], list[float]]] = {
                    "plain": ([], []),
                    "instrumented": ([], []),
                }
                for i in range(args.warmup + args.calls):
                    # Alternate, so load on the machine weighs on both alike.
                    order = [("plain", plain), ("instrumented", instrumented)]
                    with console_client.conversation(f"bench-{i}", customer="bench-customer"):
                        for name, client in order if i % 2 else reversed(order):
                            ttft, total = one_call(client, f"bench-{i}")
                            if i >= args.warmup:
                                times[name][0].append(ttft)
                                times[name][1].append(total)
                delivered = console_client.flush(timeout=120)
                counts = console_client.counters()
                plain.close()
                instrumented.close()
        finally:
            assert provider.stdin is not None
            provider.stdin.close()
            provider.wait(timeout=10)

    print(
        f"{args.calls} streamed calls per client, provider: {args.first_byte_ms:g} ms to the "
        f"first byte, {args.chunk_ms:g} ms between {args.chunk}-byte chunks; {os.cpu_count()} cores"
    )
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
    print(f"p99 TTFT added: {added:+.3f} ms (target < {TARGET_ADDED_P99_MS:g} ms): {verdict}")
    print(f"delivery: {counts.as_dict()}")
    expected = args.warmup + args.calls
    if not delivered or counts.sent != expected:
        print(f"error: {counts.sent} of {expected} exchanges reached the console", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
