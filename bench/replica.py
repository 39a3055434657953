"""Reading pages on a streaming replica, against the same pages read on the primary alone.

What it measures: a PostgreSQL 15 primary and a streaming replica of it, both made for the run on
free loopback ports (``bench/pgcluster.py``: ``initdb``, ``pg_basebackup -R``; the machine's
shared server is not used). A store of ``--conversations`` conversations is seeded on the primary
(``bench/console_seed.py``) and replayed by the replica. Two gunicorn servers (``--workers`` sync
workers each, ``bench.settings``) serve the console: the **baseline** without replicas (every
read on the primary) and the **replica** one with ``DATABASE_REPLICA_URLS`` naming the replica
(the reading pages on it, their audit rows and sessions on the primary:
``conversations/replicas.py``). ``--clients`` support agents (``bench/console_load.py``: distinct
users and sessions) read the conversation list and conversation pages for ``--seconds`` per phase,
the two servers taking turns for ``--rounds`` rounds.

Per server: views per second, p50/p99 ms, and the CPU seconds (user + system, from /proc) used by
the primary's processes, the replica's and gunicorn's during its phases. The figure to read is
the **primary's CPU share**: its CPU seconds over those of the whole stack (primary + replica +
gunicorn), and its CPU milliseconds per view, with the replica against without it. On one machine
the replica takes CPU from the same cores, so views per second need not rise here; what the
replica buys is a primary that does only the writes (audit rows, sessions) of the page views,
which is what lets a second machine carry the reads. ``console_replica_pages_total`` (scraped
from the replica server's ``/metrics``) says how many pages the replica served and why the
others went to the primary. The sampler of ``console_load.py`` polls ``pg_stat_activity`` on the
primary in both arms alike (about 50 light queries a second).

Then the erasure: a fresh conversation with a marker is read through the replica server (served
by the replica), the replica's replay is paused (``pg_wal_replay_pause()``), the conversation is
erased through the one erase path, and its page and the list are read again at once: the page is
a 404 and neither shows the marker, while the replica still holds the erased rows (counted by
SQL on it). The script exits 1 if anything erased is shown.

Last measured (December 2026, the shared 2-core development machine, load average about 9 from
other work; 20,000 conversations, 4 agents, 3 x 5 s per server): views/s 0.91 of the baseline
(8.2 vs 7.4), the primary's CPU share of the stack 6% against 21% (0.29), primary CPU per view
0.32 of the baseline (3.6 ms against 11.3 ms); all 117 pages of the replica server read on the
replica; after the erasure, with 2 erased block rows still on the paused replica, the page was a
404 and neither it nor the list showed any erased text (both reads went to the primary).

    .venv/bin/python bench/replica.py [--conversations 20000] [--clients 4] [--seconds 5]
        [--rounds 3] [--workers 4]
    .venv/bin/python bench/replica.py --quick     # 2,000 conversations, 3 s phases, 2 rounds
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import pgcluster
from bench.common import BenchError, percentile, run_benchmark, setup_django
from bench.console_load import AUDITED, Agent, Phase, make_agents, run_phase
from bench.console_seed import seed_store
from bench.ingest_api import HOST, gunicorn, tail

DATABASE = "console_bench_replica"
WARMUP_SECONDS = 2.0
MARKER = "MARKER-REPLICA-BENCH-ERASED-4c1d"


@dataclass
class Arm:
    name: str
    port: int
    phase: Phase
    primary_cpu: float = 0.0
    replica_cpu: float = 0.0
    server_cpu: float = 0.0

    @property
    def stack_cpu(self) -> float:
        return self.primary_cpu + self.replica_cpu + self.server_cpu

    @property
    def primary_share(self) -> float:
        return self.primary_cpu / self.stack_cpu if self.stack_cpu else float("nan")

    def line(self) -> str:
        p = self.phase
        views = p.views or 1
        p50 = percentile(p.latencies, 50) * 1000 if p.latencies else float("nan")
        p99 = percentile(p.latencies, 99) * 1000 if p.latencies else float("nan")
        return (
            f"{self.name:<9} {p.views:>6} {p.rate:>8.1f} {p50:>7.1f} {p99:>7.1f} "
            f"{self.primary_cpu:>8.2f} {self.replica_cpu:>8.2f} {self.server_cpu:>8.2f} "
            f"{self.primary_share * 100:>7.1f}% {self.primary_cpu * 1000 / views:>9.2f} "
            f"{len(p.errors):>6}"
        )


HEADER = (
    f"{'server':<9} {'views':>6} {'views/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'primary':>8} "
    f"{'replica':>8} {'gunicorn':>8} {'primary%':>8} {'ms/view':>9} {'errors':>6}\n"
    f"{'':<9} {'':>6} {'':>8} {'':>7} {'':>7} {'CPU s':>8} {'CPU s':>8} {'CPU s':>8} "
    f"{'of stack':>8} {'(primary)':>9}"
)


def server_pid(port: int) -> int:
    """The gunicorn master serving ``port``: started by this process (its workers are its
    children)."""
    bind = f"{HOST}:{port}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if bind in cmdline and ppid == os.getpid():
            return int(entry.name)
    raise BenchError(f"no gunicorn process serving port {port}")


def get(port: int, path: str, cookie: str = "") -> tuple[int, str]:
    conn = http.client.HTTPConnection(HOST, port, timeout=60)
    try:
        conn.request("GET", path, headers={"Cookie": cookie})
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        conn.close()


def replica_pages(port: int, log: Path | None = None) -> dict[str, float]:
    """``console_replica_pages_total`` per outcome, from the server's /metrics."""
    try:
        status, text = get(port, "/metrics")
    except OSError as exc:
        raise BenchError(f"/metrics: {exc}\n{tail(log) if log else ''}") from None
    if status != 200:
        raise BenchError(f"/metrics answered {status}: {text[:200]}")
    found = re.findall(r'^console_replica_pages_total\{outcome="(\w+)"\} ([0-9.e+]+)$', text, re.M)
    return {outcome: float(n) for outcome, n in found}


def measured_phase(
    arm: Arm,
    primary: pgcluster.Cluster,
    replica: pgcluster.Cluster,
    agents: list[Agent],
    seconds: float,
    seed: int,
) -> None:
    url = primary.url(DATABASE)
    server = server_pid(arm.port)
    cpu = (primary.cpu_seconds(), replica.cpu_seconds(), pgcluster.tree_cpu_seconds(server))
    phase = run_phase(arm.port, url, AUDITED, agents, seconds, seed)
    arm.primary_cpu += primary.cpu_seconds() - cpu[0]
    arm.replica_cpu += replica.cpu_seconds() - cpu[1]
    arm.server_cpu += pgcluster.tree_cpu_seconds(server) - cpu[2]
    arm.phase.add(phase)


def erasure_case(
    port: int, primary: pgcluster.Cluster, replica: pgcluster.Cluster, agent: Agent
) -> list[str]:
    """The replay-paused erasure: returns what went wrong (nothing, when no erased text shows)."""
    from conversations.ingest.body import exchange_input
    from conversations.models import Conversation
    from conversations.replicas import replica_fence_raise
    from conversations.services import conversation_ingest_exchange
    from retention.services import conversation_erase

    problems: list[str] = []
    name = f"bench-erased-{uuid.uuid4().hex[:8]}"
    queue = Conversation.objects.get(pk=agent.conversations[0]).queue
    conversation_ingest_exchange(data=exchange_input(erased_body(name, queue)))
    pk = Conversation.objects.get(external_id=name).pk
    replica_fence_raise()
    pgcluster.caught_up(primary, replica)
    before = replica_pages(port)
    status, page = get(port, f"/conversations/{pk}/", agent.cookie)
    served = replica_pages(port)
    if status != 200 or MARKER not in page:
        problems.append(f"before the erasure the page answered {status} without the marker")
    if served.get("replica", 0) != before.get("replica", 0) + 1:
        problems.append("before the erasure the page was not read on the replica")
    with replica.connect() as conn:
        conn.execute("SELECT pg_wal_replay_pause()")
        while conn.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()[0] != "paused":  # type: ignore[index]
            time.sleep(0.02)
    try:
        conversation_erase(pk)
        with replica.connect(DATABASE) as conn:
            held = conn.execute(
                "SELECT count(*) FROM conversations_block WHERE conversation_id = %s", [pk]
            ).fetchone()[0]  # type: ignore[index]
        after_status, after_page = get(port, f"/conversations/{pk}/", agent.cookie)
        _, listing = get(port, "/", agent.cookie)
        routed = replica_pages(port)
    finally:
        with replica.connect() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")
    fenced = routed.get("fence", 0) - served.get("fence", 0)
    print(
        f"erasure with the replica held behind: the replica still holds {held} block row(s) of "
        f"the erased conversation; its page answered {after_status}; the page and the list "
        f"{'show the erased text' if MARKER in after_page + listing else 'show none of it'}; "
        f"{fenced:.0f} of the 2 reads went to the primary (the fence)"
    )
    if held < 1:
        problems.append("the replica was not behind: nothing erased left on it to show")
    if after_status != 404:
        problems.append(f"the erased conversation's page answered {after_status}")
    if MARKER in after_page or MARKER in listing or name in listing:
        problems.append("a page read after the erasure showed erased text")
    return problems


def erased_body(name: str, queue: str) -> dict[str, object]:
    """One Anthropic exchange whose question and answer carry the marker."""
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "messages": [{"role": "user", "content": f"question {MARKER}"}],
    }
    response = {
        "id": f"msg_{name}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": f"answer {MARKER}"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return {
        "conversation": name,
        "customer": f"cus-{name}",
        "format": "anthropic.messages",
        "request": json.dumps(request),
        "response": json.dumps(response),
        "started_at": "2026-11-30T10:00:00Z",
        "latency_ms": 900,
        "labels": {"queue": queue},
    }


@contextlib.contextmanager
def two_servers(
    env: dict[str, str], replica_env: dict[str, str], workers: int, directory: Path
) -> Iterator[tuple[int, int]]:
    with (
        gunicorn(env, workers, directory / "baseline.log") as baseline,
        gunicorn(replica_env, workers, directory / "replica.log") as with_replica,
    ):
        yield baseline, with_replica


def forget_keys(url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)
    client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--clients", type=int, default=4, help="concurrent agents")
    parser.add_argument("--seconds", type=float, default=5.0, help="per phase")
    parser.add_argument("--rounds", type=int, default=3, help="baseline/replica turns")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers per server")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--quick", action="store_true", help="2,000 conversations, 3 s, 2 rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations, args.seconds, args.rounds = 2_000, 3.0, 2
    why = pgcluster.available()
    if why:
        raise BenchError(why)

    prefix = f"bench-replica-{uuid.uuid4().hex[:8]}"  # this run's fence, nobody else's
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/14"
    with (
        pgcluster.primary_and_replica(settings=["shared_buffers=256MB"]) as (primary, replica),
        tempfile.TemporaryDirectory(prefix="bench-replica-") as tmp,
    ):
        directory = Path(tmp)
        env = {
            "DATABASE_URL": primary.url(DATABASE),
            "REDIS_URL": redis_url,
            "CACHE_KEY_PREFIX": prefix,
            "METRICS_ALLOWED_IPS": HOST,
            "DATABASE_REPLICA_URLS": "",  # the baseline: every read on the primary
        }
        replica_env = {
            **env,
            "DATABASE_REPLICA_URLS": replica.url(DATABASE),
            "PROMETHEUS_MULTIPROC_DIR": str(directory / "metrics"),
        }
        (directory / "metrics").mkdir()
        os.environ.update(replica_env)
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR")  # this process counts alone
        os.environ.pop("KEYS_DATABASE_URL", None)
        setup_django()
        print(f"seeding {args.conversations:,} conversations on the primary", file=sys.stderr)
        seeding = "; ".join(f"{k.strip()} {v}" for k, v in seed_store(args.conversations)[:1])
        from django.db import connections

        agents = make_agents(args.clients, random.Random(args.seed))
        connections.close_all()
        pgcluster.caught_up(primary, replica, timeout=600)

        with two_servers(env, replica_env, args.workers, directory) as (base_port, rep_port):
            arms = [
                Arm("baseline", base_port, Phase(AUDITED, args.clients)),
                Arm("replica", rep_port, Phase(AUDITED, args.clients)),
            ]
            for arm in arms:  # templates loaded, connections open, the fence set
                run_phase(arm.port, primary.url(DATABASE), AUDITED, agents, WARMUP_SECONDS, 0)
            before = replica_pages(rep_port, directory / "replica.log")
            for r in range(args.rounds):
                for arm in arms if r % 2 == 0 else arms[::-1]:
                    print(f"  {arm.name}, round {r + 1}", file=sys.stderr, flush=True)
                    measured_phase(arm, primary, replica, agents, args.seconds, args.seed + r)
            after = replica_pages(rep_port)
            problems = erasure_case(rep_port, primary, replica, agents[0])
            logs = {arm.name: tail(directory / f"{arm.name}.log") for arm in arms}
        forget_keys(redis_url, prefix)

    served = {k: after.get(k, 0) - before.get(k, 0) for k in sorted(set(after) | set(before))}
    print(
        f"gunicorn {args.workers} sync workers per server, {args.clients} agents, "
        f"{os.cpu_count()} cores, {args.seconds:.0f} s phases x {args.rounds} rounds; {seeding}"
    )
    print(HEADER)
    for arm in arms:
        print(arm.line())
    base, rep = arms
    rate = rep.phase.rate / base.phase.rate if base.phase.rate else float("nan")
    share = rep.primary_share / base.primary_share if base.primary_share else float("nan")
    per_view = (rep.primary_cpu / max(rep.phase.views, 1)) / (
        base.primary_cpu / max(base.phase.views, 1)
    )
    print(
        f"replica/baseline: views/s {rate:.2f}; primary's CPU share {share:.2f} "
        f"({rep.primary_share * 100:.0f}% against {base.primary_share * 100:.0f}% of the stack); "
        f"primary CPU per view {per_view:.2f}"
    )
    print(
        "pages of the replica server during the load: "
        + ", ".join(f"{k} {v:.0f}" for k, v in served.items())
    )
    errors = [e for arm in arms for e in arm.phase.errors]
    if errors:
        print(f"{len(errors)} failed request(s); the first: {errors[:3]}", file=sys.stderr)
        for name, log in logs.items():
            print(f"{name} server log (tail):\n{log}", file=sys.stderr)
        return 2
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    run_benchmark(main)
