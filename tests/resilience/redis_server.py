"""A Redis server of a test's own (never the shared one): started on a free loopback port without
persistence, stopped and started again by the test (a restart loses everything, as a Redis
without persistence does)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import redis


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            cwd=self.workdir,
            stdout=subprocess.DEVNULL,
        )
        probe = redis.Redis.from_url(self.url())
        for _ in range(200):
            try:
                probe.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.025)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()
