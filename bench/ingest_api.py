"""API ingest (``POST /api/v1/exchanges``) under concurrent load, against a minimal endpoint.

What it measures: gunicorn (sync workers) serves the project on a free loopback port with
``bench.settings``, which adds ``POST /bench/raw``: one INSERT of the raw body, then 201 (see
``bench/urls.py``). Concurrent clients (threads, one connection each) send demo exchange bodies
(``conversations.demo.demo_bodies``, four provider formats, pre-serialised), each client its own
conversations and each conversation's exchanges in order, with a service token: ``--requests``
bodies to the API, and the same bodies, split the same way, to ``/bench/raw``. The endpoints
take turns over ``--rounds`` rounds (each round sends the next slice of every client's bodies to
the API, then to the baseline), so a change of load on the machine weighs on both alike.

How to read the output: for each endpoint, requests/s over the time its rounds took, p50 and p99
latency, and errors (any status but 201, or a request not sent within ``--time-limit``: the
script then exits 1). ``ratio api/raw`` is the API's throughput over the minimal endpoint's, on
the same machine, server and database: the figure to track (target: at least 0.50). Clients and
server share the machine's cores, which weighs on both endpoints alike.

    .venv/bin/python bench/ingest_api.py [--requests 2000] [--clients 8] [--workers 4] [--quick]
        [--rounds 4] [--time-limit 900]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    ROOT,
    BenchError,
    Stopwatch,
    percentile,
    rate,
    run_benchmark,
    setup_django,
    truncate_conversations,
    verdict,
)

TARGET = 0.50
HOST = "127.0.0.1"
GUNICORN = Path(sys.executable).parent / "gunicorn"
API_PATH = "/api/v1/exchanges"
RAW_PATH = "/bench/raw"


@dataclass
class Phase:
    """The outcome of sending every client's bodies to one endpoint."""

    path: str
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return len(self.latencies)

    def add(self, other: Phase) -> None:
        self.seconds += other.seconds
        self.latencies.extend(other.latencies)
        self.errors.extend(other.errors)


def client_bodies(requests: int, clients: int, *, start: int = 0) -> list[list[bytes]]:
    """``requests`` demo bodies, serialised, dealt to the clients one conversation at a time."""
    from conversations.demo import demo_bodies

    per_client: list[list[bytes]] = [[] for _ in range(clients)]
    owner: dict[str, int] = {}
    for body in itertools.islice(demo_bodies(requests, start=start), requests):
        client = owner.setdefault(body["conversation"], len(owner) % clients)
        per_client[client].append(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    return per_client


def slices(per_client: Sequence[Sequence[bytes]], rounds: int) -> list[list[Sequence[bytes]]]:
    """Each round's share of every client's bodies: consecutive slices, so order is kept."""
    return [
        [
            bodies[len(bodies) * r // rounds : len(bodies) * (r + 1) // rounds]
            for bodies in per_client
        ]
        for r in range(rounds)
    ]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@contextmanager
def gunicorn(env: dict[str, str], workers: int, log: Path) -> Iterator[int]:
    """A gunicorn serving ``bench.settings`` on a free loopback port (yielded), stopped on exit."""
    port = free_port()
    command = [
        str(GUNICORN),
        "console.wsgi:application",
        "--chdir",
        str(ROOT),
        "--bind",
        f"{HOST}:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        "sync",
        "--timeout",
        "60",
        "--error-logfile",
        "-",
    ]
    server_env = {**os.environ, **env, "DJANGO_SETTINGS_MODULE": "bench.settings"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, env=server_env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
        )
    try:
        wait_ready(process, port, log, timeout=60)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def wait_ready(process: subprocess.Popen[bytes], port: int, log: Path, timeout: float) -> None:
    """Until a worker answers (any status: a GET on ``/bench/raw`` is a 405 and stores nothing)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchError(f"gunicorn exited with {process.returncode}:\n{tail(log)}")
        conn = http.client.HTTPConnection(HOST, port, timeout=5)
        try:
            conn.request("GET", RAW_PATH)
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
        finally:
            conn.close()
    raise BenchError(f"gunicorn did not answer within {timeout:.0f} s:\n{tail(log)}")


def tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def run_phase(
    port: int, path: str, per_client: Sequence[Sequence[bytes]], token: str, deadline: float
) -> Phase:
    """Every client sends its bodies in turn on its own connection; all start together. Bodies
    not sent by ``deadline`` (``time.monotonic()``) are errors."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    phase = Phase(path)
    lock = threading.Lock()
    start = threading.Barrier(len(per_client) + 1)

    def client(bodies: Sequence[bytes]) -> None:
        latencies: list[float] = []
        errors: list[str] = []
        conn = http.client.HTTPConnection(HOST, port, timeout=60)
        start.wait()
        for body in bodies:
            if time.monotonic() > deadline:
                errors.append("not sent within the time limit")
                continue
            began = time.perf_counter()
            try:
                conn.request("POST", path, body=body, headers=headers)
                response = conn.getresponse()
                content = response.read()
            except (OSError, http.client.HTTPException) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                conn.close()
                continue
            latencies.append(time.perf_counter() - began)
            if response.status != 201:
                errors.append(f"{response.status}: {content[:300]!r}")
        conn.close()
        with lock:
            phase.latencies.extend(latencies)
            phase.errors.extend(errors)

    threads = [threading.Thread(target=client, args=(b,), daemon=True) for b in per_client]
    for thread in threads:
        thread.start()
    with Stopwatch() as sw:
        start.wait()
        for thread in threads:
            thread.join()
    phase.seconds = sw.seconds
    return phase


def print_phases(phases: Sequence[Phase]) -> None:
    print(
        f"{'endpoint':<24} {'requests':>8} {'errors':>6} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}"
    )
    for p in phases:
        p50 = percentile(p.latencies, 50) * 1000 if p.latencies else float("nan")
        p99 = percentile(p.latencies, 99) * 1000 if p.latencies else float("nan")
        print(
            f"POST {p.path:<19} {p.requests:>8} {len(p.errors):>6} "
            f"{rate(p.requests, p.seconds):>8.1f} {p50:>8.1f} {p99:>8.1f}"
        )


def prepare_database() -> str:
    """Empty conversation store and baseline table; a service token for the clients."""
    from django.db import connection

    from bench.urls import RAW_TABLE
    from conversations.services import service_token_create

    truncate_conversations()
    with connection.cursor() as cur:
        cur.execute(f"CREATE TABLE IF NOT EXISTS {RAW_TABLE} (id bigserial PRIMARY KEY, body text)")
        cur.execute(f"TRUNCATE {RAW_TABLE}")
    _, token = service_token_create(name="bench")
    return token


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2_000, help="requests per endpoint")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers (2 to 4)")
    parser.add_argument("--warmup", type=int, default=40, help="requests per endpoint, untimed")
    parser.add_argument("--rounds", type=int, default=4, help="turns of the two endpoints")
    parser.add_argument(
        "--time-limit", type=float, default=900, help="seconds for all requests before giving up"
    )
    parser.add_argument("--quick", action="store_true", help="300 requests per endpoint")
    args = parser.parse_args(argv)
    if args.quick:
        args.requests, args.warmup, args.rounds, args.time_limit = 300, 16, 2, 120

    env = setup_django()
    token = prepare_database()
    measured = client_bodies(args.requests, args.clients)
    # Warm-up conversations are numbered apart from the measured ones.
    warmup = client_bodies(args.warmup, args.clients, start=10 * args.requests)
    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        log = Path(tmp) / "gunicorn.log"
        with gunicorn(env, args.workers, log) as port:
            deadline = time.monotonic() + args.time_limit
            for path in (API_PATH, RAW_PATH):
                run_phase(port, path, warmup, token, deadline)
            phases = [Phase(API_PATH), Phase(RAW_PATH)]
            for share in slices(measured, args.rounds):
                for phase in phases:
                    phase.add(run_phase(port, phase.path, share, token, deadline))
        server_log = tail(log)

    print(
        f"{args.clients} clients, gunicorn {args.workers} sync workers, "
        f"{os.cpu_count()} cores, {args.requests} requests per endpoint in {args.rounds} rounds"
    )
    print_phases(phases)
    api, raw = phases
    if api.requests and raw.requests:
        ratio = rate(api.requests, api.seconds) / rate(raw.requests, raw.seconds)
        print(f"ratio api/raw throughput  {verdict(ratio, TARGET)}")
    failed = [(p.path, e) for p in phases for e in p.errors]
    if failed:
        print(f"\n{len(failed)} error(s); the first:", file=sys.stderr)
        for path, error in failed[:5]:
            print(f"  POST {path}: {error}", file=sys.stderr)
        print(f"server log (tail):\n{server_log}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    run_benchmark(main)
