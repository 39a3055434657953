"""Start the web server, uvicorn (ASGI) or gunicorn (WSGI), with forwarded headers trusted only
from ``FORWARDED_ALLOW_IPS``, the same way under both.

    python -m console.ops.serve uvicorn console.asgi:application --host 0.0.0.0 --port 8000
    python -m console.ops.serve gunicorn console.wsgi:application --bind 0.0.0.0:8000

``FORWARDED_ALLOW_IPS`` (comma-separated addresses of the reverse proxies in front of the
console, or ``*``; default: none) is read from the environment and passed on: to uvicorn as
``--forwarded-allow-ips`` (``--no-proxy-headers`` when empty: uvicorn otherwise trusts
``X-Forwarded-For`` from 127.0.0.1 by default), to gunicorn through its config module
(``console/ops/gunicorn_conf.py``: gunicorn trusts 127.0.0.1 and ::1 by default). The
application then computes the client's address with the same rule (``console.hardening.
client_address``), which is what the login throttle and the share pages' rate limit count by.
Run behind a proxy on the same host, name it (``FORWARDED_ALLOW_IPS=127.0.0.1``); without one,
leave it empty, or any client could choose its own address with one header.
"""

from __future__ import annotations

import os
import shutil
import sys

SERVERS = ("uvicorn", "gunicorn")


def forwarded_allow_ips(value: str | None = None) -> list[str]:
    """The trusted proxies named by ``FORWARDED_ALLOW_IPS`` (or ``value``)."""
    raw = os.environ.get("FORWARDED_ALLOW_IPS", "") if value is None else value
    return [part.strip() for part in raw.split(",") if part.strip()]


def command(server: str, args: list[str], env: str | None = None) -> list[str]:
    """The server's command line with the forwarded-headers options added."""
    if server not in SERVERS:
        raise SystemExit(f"serve: the server is uvicorn or gunicorn, not {server!r}")
    ips = forwarded_allow_ips(env)
    if server == "uvicorn":
        trust = ["--forwarded-allow-ips", ",".join(ips)] if ips else ["--no-proxy-headers"]
        return ["uvicorn", *args, *trust]
    return ["gunicorn", "--config", "python:console.ops.gunicorn_conf", *args]


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m console.ops.serve uvicorn|gunicorn [server args...]")
    line = command(argv[0], argv[1:])
    here = os.path.dirname(sys.executable)
    program = os.path.join(here, line[0])
    if not os.path.exists(program):
        program = shutil.which(line[0]) or line[0]
    os.execv(program, [program, *line[1:]])  # noqa: S606 (replaces this process: no shell)


if __name__ == "__main__":
    main(sys.argv[1:])
