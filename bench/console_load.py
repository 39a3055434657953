"""Audited page views under concurrent agents (gunicorn), against the same pages unaudited.

What it measures: a store of ``--conversations`` conversations (``bench/console_seed.py``: a
real base cloned by SQL; ``--reuse`` keeps one seeded earlier with the same size) is served by
gunicorn (``--workers`` sync workers, default 4) on a free loopback port with ``bench.settings``.
``max(--clients)`` support agents are created (distinct users, each granted two of the four
queues, rotating), each logged in with a session cookie of their own. For each step of
``--clients`` (default 1, 2, 4, 8), that many agents at once, one thread and connection each,
read pages for ``--seconds`` seconds: the conversation list (``/``) and a conversation page of
their queues (``/conversations/<pk>/``, random), in turn. The same agents then read the same
pages from the **unaudited twin** on the same server (``/bench/unaudited/...``, ``bench/urls.py``:
the same access checks, selectors, template and context, but no audit row and no transaction).
Audited and unaudited phases alternate, ``--rounds`` times per step (each round starting with the
other one), so a change of load on the machine weighs on both alike.

During every phase a sampler polls ``pg_stat_activity`` of the bench database every 20 ms: the
backends waiting on a lock (``wait_event_type = 'Lock'``: row, relation, transaction id, advisory
locks...), of which on an advisory lock (``wait_event = 'advisory'``: the audit log's append lock
today), the active backends (waiting ones included), and the backends idle in a transaction (a
view holding its transaction open while Python renders the page). The audit log is counted
before and after each phase: an audited phase must write one row per view, an unaudited one none
(the script exits 2 otherwise).

How to read the output: per step and page set, views per second over the phase time, p50/p99
latency in milliseconds (both pages together), the average number of backends waiting on a lock
(and on an advisory lock), the averages of active backends and of backends idle in a
transaction; then ``audited/unaudited``, the
audited views per second over the twin's. Targets, at 8 clients: audited at least 0.8 of the
unaudited views per second, and on average fewer than 0.2 backends waiting on a lock while the
audited pages are read. Absolute rates depend on the machine and its neighbours (clients, server
and database share its cores): read the ratio and the lock waits.

    .venv/bin/python bench/console_load.py [--conversations 20000] [--clients 1,2,4,8]
        [--seconds 5] [--rounds 4] [--workers 4] [--reuse]
    .venv/bin/python bench/console_load.py --quick    # 3 s phases, two rounds
"""

from __future__ import annotations

import argparse
import http.client
import io
import os
import random
import re
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BenchError, bench_environment, percentile, run_benchmark, setup_django
from bench.console_seed import seed_store, seeded
from bench.ingest_api import HOST, gunicorn, tail

TARGET_RATIO = 0.8
TARGET_WAITING = 0.2
SAMPLE_EVERY = 0.02  # seconds between two pg_stat_activity samples
PAGES_PER_AGENT = 400  # conversations each agent picks its pages from
WARMUP_SECONDS = 2.0
LINK = re.compile(r'href="/conversations/(\d+)/"')


@dataclass(frozen=True)
class Agent:
    username: str
    cookie: str  # the session cookie header value
    conversations: tuple[int, ...]  # pks of the agent's queues to read


@dataclass(frozen=True)
class PageSet:
    """The pages one phase reads: audited (the console's) or the unaudited twin."""

    name: str
    list_path: str
    conversation_path: str  # with {pk}


AUDITED = PageSet("audited", "/", "/conversations/{pk}/")
UNAUDITED = PageSet("unaudited", "/bench/unaudited/", "/bench/unaudited/conversations/{pk}/")


@dataclass
class Phase:
    pages: PageSet
    clients: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    waiting: list[int] = field(default_factory=list)  # per sample: backends waiting on a lock
    advisory: list[int] = field(default_factory=list)  # of which on an advisory lock
    active: list[int] = field(default_factory=list)
    idle_in_transaction: list[int] = field(default_factory=list)
    audit_rows: int = 0

    def add(self, other: Phase) -> None:
        self.seconds += other.seconds
        self.latencies.extend(other.latencies)
        self.errors.extend(other.errors)
        self.waiting.extend(other.waiting)
        self.advisory.extend(other.advisory)
        self.active.extend(other.active)
        self.idle_in_transaction.extend(other.idle_in_transaction)
        self.audit_rows += other.audit_rows

    @property
    def views(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.views / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        p50 = percentile(self.latencies, 50) * 1000 if self.latencies else float("nan")
        p99 = percentile(self.latencies, 99) * 1000 if self.latencies else float("nan")
        return (
            f"{self.clients:>7} {self.pages.name:<10} {self.views:>6} {self.rate:>8.1f} "
            f"{p50:>8.1f} {p99:>8.1f} {mean(self.waiting):>8.2f} {mean(self.advisory):>9.2f} "
            f"{mean(self.active):>7.2f} {mean(self.idle_in_transaction):>7.2f} "
            f"{len(self.errors):>6}"
        )


HEADER = (
    f"{'clients':>7} {'pages':<10} {'views':>6} {'views/s':>8} {'p50 ms':>8} {'p99 ms':>8} "
    f"{'lock wait':>8} {'(advisory)':>9} {'active':>7} {'idle tx':>7} {'errors':>6}"
)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def make_agents(count: int, rng: random.Random) -> list[Agent]:
    """``count`` support agents, agent i granted queues i and i+1 (of the demo's four), each with
    a session of their own (``Client.force_login`` stores it in the database the server reads)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.db import transaction
    from django.test import Client

    from conversations.demo import QUEUES
    from conversations.models import Conversation
    from conversations.services import queue_grant

    call_command("setup_roles", stdout=io.StringIO())
    group = Group.objects.get(name="support_agent")
    agents = []
    for i in range(count):
        user, _ = get_user_model().objects.get_or_create(username=f"bench-load-agent-{i}")
        user.groups.add(group)
        queues = [QUEUES[i % len(QUEUES)], QUEUES[(i + 1) % len(QUEUES)]]
        with transaction.atomic():  # queue_grant writes an audit row
            for name in queues:
                queue_grant(principal=user, queue_name=name)
        ids = list(
            Conversation.objects.filter(queue__in=queues)
            .order_by("?")
            .values_list("pk", flat=True)[:PAGES_PER_AGENT]
        )
        if not ids:
            raise BenchError(f"no conversation in queues {queues}")
        rng.shuffle(ids)
        client = Client(SERVER_NAME="localhost")
        client.force_login(user)
        cookie = (
            f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
        )
        agents.append(Agent(user.get_username(), cookie, tuple(ids)))
    return agents


def request(conn: http.client.HTTPConnection, path: str, cookie: str) -> tuple[int, bytes]:
    conn.request("GET", path, headers={"Cookie": cookie})
    response = conn.getresponse()
    return response.status, response.read()


def check_twin(port: int, agent: Agent) -> None:
    """The twin lists the same conversations and renders the same conversation as the console."""
    conn = http.client.HTTPConnection(HOST, port, timeout=60)
    try:
        for audited, unaudited in (
            (AUDITED.list_path, UNAUDITED.list_path),
            (
                AUDITED.conversation_path.format(pk=agent.conversations[0]),
                UNAUDITED.conversation_path.format(pk=agent.conversations[0]),
            ),
        ):
            a_status, a_body = request(conn, audited, agent.cookie)
            u_status, u_body = request(conn, unaudited, agent.cookie)
            if (a_status, u_status) != (200, 200):
                raise BenchError(f"GET {audited}: {a_status}, GET {unaudited}: {u_status}")
            a_ids, u_ids = LINK.findall(a_body.decode()), LINK.findall(u_body.decode())
            if a_ids != u_ids or abs(len(a_body) - len(u_body)) > 200:
                raise BenchError(f"{unaudited} does not render what {audited} does")
    finally:
        conn.close()


class Sampler:
    """Polls ``pg_stat_activity`` of one database while ``running``: lock waits, active."""

    QUERY = """
        SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'),
               count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'),
               count(*) FILTER (WHERE state = 'active'),
               count(*) FILTER (WHERE state = 'idle in transaction')
        FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
    """

    def __init__(self, url: str, phase: Phase) -> None:
        self.url, self.phase = url, phase
        self.running = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self.running.set()
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running.clear()
        self.thread.join()

    def _run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            while self.running.is_set():
                row = conn.execute(self.QUERY).fetchone()
                if row:
                    self.phase.waiting.append(row[0])
                    self.phase.advisory.append(row[1])
                    self.phase.active.append(row[2])
                    self.phase.idle_in_transaction.append(row[3])
                time.sleep(SAMPLE_EVERY)


def audit_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM audit_auditevent").fetchone()
    return int(row[0]) if row else 0


def run_phase(
    port: int, url: str, pages: PageSet, agents: Sequence[Agent], seconds: float, seed: int
) -> Phase:
    """Every agent reads list and conversation pages in turn, on its own connection, until the
    phase ends; all start together."""
    phase = Phase(pages, len(agents))
    lock = threading.Lock()
    start = threading.Barrier(len(agents) + 1)
    deadline = [0.0]

    def client(agent: Agent, index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        latencies: list[float] = []
        errors: list[str] = []
        conn = http.client.HTTPConnection(HOST, port, timeout=60)
        start.wait()
        turn = 0
        while time.monotonic() < deadline[0]:
            if turn % 2 == 0:
                path = pages.list_path
            else:
                path = pages.conversation_path.format(pk=rng.choice(agent.conversations))
            turn += 1
            began = time.perf_counter()
            try:
                status, body = request(conn, path, agent.cookie)
            except (OSError, http.client.HTTPException) as exc:
                errors.append(f"{path}: {type(exc).__name__}: {exc}")
                conn.close()
                continue
            latencies.append(time.perf_counter() - began)
            if status != 200:
                errors.append(f"{path}: {status} {body[:200]!r}")
        conn.close()
        with lock:
            phase.latencies.extend(latencies)
            phase.errors.extend(errors)

    threads = [
        threading.Thread(target=client, args=(agent, i), daemon=True)
        for i, agent in enumerate(agents)
    ]
    for thread in threads:
        thread.start()
    before = audit_rows(url)
    with Sampler(url, phase):
        began = time.perf_counter()
        deadline[0] = time.monotonic() + seconds
        start.wait()
        for thread in threads:
            thread.join()
        phase.seconds = time.perf_counter() - began
    phase.audit_rows = audit_rows(url) - before
    return phase


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=20_000, help="conversations")
    parser.add_argument("--clients", default="1,2,4,8", help="concurrent agents per step")
    parser.add_argument("--seconds", type=float, default=5.0, help="per phase")
    parser.add_argument("--rounds", type=int, default=4, help="audited/unaudited turns per step")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument("--seed", type=int, default=20261201, help="of the pages read")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the bench database if it holds a store of this size, only migrating it",
    )
    parser.add_argument("--quick", action="store_true", help="3 s phases, two rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.rounds = 3.0, 2
    try:
        steps = [int(c) for c in args.clients.split(",")]
    except ValueError:
        parser.error("--clients: comma-separated numbers, e.g. 1,2,4,8")
    if not steps or min(steps) < 1:
        parser.error("--clients: at least one client per step")

    env = bench_environment()
    reused = args.reuse and seeded(env["DATABASE_URL"], args.conversations)
    setup_django(create=not reused)
    seeding = (
        f"reused the store of {args.conversations:,} conversations"
        if reused
        else "; ".join(f"{k.strip()} {v}" for k, v in seed_store(args.conversations)[:1])
    )
    from django.db import connections

    agents = make_agents(max(steps), random.Random(args.seed))
    connections.close_all()
    url = env["DATABASE_URL"]

    results: list[tuple[Phase, Phase]] = []
    with tempfile.TemporaryDirectory(prefix="bench-console-load-") as tmp:
        log = Path(tmp) / "gunicorn.log"
        with gunicorn(env, args.workers, log) as port:
            check_twin(port, agents[0])
            for pages in (AUDITED, UNAUDITED):  # templates loaded, connections open
                run_phase(port, url, pages, agents, WARMUP_SECONDS, args.seed)
            for n in steps:
                audited, unaudited = Phase(AUDITED, n), Phase(UNAUDITED, n)
                for r in range(args.rounds):
                    order = (audited, unaudited) if r % 2 == 0 else (unaudited, audited)
                    for total in order:
                        print(
                            f"  {n} client(s), {total.pages.name}, round {r + 1}",
                            file=sys.stderr,
                            flush=True,
                        )
                        total.add(
                            run_phase(
                                port, url, total.pages, agents[:n], args.seconds, args.seed + r
                            )
                        )
                results.append((audited, unaudited))
        server_log = tail(log)

    print(
        f"gunicorn {args.workers} sync workers, {os.cpu_count()} cores, {args.seconds:.0f} s "
        f"phases x {args.rounds} rounds per step; {seeding}"
    )
    print(HEADER)
    failed = []
    for audited, unaudited in results:
        print(audited.line())
        print(unaudited.line())
        ratio = audited.rate / unaudited.rate if unaudited.rate else float("nan")
        print(f"{'':>7} audited/unaudited views/s {ratio:.2f}")
        if not audited.errors and audited.audit_rows != audited.views:
            failed.append(
                f"{audited.clients} clients: {audited.audit_rows} audit rows for "
                f"{audited.views} audited views"
            )
        if unaudited.audit_rows:
            failed.append(
                f"{unaudited.clients} clients: the twin wrote {unaudited.audit_rows} rows"
            )
    last_audited, last_unaudited = results[-1]
    ratio = last_audited.rate / last_unaudited.rate if last_unaudited.rate else float("nan")
    waiting = mean(last_audited.waiting)
    print()
    print(
        f"at {last_audited.clients} clients: audited/unaudited {ratio:.2f} (target >= "
        f"{TARGET_RATIO:.1f}: {'met' if ratio >= TARGET_RATIO else 'NOT met'}); backends waiting "
        f"on a lock {waiting:.2f} on average (target < {TARGET_WAITING:.1f}: "
        f"{'met' if waiting < TARGET_WAITING else 'NOT met'})"
    )
    errors = [e for a, u in results for p in (a, u) for e in p.errors]
    if errors or failed:
        for line in failed:
            print(f"error: {line}", file=sys.stderr)
        if errors:
            print(f"{len(errors)} failed request(s); the first:", file=sys.stderr)
            for e in errors[:5]:
                print(f"  {e}", file=sys.stderr)
            print(f"server log (tail):\n{server_log}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    run_benchmark(main)
