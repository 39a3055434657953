"""Live chunks: what one chunk costs as an exchange's unread stream grows.

What it measures: ``live_chunk_ingest`` (the service ``POST /api/v1/live/chunks`` calls: the
filter, the sealed state, the Redis round trips), against the bench database and Redis, for
``--chunks`` in-order chunks of ``--size`` characters that end no SSE event (one event cut in
many chunks: a large tool input, or a sender that never sends a blank line), then the chunk that
ends it; and as many chunks sent early (each held until its gap fills), then the one that fills
the gap. Each chunk is timed alone, ``--rounds`` times (a fresh exchange each round; the median
per position is kept).

How to read the output: the cost of chunk 1 and of chunk N, and their ratio, in the same run:
a chunk should cost what it adds (target: ratio under 2), not a rewrite of everything before it
(before issue 29 the whole state was one JSON value rewritten per chunk: 29 ms to 255 ms over
40 chunks of 256 KiB). Also printed: the size of the exchange's small state after chunk N (it
should not grow with the stream), and the one chunk that reads it all (ends the event).

    .venv/bin/python bench/live_chunks.py [--chunks 40] [--size 262144] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import report, run_benchmark, setup_django


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=40)
    parser.add_argument("--size", type=int, default=256 * 1024)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    setup_django()
    from django.conf import settings

    from bench.common import store_bodies
    from conversations.demo import demo_bodies
    from conversations.live import state
    from conversations.live.body import ChunkInput
    from conversations.live.services import live_chunk_ingest
    from conversations.models import Conversation

    settings.LIVE_MAX_STATE_CHARS = args.chunks * args.size * 2  # the bench measures, not bounds
    settings.LIVE_MAX_CHUNK_CHARS = args.size
    settings.LIVE_KEY_PREFIX = "bench-live-chunks"
    body = next(b for b in demo_bodies(20, seed=1) if b["format"] == "anthropic.messages")
    store_bodies([body])
    c = Conversation.objects.get(external_id=body["conversation"])
    head = 'event: message_start\ndata: {"type": "message_start", "message": {"id": "m"}}\n\n'
    piece = "x" * args.size

    def send(exchange: str, seq: int, chunk: str) -> float:
        data = ChunkInput(c.external_id, c.customer_external_id, "anthropic.messages",
                          exchange, seq, chunk)  # fmt: skip
        t0 = time.perf_counter()
        live_chunk_ingest(conversation_id=c.pk, data=data)
        return time.perf_counter() - t0

    in_order: list[list[float]] = [[] for _ in range(args.chunks)]
    early: list[list[float]] = [[] for _ in range(args.chunks)]
    ends, fills, small = [], [], 0
    for r in range(args.rounds):
        name = f"order-{r}"
        send(name, 0, head + "event: ping\ndata: ")
        for i in range(args.chunks):
            in_order[i].append(send(name, i + 1, piece))
        kept: Any = state.client().get(state.key("x", state.exchange_hash(c.pk, name)))
        small = len(kept or b"")
        ends.append(send(name, args.chunks + 1, "\n\n"))
        state.mark_closed(c.pk, state.exchange_hash(c.pk, name))
        name = f"early-{r}"
        for i in range(args.chunks):
            early[i].append(send(name, i + 1, piece))
        fills.append(send(name, 0, head))
        state.mark_closed(c.pk, state.exchange_hash(c.pk, name))
    ms = [statistics.median(t) * 1000 for t in in_order]
    held = [statistics.median(t) * 1000 for t in early]
    n = args.chunks
    report(
        [
            (f"in order, chunk 1 of {args.size} chars", f"{ms[0]:.2f} ms"),
            (f"in order, chunk {n}", f"{ms[-1]:.2f} ms"),
            (f"ratio chunk {n} / chunk 1", f"{ms[-1] / ms[0]:.2f} (target < 2)"),
            (f"small state after chunk {n}", f"{small} bytes"),
            (
                f"the chunk ending the event ({n} chunks read)",
                f"{statistics.median(ends) * 1000:.2f} ms",
            ),
            ("early, chunk 1 held", f"{held[0]:.2f} ms"),
            (f"early, chunk {n} held", f"{held[-1]:.2f} ms"),
            (f"ratio held chunk {n} / held chunk 1", f"{held[-1] / held[0]:.2f} (target < 2)"),
            (
                f"the chunk filling the gap ({n} held read)",
                f"{statistics.median(fills) * 1000:.2f} ms",
            ),
        ]
    )
    return 0


if __name__ == "__main__":
    run_benchmark(main)
