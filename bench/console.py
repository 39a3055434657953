"""Console pages (list, deep page, searches, every filter, conversations) on a large store,
each against the raw SQL of its rows.

What it measures: a store of ``--conversations`` conversations (default 1,000,000, about 10
blocks each) seeded by ``bench/console_seed.py``: a base of 2,000 conversations ingested through
the real path (``manage.py ingest``: demo conversations in four provider formats with a few cut
off, refused or on a rarer model snapshot, multi-turn Chat Completions conversations, some with
an edited history), cloned by SQL ``INSERT ... SELECT`` and ``COPY`` (re-encrypted, with their
own data keys) with new ids, customers and a last activity spread over two years, then indexed
and ``VACUUM ANALYZE``d. Seeding prints progress lines and its time per step; ``--reuse`` keeps
a database seeded earlier with the same size (a marker table says so) and only migrates it, so
an index migration can be measured on the same rows. An admin (superuser) and a support agent
granted two of the four queues (``billing``, ``shipping``: about half of the conversations) are
created, and Django's test ``Client`` (``force_login``, in process: no server, no network)
requests each page ``--requests`` times after a few warm-up requests:

- ``list, first page``: ``/`` as the agent; ``list, deep``: ``/?after=<cursor>``, the keyset
  cursor the page itself emits for the agent's row 150 from the end of the list (the cursor links
  of the first pages are checked to continue the SQL's order);
- ``search "refund"`` (a common word: about a third of the conversations) and ``search
  <order id>`` (a rare one: one base conversation and its clones);
- one row per filter of ``ConversationFilterForm``: queue, customer, model snapshot (a common
  one and a rare one), finish reason (common, rare), each flag (truncated, refusal, history
  rewritten, 5+ tool calls; the history-rewritten flag on the admin's list, agents are not
  offered it), a week of dates (``since`` and ``until``), output tokens at least 2,000;
- the support lead's orders: ``?sort=output`` (most output tokens first; its first page and a
  page ``DEEP_FROM_END`` rows before its end, by the list's own cursor) and ``?sort=slowest``,
  each against the SQL ordered by that column;
- ``conversation page``: ``/conversations/<pk>/`` for random conversations the agent may see;
  ``conversation, 201 messages``: the 50-turn conversation, every time;
- ``list, first page (admin)``: ``/`` as the admin, who sees every queue;
- ``floor``: ``/bench/floor/`` (``bench/urls.py``), what every audited page does before its own
  reads: the login and reader checks, one audit row in a transaction, ``base.html``; beside the
  first page's SQL, it is the least ``page/SQL`` any list page could show (not counted among
  the pages).

Every page runs the whole stack: session, user and group lookups, the guardian queue subquery,
the selectors, the template, and the audit row each view writes.

The baseline, beside each page: the p95 of the raw SQL that fetches the same rows, run through
``connection.cursor()`` and fetched: for a list, the SELECT of the 51 newest conversations of the
agent's queues (``queue = ANY(...)``, ordered by ``last_activity_at DESC, id DESC``) with the
page's condition written plainly (``(last_activity_at, id) < cursor``; ``EXISTS`` over
``conversations_block.search @@ websearch_to_tsquery('english', ...)`` or over the exchanges'
``response_model``/``stop_reason``; the flag columns; the date range); for a conversation, the
SELECTs of the conversation, its exchanges (without ``settings_ciphertext``), its current
messages (without ``raw_ciphertext``), its blocks and its events. Page requests and SQL runs
alternate, so both see the same load. Each list page is checked to list exactly the rows its SQL
returns.

How to read the output: per page, p50/p95 in milliseconds, ``db p95`` (the time of the page's own
queries, both databases, summed per request: the rest of the page is Python), the SQL's p95,
``page/SQL`` (page p95 over SQL p95, target at most 5x), the rows the filter matches in the
agent's queues, and the page's query count. The query counts must not change with the depth in
the list, the filter or the conversation's length (DESIGN section 8; compare the ``--quick`` run
to see they do not change with the size either): the script exits 1 when they do, 2 when a page
fails or lists other rows than its SQL. Absolute times swing with the machine and its
neighbours (2 shared cores here): read the ratios, and p95 against the store's size.

    .venv/bin/python bench/console.py [--conversations 1000000] [--requests 200] [--reuse]
    .venv/bin/python bench/console.py --quick      # 20,000 conversations, 40 requests a page
"""

from __future__ import annotations

import argparse
import io
import logging
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from datetime import time as clock
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    BenchError,
    Stopwatch,
    bench_environment,
    percentile,
    report,
    run_benchmark,
    setup_django,
)
from bench.console_seed import LONG_TURNS, RARE_MODEL, long_conversation, seed_store, seeded

__all__ = ["long_conversation"]  # bench/replay.py takes it from here

GRANTED = ("billing", "shipping")  # two of the demo's four queues
PAGE = 50  # conversation_list's page size
DEEP_FROM_END = 150  # the deep page starts this many rows before the end of the agent's list
WARMUP = 5
TARGET = 5.0  # page p95 at most this many times its SQL's p95
COMMON_MODEL = "claude-sonnet-4-5-20250929"
DATES = (date(2025, 11, 3), date(2025, 11, 9))  # a week in the middle of the spread
# The backend's conformance (a rewritten history) is for console admins only (DESIGN section 20):
# its filter is timed on the admin's list.
ADMIN_ONLY = ("flag rewritten",)
LINK = re.compile(r'href="/conversations/(\d+)/"')
NEXT = re.compile(r'href="\?([^"]*)" rel="next"')


# --- users and requests ------------------------------------------------------------------------


def make_users() -> tuple[Any, Any]:
    """The admin and the agent (granted GRANTED), created or found again in a kept database."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.db import transaction

    from conversations.services import queue_grant

    call_command("setup_roles", stdout=io.StringIO())
    user_model = get_user_model()
    admin = user_model.objects.filter(username="bench-admin").first()
    if admin is None:
        admin = user_model.objects.create_superuser("bench-admin", "admin@example.com", "unused")
    agent, _ = user_model.objects.get_or_create(
        username="bench-agent", defaults={"email": "agent@example.com"}
    )
    agent.groups.add(Group.objects.get(name="support_agent"))
    with transaction.atomic():  # queue_grant writes an audit row: it needs a transaction
        for name in GRANTED:
            queue_grant(principal=agent, queue_name=name, actor=admin)
    return admin, agent


def use_bench_urls() -> None:
    """The project's URLs plus the floor page (``bench/urls.py``), in this process."""
    from django.conf import settings
    from django.urls import clear_url_caches

    settings.ROOT_URLCONF = "bench.urls"
    clear_url_caches()


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


@contextmanager
def db_time(into: list[float]) -> Iterator[None]:
    """Appends the milliseconds spent in queries (both databases) while the block runs."""
    from django.db import connections

    spent = [0.0]

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent[0] += time.perf_counter() - start

    with (
        connections["default"].execute_wrapper(wrapper),
        connections["keys"].execute_wrapper(wrapper),
    ):
        yield
    into.append(spent[0] * 1000)


def query_count(client: Any, url: str) -> int:
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    with (
        CaptureQueriesContext(connections["default"]) as default,
        CaptureQueriesContext(connections["keys"]) as keys,
    ):
        get(client, url)
    return len(default) + len(keys)


# --- the raw SQL -------------------------------------------------------------------------------


def columns(model: Any, alias: str = "", exclude: tuple[str, ...] = ()) -> str:
    prefix = f"{alias}." if alias else ""
    return ", ".join(
        f"{prefix}{f.column}"
        for f in model._meta.concrete_fields
        if f.name not in exclude and not getattr(f, "generated", False)
    )


def list_sql(where: list[str], order: str = "last_activity_at") -> str:
    from conversations.models import Conversation

    return (
        f"SELECT {columns(Conversation, 'c')} FROM {Conversation._meta.db_table} c"  # noqa: S608
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + f" ORDER BY c.{order} DESC, c.id DESC LIMIT {PAGE + 1}"
    )


def exists_exchange(column: str) -> str:
    return (
        "EXISTS (SELECT 1 FROM conversations_exchange e "  # noqa: S608 (a column name)
        f"WHERE e.conversation_id = c.id AND e.{column} = %s)"
    )


SEARCH_SQL = (
    "EXISTS (SELECT 1 FROM conversations_block b WHERE b.conversation_id = c.id "
    "AND b.search @@ websearch_to_tsquery('english', %s))"
)


def run_sql(statements: list[tuple[str, list[Any]]]) -> Callable[[Any], None]:
    def run(cur: Any) -> None:
        for statement, params in statements:
            cur.execute(statement, params)
            cur.fetchall()

    return run


def conversation_sql(pk: int) -> list[tuple[str, list[Any]]]:
    from conversations.models import Block, Conversation, ConversationEvent, Exchange, Message

    return [
        (
            f"SELECT {columns(Conversation)} FROM {Conversation._meta.db_table} "  # noqa: S608
            "WHERE id = %s",
            [pk],
        ),
        (
            f"SELECT {columns(Exchange, exclude=('settings_ciphertext',))} "  # noqa: S608
            f"FROM {Exchange._meta.db_table} WHERE conversation_id = %s ORDER BY ordinal",
            [pk],
        ),
        (
            f"SELECT {columns(Message, exclude=('raw_ciphertext',))} "  # noqa: S608
            f"FROM {Message._meta.db_table} WHERE conversation_id = %s AND NOT superseded "
            "ORDER BY sequence",
            [pk],
        ),
        (
            f"SELECT {columns(Block)} FROM {Block._meta.db_table} "  # noqa: S608
            "WHERE conversation_id = %s ORDER BY message_id, position",
            [pk],
        ),
        (
            f"SELECT {columns(ConversationEvent)} FROM {ConversationEvent._meta.db_table} "  # noqa: S608
            "WHERE conversation_id = %s ORDER BY at, id",
            [pk],
        ),
    ]


def sql_ids(statement: str, params: list[Any]) -> list[int]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(statement, params)
        return [row[0] for row in cur.fetchall()][:PAGE]  # id is the first column


def sql_count(where: list[str], params: list[Any]) -> int:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM conversations_conversation c WHERE "  # noqa: S608
            + " AND ".join(where),
            params,
        )
        row = cur.fetchone()
    return int(row[0]) if row else 0


def page_ids(html: str) -> list[int]:
    return [int(pk) for pk in LINK.findall(html)]


# --- the pages ---------------------------------------------------------------------------------


@dataclass
class Row:
    """One page's figures."""

    name: str
    kind: str  # "list", "conversation", "admin" or "floor"
    urls: list[str]
    runs: list[Callable[[Any], None]]
    matches: int | None = None
    queries: int = 0
    page: list[float] = field(default_factory=list)
    db: list[float] = field(default_factory=list)
    sql: list[float] = field(default_factory=list)

    def ratio(self) -> float:
        return percentile(self.page, 95) / percentile(self.sql, 95)

    def line(self) -> str:
        p50, p95 = percentile(self.page, 50), percentile(self.page, 95)
        matches = f"{self.matches:>9,}" if self.matches is not None else f"{'':>9}"
        flag = " " if self.ratio() <= TARGET or self.kind == "floor" else "!"
        return (
            f"{self.name:<34} {p50:8.1f} {p95:8.1f} {percentile(self.db, 95):8.1f} "
            f"{percentile(self.sql, 95):9.2f} {self.ratio():8.1f}x{flag} {matches} "
            f"{self.queries:7d} {len(self.page):5d}"
        )


HEADER = (
    f"{'page (agent: 2 of 4 queues)':<34} {'p50 ms':>8} {'p95 ms':>8} {'db p95':>8} "
    f"{'SQL p95':>9} {'page/SQL':>10} {'matches':>9} {'queries':>7} {'n':>5}"
)


MIN_SAMPLES = 20


def time_row(client: Any, row: Row, budget: float) -> None:
    """Page requests and SQL runs (each executes and fetches its statements), alternated so
    that both see the same load on a shared machine; after WARMUP untimed rounds. Stops early
    after ``budget`` seconds once MIN_SAMPLES pairs are in (a slow page on a large store)."""
    from django.db import connection

    def sql(run: Callable[[Any], None]) -> float:
        with connection.cursor() as cur:
            start = time.perf_counter()
            run(cur)
            return (time.perf_counter() - start) * 1000

    def page(url: str, db: list[float]) -> float:
        start = time.perf_counter()
        with db_time(db):
            get(client, url)
        return (time.perf_counter() - start) * 1000

    pairs = list(zip(row.urls, row.runs, strict=True))
    for url, run in pairs[:WARMUP]:
        page(url, [])
        sql(run)
    started = time.monotonic()
    for url, run in pairs:
        row.page.append(page(url, row.db))
        row.sql.append(sql(run))
        if len(row.page) >= MIN_SAMPLES and time.monotonic() - started > budget:
            break


def cursor_of(pk: int) -> tuple[str, datetime]:
    """The list's own cursor for a conversation: what its "Older conversations" link carries."""
    from conversations.models import Conversation
    from conversations.selectors import conversation_cursor as _cursor

    row = Conversation.objects.only("last_activity_at").get(pk=pk)
    return _cursor(row), row.last_activity_at


def check_cursor_links(client: Any) -> None:
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
                list_sql(["c.queue = ANY(%s)", "(c.last_activity_at, c.id) < (%s, %s)"]),
                [list(GRANTED), at, last_id],
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


def find_values() -> dict[str, Any]:
    """The filter values: a customer and an order id of the agent's queues, a common finish
    reason, the date range's bounds in the console's time zone."""
    from django.db import connection
    from django.utils import timezone

    with connection.cursor() as cur:
        # A customer with several conversations in the agent's queues.
        cur.execute(
            "SELECT customer_external_id FROM conversations_conversation "
            "WHERE queue = ANY(%s) AND customer_external_id LIKE 'cus\\_%%' "
            "GROUP BY 1 HAVING count(*) >= 3 ORDER BY 1 LIMIT 1",
            [list(GRANTED)],
        )
        found = cur.fetchone()
        # An order id named in a visible conversation's text.
        cur.execute(
            "SELECT substring(b.text from 'ORD-[0-9]+') FROM conversations_block b "
            "JOIN conversations_conversation c ON c.id = b.conversation_id "
            "WHERE c.queue = ANY(%s) AND b.text LIKE '%%ORD-%%' "
            "AND c.external_id NOT LIKE 'conv\\_long\\_%%' ORDER BY b.id LIMIT 1",
            [list(GRANTED)],
        )
        order = cur.fetchone()
    if not found or not order:
        raise BenchError("no customer with 3 conversations or no order id in the agent's queues")
    tz = timezone.get_current_timezone()
    return {
        "customer": found[0],
        "order": order[0],
        "since": datetime.combine(DATES[0], clock.min, tz),
        "until": datetime.combine(DATES[1] + timedelta(days=1), clock.min, tz),
    }


def list_rows() -> list[tuple[str, dict[str, Any], list[str], list[Any]]]:
    """(name, the page's query, the SQL's conditions beside the agent's queues, their params)."""
    from conversations.selectors import MANY_TOOL_CALLS

    v = find_values()
    return [
        ("list, first page", {}, [], []),
        ('search "refund"', {"q": "refund"}, [SEARCH_SQL], ["refund"]),
        (f"search {v['order']}", {"q": v["order"]}, [SEARCH_SQL], [v["order"]]),
        ("filter queue=billing", {"queue": "billing"}, ["c.queue = %s"], ["billing"]),
        (
            "filter customer",
            {"customer": v["customer"]},
            ["c.customer_external_id = %s"],
            [v["customer"]],
        ),
        (
            "filter model (common)",
            {"model": COMMON_MODEL},
            [exists_exchange("response_model")],
            [COMMON_MODEL],
        ),
        (
            "filter model (rare)",
            {"model": RARE_MODEL},
            [exists_exchange("response_model")],
            [RARE_MODEL],
        ),
        (
            "filter finish=end_turn",
            {"finish": "end_turn"},
            [exists_exchange("stop_reason")],
            ["end_turn"],
        ),
        (
            "filter finish=max_tokens",
            {"finish": "max_tokens"},
            [exists_exchange("stop_reason")],
            ["max_tokens"],
        ),
        ("flag truncated", {"flags": "truncated"}, ["c.any_truncated"], []),
        ("flag refusal", {"flags": "refusal"}, ["c.any_refusal"], []),
        ("flag rewritten", {"flags": "rewritten"}, ["c.any_rewritten"], []),
        (
            "flag many_tools",
            {"flags": "many_tools"},
            ["c.tool_call_count >= %s"],
            [MANY_TOOL_CALLS],
        ),
        ("sort: output tokens", {"sort": "output"}, [], []),
        ("sort: slowest answer", {"sort": "slowest"}, [], []),
        (
            "output tokens >= 2,000",
            {"min_output": "2000"},
            ["c.output_tokens >= %s"],
            [2000],
        ),
        (
            "dates: one week",
            {"since": DATES[0].isoformat(), "until": DATES[1].isoformat()},
            ["c.last_activity_at >= %s", "c.last_activity_at < %s"],
            [v["since"], v["until"]],
        ),
    ]


# The list's other orders (conversations/selectors/listing.py, SORTS): the column they sort by.
SORTED_BY = {"output": "output_tokens", "slowest": "slowest_ms"}


def deep_sorted(list_row: Any, client: Any, granted: list[str]) -> Row:
    """The output-tokens order's page DEEP_FROM_END rows before its end, by the list's cursor."""
    from django.db import connection

    from conversations.models import Conversation
    from conversations.selectors import conversation_cursor

    with connection.cursor() as cur:
        cur.execute(
            "SELECT id, output_tokens FROM conversations_conversation WHERE queue = ANY(%s) "
            "ORDER BY output_tokens, id OFFSET %s LIMIT 1",
            [granted, DEEP_FROM_END - 1],
        )
        (anchor, value) = cur.fetchone()
    cursor = conversation_cursor(Conversation.objects.get(pk=anchor), "output")
    return list_row(
        "sort: output tokens, deep",
        client,
        {"sort": "output", "after": cursor},
        ["c.queue = ANY(%s)", "(c.output_tokens, c.id) < (%s, %s)"],
        [granted, value, anchor],
        count=False,
    )


def build_rows(admin: Any, agent: Any, requests: int, rng: random.Random) -> list[tuple[Any, Row]]:
    """Every page to time, with the client that requests it; checks each list page against its
    SQL first."""
    from django.db import connection

    agent_client, admin_client = client_for(agent), client_for(admin)
    granted = list(GRANTED)
    with connection.cursor() as cur:
        cur.execute(
            "SELECT id FROM conversations_conversation WHERE queue = ANY(%s) "
            "ORDER BY last_activity_at DESC, id DESC",
            [granted],
        )
        visible = [pk for (pk,) in cur.fetchall()]
        cur.execute(
            "SELECT id FROM conversations_conversation WHERE NOT queue = ANY(%s) LIMIT 1",
            [granted],
        )
        (hidden_pk,) = cur.fetchone()
        cur.execute(
            "SELECT id FROM conversations_conversation WHERE external_id = %s",
            [f"conv_long_{LONG_TURNS[1]}"],
        )
        (long_pk,) = cur.fetchone()
    # Not its queue: a 404 (which django.request logs as a warning: not worth printing).
    request_log = logging.getLogger("django.request")
    level = request_log.level
    request_log.setLevel(logging.ERROR)
    try:
        get(agent_client, f"/conversations/{hidden_pk}/", status=404)
    finally:
        request_log.setLevel(level)
    check_cursor_links(agent_client)

    def list_row(
        name: str,
        client: Any,
        query: dict[str, Any],
        where: list[str],
        params: list[Any],
        *,
        count: bool = True,
    ) -> Row:
        url = "/?" + urlencode(query) if query else "/"
        statement = list_sql(where, SORTED_BY.get(query.get("sort", ""), "last_activity_at"))
        html = get(client, url)
        ids, expected = page_ids(html), sql_ids(statement, params)
        if ids != expected:
            raise BenchError(f"{url}: the page lists {ids[:3]}..., the SQL {expected[:3]}...")
        return Row(
            name,
            "admin" if client is admin_client else "list",
            [url] * requests,
            [run_sql([(statement, params)])] * requests,
            matches=sql_count(where or ["true"], params) if count else None,
        )

    rows: list[tuple[Any, Row]] = []
    for name, query, where, params in list_rows():
        if name in ADMIN_ONLY:  # a filter agents are not offered (a 400 for them): the admin's
            rows.append((admin_client, list_row(f"{name} (admin)", admin_client, query, where,
                                                params)))  # fmt: skip
            continue
        row = list_row(name, agent_client, query, ["c.queue = ANY(%s)", *where], [granted, *params])
        rows.append((agent_client, row))
        if name == "list, first page":
            anchor = visible[-DEEP_FROM_END]
            cursor, at = cursor_of(anchor)
            deep = list_row(
                "list, deep",
                agent_client,
                {"after": cursor},
                ["c.queue = ANY(%s)", "(c.last_activity_at, c.id) < (%s, %s)"],
                [granted, at, anchor],
                count=False,
            )
            rows.append((agent_client, deep))
        if name == "sort: output tokens":  # the same depth in the output order
            rows.append((agent_client, deep_sorted(list_row, agent_client, granted)))

    pks = [rng.choice(visible) for _ in range(requests)]
    rows.append(
        (
            agent_client,
            Row(
                "conversation page (random)",
                "conversation",
                [f"/conversations/{pk}/" for pk in pks],
                [run_sql(conversation_sql(pk)) for pk in pks],
            ),
        )
    )
    rows.append(
        (
            agent_client,
            Row(
                f"conversation, {1 + 4 * LONG_TURNS[1]} messages",
                "conversation",
                [f"/conversations/{long_pk}/"] * requests,
                [run_sql(conversation_sql(long_pk))] * requests,
            ),
        )
    )
    rows.append(
        (
            admin_client,
            list_row("list, first page (admin)", admin_client, {}, [], []),
        )
    )
    # The floor: an audited page that reads nothing (bench/urls.py), beside the first page's SQL.
    first = rows[0][1]
    rows.append(
        (
            agent_client,
            Row(
                "floor: login, audit row, base.html",
                "floor",
                ["/bench/floor/"] * requests,
                first.runs,
            ),
        )
    )
    for client, row in rows:
        row.queries = query_count(client, row.urls[0])
    return rows


def conversation_counts(agent: Any) -> tuple[list[tuple[int, int]], bool]:
    """Queries of the conversation page by the conversation's length: (messages, queries)."""
    from conversations.models import Conversation

    client = client_for(agent)
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
    counts = [(n, query_count(client, f"/conversations/{pk}/")) for pk, n in [short, *long]]
    return counts, len({c for _, c in counts}) == 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=1_000_000, help="conversations")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per page")
    parser.add_argument("--seed", type=int, default=20261201, help="of the random pages")
    parser.add_argument(
        "--page-seconds",
        type=float,
        default=120,
        help=f"time a page for at most this long once it has {MIN_SAMPLES} samples",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the bench database if it holds a store of this size (seeded by an earlier "
        "run), only migrating it; otherwise seed afresh",
    )
    parser.add_argument("--quick", action="store_true", help="20,000 conversations, 40 requests")
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations, args.requests = 20_000, 40
    if args.conversations < 4 * (PAGE + DEEP_FROM_END) + len(LONG_TURNS):
        parser.error(f"--conversations must be at least {4 * (PAGE + DEEP_FROM_END) + 3}")
    if args.requests < WARMUP:
        parser.error(f"--requests must be at least {WARMUP}")

    with Stopwatch() as total:
        env = bench_environment()
        reused = args.reuse and seeded(env["DATABASE_URL"], args.conversations)
        with Stopwatch() as migrate:
            setup_django(create=not reused)
            use_bench_urls()
        if reused:
            seeding = [
                (
                    "seeding",
                    f"reused the store of {args.conversations:,} conversations "
                    f"(migrated in {migrate.seconds:.1f} s)",
                )
            ]
        else:
            seeding = seed_store(args.conversations)
        admin, agent = make_users()
        rows = build_rows(admin, agent, args.requests, random.Random(args.seed))
        for client, row in rows:
            print(f"  timing {row.name} ...", file=sys.stderr, flush=True)
            time_row(client, row, args.page_seconds)
        counts, constant_pages = conversation_counts(agent)

    report(seeding)
    print()
    print(HEADER)
    for _, row in rows:
        print(row.line())
    pages_timed = [row for _, row in rows if row.kind != "floor"]
    within = sum(row.ratio() <= TARGET for row in pages_timed)
    print(
        f"{within} of {len(pages_timed)} pages within {TARGET:.0f}x their SQL's p95 "
        "(! marks the others)"
    )
    print()
    lists = {row.queries for _, row in rows if row.kind == "list"}
    pages = {row.queries for _, row in rows if row.kind == "conversation"}
    constant_lists = len(lists) == 1
    print("queries per page (both databases)")
    report(
        [
            (
                "  list pages (agent)",
                f"{', '.join(map(str, sorted(lists)))} "
                + ("(the same at every depth and filter)" if constant_lists else "(NOT constant)"),
            ),
            (
                "  conversation page (agent)",
                ", ".join(f"{c} with {n} messages" for n, c in counts)
                + (" (constant)" if constant_pages and len(pages) == 1 else " (NOT constant)"),
            ),
        ]
    )
    print()
    print(f"full run: {total.seconds:.0f} s")
    return 0 if constant_lists and constant_pages and len(pages) == 1 else 1


if __name__ == "__main__":
    run_benchmark(main)
