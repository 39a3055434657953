"""Replay (``GET /api/v1/conversations/{id}/messages``) of a 200-message conversation, against the
SQL that fetches its stored rows.

What it measures: a Chat Completions conversation of 50 turns (question, tool call, tool result,
answer: 1 + 4 x 50 = 201 messages, ``bench.console.long_conversation``) is stored through the
ingest pipeline among ``--conversations`` demo conversations (four provider formats), and the
replay endpoint is requested ``--requests`` times through Django's test ``Client`` with a service
token (in process: no server, no network): token lookup, the conversation, its current messages'
ciphertext, its data key from the keys database, AES-GCM decryption of every message, and the
byte-exact envelope. The first response is checked: 201 messages, each byte-identical to the
message as the chat backend sent it.

The baseline, alternated with the requests (both see the same load): the SQL that fetches the
same rows, ``SELECT sequence, raw_ciphertext FROM conversations_message WHERE conversation_id = %s
AND NOT superseded ORDER BY sequence``, run through ``connection.cursor()`` and fetched.

How to read the output: p50/p95 of the replay in milliseconds, the SQL's p95, and ``replay/SQL``
(replay p95 over SQL p95): what authentication, the key, decryption and the response cost on top
of reading the rows. The figure to track is the replay's p95 for 200 messages (DESIGN section 8).

    .venv/bin/python bench/replay.py [--conversations 2000] [--requests 200] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    BenchError,
    percentile,
    report,
    run_benchmark,
    setup_django,
    store_bodies,
    truncate_conversations,
)
from bench.console import long_conversation

TURNS = 50  # 1 + 4 x 50 = 201 messages
WARMUP = 5
ROWS_SQL = (
    "SELECT sequence, raw_ciphertext FROM conversations_message "
    "WHERE conversation_id = %s AND NOT superseded ORDER BY sequence"
)


def sent_messages(bodies: list[dict[str, Any]]) -> list[bytes]:
    """The messages as the chat backend sent them, compact JSON: the last request's history and
    its response's message (what replay must give back, byte for byte)."""
    last = bodies[-1]
    history = json.loads(last["request"])["messages"]
    answer = json.loads(last["response"])["choices"][0]["message"]
    return [json.dumps(m, separators=(",", ":"), ensure_ascii=False).encode() for m in history] + [
        json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=2000, help="demo conversations")
    parser.add_argument("--requests", type=int, default=200, help="replay requests")
    parser.add_argument("--quick", action="store_true", help="200 conversations, 50 requests")
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations, args.requests = 200, 50

    setup_django()
    truncate_conversations()
    from django.db import connection
    from django.test import Client

    from conversations.demo import demo_bodies
    from conversations.models import Conversation
    from conversations.services import service_token_create

    store_bodies(demo_bodies(args.conversations))
    long = list(long_conversation(TURNS, "billing"))
    store_bodies(long)
    conversation = Conversation.objects.get(external_id=long[0]["conversation"])
    _, token = service_token_create(name="bench-replay")
    client = Client(SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {token}")
    url = f"/api/v1/conversations/{conversation.external_id}/messages"

    response = client.get(url)
    if response.status_code != 200:
        raise BenchError(f"GET {url}: {response.status_code}")
    expected = sent_messages(long)
    if response.content != b'{"messages":[' + b",".join(expected) + b"]}":
        raise BenchError("the replay is not byte-identical to the messages sent")
    messages = len(expected)

    def replay() -> float:
        start = time.perf_counter()
        client.get(url)
        return (time.perf_counter() - start) * 1000

    def rows() -> float:
        with connection.cursor() as cur:
            start = time.perf_counter()
            cur.execute(ROWS_SQL, [conversation.pk])
            fetched = cur.fetchall()
            elapsed = (time.perf_counter() - start) * 1000
        if len(fetched) != messages:
            raise BenchError(f"the SQL fetched {len(fetched)} rows, expected {messages}")
        return elapsed

    for _ in range(WARMUP):
        replay(), rows()
    timings = [(replay(), rows()) for _ in itertools.repeat(None, args.requests)]
    pages = [t[0] for t in timings]
    sqls = [t[1] for t in timings]
    p95, sql_p95 = percentile(pages, 95), percentile(sqls, 95)
    report(
        [
            (
                "conversation",
                f"{messages} messages, {len(response.content) / 1e3:.0f} kB replayed, "
                f"byte-identical",
            ),
            ("requests", f"{args.requests} (after {WARMUP} warm-up)"),
            ("replay p50 / p95", f"{percentile(pages, 50):.1f} ms / {p95:.1f} ms"),
            ("baseline: SQL of the rows p95", f"{sql_p95:.2f} ms"),
            ("ratio replay/SQL (p95)", f"{p95 / sql_p95:.1f}"),
            ("replay p95 per message", f"{p95 / messages * 1000:.0f} µs"),
        ]
    )
    return 0


if __name__ == "__main__":
    run_benchmark(main)
