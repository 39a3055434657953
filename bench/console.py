"""Console pages (list, search, conversation) on a large store, against the raw SQL of their rows.

What it measures: ``--conversations`` demo conversations (``conversations.demo.demo_bodies``:
four provider formats, tool calls, reasoning; 1.5 exchanges each on average) are written as
JSONL and loaded with ``call_command("ingest")`` (the seeding is timed and printed), plus three
long Chat Completions conversations (10, 50 and 100 turns of question, tool call, tool result
and answer) for the query counts. A bulk ingest stamps a batch's conversations with one arrival
time, so each conversation's ``last_activity_at`` is then set to when its last exchange answered
(as if it had arrived live: one value per conversation), and the tables are ``VACUUM ANALYZE``d
(the state autovacuum reaches on its own). An admin (superuser) and a support agent granted two
of the four queues (``billing``, ``shipping``: about half of the conversations) are created, and
Django's test ``Client`` (``force_login``, in process: no server, no network) requests,
``--requests`` times each after a few warm-up requests:

- ``list, first page``: ``/`` as the agent;
- ``list, deep``: ``/?after=<cursor>`` where the cursor is the one the page itself emits for the
  agent's row 150 from the end of the list (checked against the "Older conversations" links of
  the first pages);
- ``search "refund"``: ``/?q=refund`` as the agent (about half the conversations match);
- ``conversation page``: ``/conversations/<pk>/`` for random conversations the agent may see;
- ``list, first page (admin)``: ``/`` as the admin, who sees every queue.

Every page runs the whole stack: session, user and group lookups, the guardian queue subquery,
the flag subqueries, the template, and the audit row each view writes (hash chain included).

The baseline, beside each page: the p95 of the raw SQL that fetches the same rows, run through
``connection.cursor()`` and fetched: for the list, the SELECT of the 51 newest conversations of
the agent's queues (``queue IN (...)`` ordered by ``last_activity_at DESC, id DESC``; deep: with
``(last_activity_at, id) < cursor``); for search, the same with an ``EXISTS`` over
``conversations_block.search @@ websearch_to_tsquery('english', 'refund')``; for the
conversation page, the SELECTs of the conversation, its current messages (without
``raw_ciphertext``) and its blocks, for the same conversations. The page's links are checked
to name the rows the SQL returns.

How to read the output: p50/p95 of each page in milliseconds, the SQL's p95, and
``page/SQL = page p95 / SQL p95`` (page requests and SQL runs alternate, so that both see the
same load on a shared machine): what the framework, the permissions, the template and the
audit row cost on top of fetching the rows. Absolute times vary with the machine; the ratio, and
that the deep page and the first page cost the same, much less. The query counts per page
(``CaptureQueriesContext``, both databases) must not grow with the conversation's length or the
depth in the list (DESIGN section 8): the script exits 1 when they do, 2 when a page fails
or lists other rows than the SQL.

    .venv/bin/python bench/console.py [--conversations 100000] [--requests 200] [--quick]
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import logging
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BenchError, Stopwatch, percentile, rate, report, setup_django

GRANTED = ("billing", "shipping")  # two of the demo's four queues
PAGE = 50  # conversation_list's page size
DEEP_FROM_END = 150  # the deep page starts this many rows before the end of the agent's list
WARMUP = 5
LONG_TURNS = (10, 50, 100)  # turns of the long conversations: 4 messages a turn, plus a system one
SEARCH = "refund"
LINK = re.compile(r'href="/conversations/(\d+)/"')
NEXT = re.compile(r'href="\?([^"]*)" rel="next"')


# --- seeding ---------------------------------------------------------------------------------


def long_conversation(turns: int, queue: str) -> Iterator[dict[str, Any]]:
    """A Chat Completions conversation of ``turns`` turns (question, tool call, tool result,
    answer), two exchanges a turn, each request carrying the whole history: 1 + 4 x turns
    messages."""
    conversation = f"conv_long_{turns}"
    started = datetime(2026, 10, 1, 9, tzinfo=UTC)
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful support assistant for an online shop."}
    ]

    def body(
        request_messages: list[dict[str, Any]], message: dict[str, Any], finish: str, step: int
    ):
        request = {"model": "gpt-4.1-mini", "messages": request_messages, "max_tokens": 1024}
        response = {
            "id": f"chatcmpl-long{turns}-{step}",
            "object": "chat.completion",
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 100 + 40 * step, "completion_tokens": 40},
        }
        return {
            "conversation": conversation,
            "customer": f"cus_long_{turns}",
            "format": "openai.chat",
            "request": json.dumps(request, separators=(",", ":")),
            "response": json.dumps(response, separators=(",", ":")),
            "started_at": (started + timedelta(seconds=30 * step)).isoformat(),
            "latency_ms": 1200,
            "labels": {"queue": queue},
        }

    for turn in range(turns):
        order = f"ORD-{5_000_000 + turn}"
        call_id = f"call_long{turns}_{turn}"
        history.append(
            {"role": "user", "content": f"Where is my order {order}? I may want a refund."}
        )
        call = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": "lookup_order",
                        "arguments": json.dumps({"order_id": order}),
                    },
                }
            ],
        }
        yield body(list(history), call, "tool_calls", 2 * turn)
        history.append(call)
        result = {"order_id": order, "status": "shipped", "carrier": "DHL"}
        history.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)})
        answer = {
            "role": "assistant",
            "content": f"Your order {order} has shipped with DHL; no refund is needed yet.",
        }
        yield body(list(history), answer, "stop", 2 * turn + 1)
        history.append(answer)


# A bulk ingest stamps a whole batch's conversations with the batch's time (arrival time):
# a few hundred distinct values where a live store has one per conversation. Each conversation
# gets the time its last exchange answered, as if the exchanges had arrived live.
SPREAD_ACTIVITY = """
    UPDATE conversations_conversation AS c
    SET last_activity_at = e.at
    FROM (SELECT conversation_id,
                 max(started_at + make_interval(secs => coalesce(latency_ms, 0) / 1000.0)) AS at
          FROM conversations_exchange GROUP BY conversation_id) AS e
    WHERE c.id = e.conversation_id
"""


def write_bodies(path: Path, conversations: int) -> int:
    """The demo bodies of ``conversations`` conversations and the long ones, as JSONL; returns
    the number of lines."""
    from conversations.demo import demo_bodies

    lines = 0
    bodies = itertools.chain(
        demo_bodies(conversations), *(long_conversation(t, GRANTED[0]) for t in LONG_TURNS)
    )
    with path.open("w", encoding="utf-8") as out:
        for body in bodies:
            out.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
            out.write("\n")
            lines += 1
    return lines


def seed(conversations: int) -> list[tuple[str, str]]:
    from django.core.management import CommandError, call_command
    from django.db import connection

    from conversations.models import Block, Conversation, Exchange, Message

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        path = Path(tmp) / "exchanges.jsonl"
        with Stopwatch() as generate:
            lines = write_bodies(path, conversations)
        size = path.stat().st_size
        out, err = io.StringIO(), io.StringIO()
        try:
            with Stopwatch() as ingest:
                call_command("ingest", str(path), "--no-progress", stdout=out, stderr=err)
        except CommandError as exc:
            raise BenchError(f"ingest failed: {exc}\n{err.getvalue()[:2000]}") from exc
    with Stopwatch() as spread, connection.cursor() as cur:
        cur.execute(SPREAD_ACTIVITY)
    with Stopwatch() as vacuum, connection.cursor() as cur:
        for model in (Conversation, Exchange, Message, Block):
            cur.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    stored = Conversation.objects.count()
    if stored != conversations + len(LONG_TURNS):
        raise BenchError(
            f"ingest stored {stored} of {conversations + len(LONG_TURNS)} conversations"
        )
    rows.append(
        (
            "seeding",
            f"{stored:,} conversations, {Exchange.objects.count():,} exchanges, "
            f"{Message.objects.count():,} messages, {Block.objects.count():,} blocks",
        )
    )
    rows.append(
        ("  JSONL written", f"{generate.seconds:.1f} s ({lines:,} lines, {size / 1e6:.0f} MB)")
    )
    rows.append(
        (
            "  ingest",
            f"{ingest.seconds:.1f} s ({rate(lines, ingest.seconds):,.0f} exchanges/s)",
        )
    )
    rows.append(("  last_activity_at spread", f"{spread.seconds:.1f} s"))
    rows.append(("  VACUUM ANALYZE", f"{vacuum.seconds:.1f} s"))
    seconds = generate.seconds + ingest.seconds + spread.seconds + vacuum.seconds
    rows.append(("  total", f"{seconds:.1f} s"))
    return rows


def make_users() -> tuple[Any, Any]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.db import transaction

    from conversations.services import queue_grant

    call_command("setup_roles", stdout=io.StringIO())
    user_model = get_user_model()
    admin = user_model.objects.create_superuser("bench-admin", "admin@example.com", "unused-pw")
    agent = user_model.objects.create_user("bench-agent", "agent@example.com", "unused-pw")
    agent.groups.add(Group.objects.get(name="support_agent"))
    with transaction.atomic():  # queue_grant writes an audit row: it needs a transaction
        for name in GRANTED:
            queue_grant(principal=agent, queue_name=name, actor=admin)
    return admin, agent


# --- measuring -------------------------------------------------------------------------------


def client_for(user: Any) -> Any:
    from django.test import Client

    # In process, no server: "localhost" is in the default ALLOWED_HOSTS ("testserver" is not,
    # and setup_test_environment would instrument the templates).
    client = Client(SERVER_NAME="localhost")
    client.force_login(user)
    return client


def get(client: Any, url: str, status: int = 200) -> str:
    response = client.get(url)
    if response.status_code != status:
        raise BenchError(f"GET {url}: {response.status_code}, expected {status}")
    return response.content.decode()


def time_interleaved(
    client: Any, urls: list[str], runs: list[Callable[[Any], None]]
) -> tuple[list[float], list[float]]:
    """Milliseconds per page request and per SQL run (each executes and fetches its
    statements), alternated so that both see the same load on a shared machine; after WARMUP
    untimed rounds."""
    from django.db import connection

    def sql(run: Callable[[Any], None]) -> float:
        with connection.cursor() as cur:
            start = time.perf_counter()
            run(cur)
            return (time.perf_counter() - start) * 1000

    def page(url: str) -> float:
        start = time.perf_counter()
        get(client, url)
        return (time.perf_counter() - start) * 1000

    for url, run in list(zip(urls, runs, strict=True))[:WARMUP]:
        page(url)
        sql(run)
    pages, sqls = [], []
    for url, run in zip(urls, runs, strict=True):
        pages.append(page(url))
        sqls.append(sql(run))
    return pages, sqls


def columns(model: Any, alias: str = "", exclude: tuple[str, ...] = ()) -> str:
    prefix = f"{alias}." if alias else ""
    return ", ".join(
        f"{prefix}{f.column}" for f in model._meta.concrete_fields if f.name not in exclude
    )


def list_sql(*, queues: tuple[str, ...] | None, after: bool, search: bool) -> str:
    from conversations.models import Block, Conversation

    where = []
    if queues is not None:
        where.append(f"c.queue IN ({', '.join(['%s'] * len(queues))})")
    if after:
        where.append("(c.last_activity_at, c.id) < (%s, %s)")
    if search:
        where.append(
            f"EXISTS (SELECT 1 FROM {Block._meta.db_table} b "  # noqa: S608
            "WHERE b.conversation_id = c.id "
            "AND b.search @@ websearch_to_tsquery('english', %s))"
        )
    return (
        f"SELECT {columns(Conversation, 'c')} FROM {Conversation._meta.db_table} c"  # noqa: S608
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + f" ORDER BY c.last_activity_at DESC, c.id DESC LIMIT {PAGE + 1}"
    )


def list_run(sql: str, params: list[Any]) -> Callable[[Any], None]:
    def run(cur: Any) -> None:
        cur.execute(sql, params)
        cur.fetchall()

    return run


def page_sql() -> tuple[str, str, str]:
    from conversations.models import Block, Conversation, Message

    return (
        f"SELECT {columns(Conversation)} FROM {Conversation._meta.db_table} "  # noqa: S608
        "WHERE id = %s",
        f"SELECT {columns(Message, exclude=('raw_ciphertext',))} "  # noqa: S608
        f"FROM {Message._meta.db_table} WHERE conversation_id = %s AND NOT superseded "
        "ORDER BY sequence",
        f"SELECT {columns(Block)} FROM {Block._meta.db_table} "  # noqa: S608
        "WHERE conversation_id = %s ORDER BY message_id, position",
    )


def page_run(pk: int) -> Callable[[Any], None]:
    statements = page_sql()

    def run(cur: Any) -> None:
        for sql in statements:
            cur.execute(sql, [pk])
            cur.fetchall()

    return run


def sql_ids(sql: str, params: list[Any]) -> list[int]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(sql, params)
        return [row[0] for row in cur.fetchall()][:PAGE]  # id is the first column


def page_ids(html: str) -> list[int]:
    return [int(pk) for pk in LINK.findall(html)]


def query_count(client: Any, url: str) -> int:
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    with (
        CaptureQueriesContext(connections["default"]) as default,
        CaptureQueriesContext(connections["keys"]) as keys,
    ):
        get(client, url)
    return len(default) + len(keys)


@dataclass(frozen=True)
class Row:
    name: str
    page: list[float]
    sql: list[float]

    def line(self) -> str:
        p50, p95 = percentile(self.page, 50), percentile(self.page, 95)
        sql95 = percentile(self.sql, 95)
        return (
            f"{self.name:<27} {p50:8.1f} {p95:8.1f} {sql95:9.2f} {p95 / sql95:9.1f}x"
            f" {len(self.page):5d}"
        )


def cursor_of(pk: int) -> tuple[str, datetime]:
    """The list's own cursor for a conversation: what its "Older conversations" link carries."""
    from conversations.models import Conversation
    from conversations.selectors import _cursor

    row = Conversation.objects.only("last_activity_at").get(pk=pk)
    return _cursor(row), row.last_activity_at


def check_cursor_links(client: Any, queues: tuple[str, ...]) -> None:
    """Follow the first pages' "Older conversations" links: each names the cursor of its page's
    last row, and the next page continues the SQL's order."""
    from urllib.parse import parse_qs

    url, last_id = "/", None
    for _ in range(3):
        html = get(client, url)
        ids = page_ids(html)
        if last_id is not None:
            at = cursor_of(last_id)[1]
            expected = sql_ids(
                list_sql(queues=queues, after=True, search=False), [*queues, at, last_id]
            )
            if ids != expected:
                raise BenchError(f"page after {last_id}: {ids[:3]}..., the SQL {expected[:3]}...")
        match = NEXT.search(html)
        if match is None or len(ids) != PAGE:
            raise BenchError(f"{url}: {len(ids)} rows and no next link")
        query = match.group(1).replace("&amp;", "&")
        if parse_qs(query)["after"] != [cursor_of(ids[-1])[0]]:
            raise BenchError(f"{url}: the next link's cursor is not the last row's")
        url, last_id = f"/?{query}", ids[-1]


def measure(admin: Any, agent: Any, requests: int, rng: random.Random) -> list[Row]:
    from django.db import connection

    agent_client, admin_client = client_for(agent), client_for(admin)
    rows = []

    # The agent's list, in order: its ids, for the deep cursor and the random pages.
    with connection.cursor() as cur:
        cur.execute(
            "SELECT id FROM conversations_conversation WHERE queue = ANY(%s) "
            "ORDER BY last_activity_at DESC, id DESC",
            [list(GRANTED)],
        )
        visible = [pk for (pk,) in cur.fetchall()]
        cur.execute(
            "SELECT id FROM conversations_conversation WHERE NOT queue = ANY(%s) LIMIT 1",
            [list(GRANTED)],
        )
        (hidden_pk,) = cur.fetchone()
    # Not its queue: a 404 (which django.request logs as a warning: not worth printing).
    request_log = logging.getLogger("django.request")
    level = request_log.level
    request_log.setLevel(logging.ERROR)
    try:
        get(agent_client, f"/conversations/{hidden_pk}/", status=404)
    finally:
        request_log.setLevel(level)
    check_cursor_links(agent_client, GRANTED)

    def list_row(name: str, client: Any, url: str, sql: str, params: list[Any]) -> Row:
        html = get(client, url)
        ids, expected = page_ids(html), sql_ids(sql, params)
        if not ids or ids != expected:
            raise BenchError(f"{url}: the page lists {ids[:3]}..., the SQL {expected[:3]}...")
        return Row(
            name, *time_interleaved(client, [url] * requests, [list_run(sql, params)] * requests)
        )

    queues = list(GRANTED)
    first = list_sql(queues=GRANTED, after=False, search=False)
    rows.append(list_row("list, first page", agent_client, "/", first, queues))

    anchor = visible[-DEEP_FROM_END]
    cursor, at = cursor_of(anchor)
    deep = list_sql(queues=GRANTED, after=True, search=False)
    rows.append(
        list_row("list, deep", agent_client, f"/?after={cursor}", deep, [*queues, at, anchor])
    )

    search = list_sql(queues=GRANTED, after=False, search=True)
    rows.append(
        list_row(f'search "{SEARCH}"', agent_client, f"/?q={SEARCH}", search, [*queues, SEARCH])
    )

    pks = [rng.choice(visible) for _ in range(requests)]
    rows.append(
        Row(
            "conversation page",
            *time_interleaved(
                agent_client, [f"/conversations/{pk}/" for pk in pks], [page_run(pk) for pk in pks]
            ),
        )
    )

    everything = list_sql(queues=None, after=False, search=False)
    rows.append(list_row("list, first page (admin)", admin_client, "/", everything, []))
    return rows


def query_counts(admin: Any, agent: Any) -> tuple[list[tuple[str, str]], bool]:
    from conversations.models import Conversation

    agent_client, admin_client = client_for(agent), client_for(admin)
    short = (
        Conversation.objects.filter(queue__in=GRANTED, message_count__gt=0)
        .order_by("message_count", "pk")
        .values_list("pk", "message_count")
        .first()
    )
    long = list(
        Conversation.objects.filter(external_id__startswith="conv_long_")
        .order_by("message_count")
        .values_list("pk", "message_count")
    )
    assert short is not None
    pages = [short, *long]
    counts = [(n, query_count(agent_client, f"/conversations/{pk}/")) for pk, n in pages]
    visible = list(
        Conversation.objects.filter(queue__in=GRANTED)
        .order_by("last_activity_at", "pk")
        .values_list("pk", flat=True)[:DEEP_FROM_END]
    )
    deep = cursor_of(visible[-1])[0]
    lists = [
        ("first page", query_count(agent_client, "/")),
        ("deep", query_count(agent_client, f"/?after={deep}")),
        (f'search "{SEARCH}"', query_count(agent_client, f"/?q={SEARCH}")),
    ]
    admin_list = query_count(admin_client, "/")
    admin_page = query_count(admin_client, f"/conversations/{long[-1][0]}/")
    constant = len({c for _, c in counts}) == 1 and len({c for _, c in lists}) == 1
    rows = [
        (
            "conversation page (agent)",
            ", ".join(f"{c} queries with {n} messages" for n, c in counts)
            + (" (constant)" if len({c for _, c in counts}) == 1 else " (NOT constant)"),
        ),
        (
            "list page (agent)",
            ", ".join(f"{name} {c}" for name, c in lists)
            + (" (constant)" if len({c for _, c in lists}) == 1 else " (NOT constant)"),
        ),
        ("admin", f"list {admin_list}, conversation page {admin_page} ({long[-1][1]} messages)"),
    ]
    return rows, constant


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100_000, help="demo conversations")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per page")
    parser.add_argument("--seed", type=int, default=20261201, help="of the random pages")
    parser.add_argument("--quick", action="store_true", help="10,000 conversations, 50 requests")
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations, args.requests = 10_000, 50
    if args.conversations < 4 * (PAGE + DEEP_FROM_END):
        parser.error(f"--conversations must be at least {4 * (PAGE + DEEP_FROM_END)}")
    if args.requests < WARMUP:
        parser.error(f"--requests must be at least {WARMUP}")

    with Stopwatch() as total:
        setup_django()
        seeding = seed(args.conversations)
        admin, agent = make_users()
        rows = measure(admin, agent, args.requests, random.Random(args.seed))
        counts, constant = query_counts(admin, agent)

    report(seeding)
    print()
    print(
        f"{'page (agent: 2 of 4 queues)':<27} {'p50 ms':>8} {'p95 ms':>8} {'SQL p95':>9} "
        f"{'page/SQL':>10} {'n':>5}"
    )
    for row in rows:
        print(row.line())
    print()
    print("queries per page (both databases)")
    report([(f"  {label}", value) for label, value in counts])
    print()
    print(f"full run: {total.seconds:.0f} s")
    return 0 if constant else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
