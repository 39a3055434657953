"""Dumps of the stores, to search them for planted markers: the main database (pg_dump, plain
text) and Redis (every key of every type)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import redis
from django.conf import settings
from django.db import connections


def _major(binary: str) -> int:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"(\d+)(?:\.\d+)?", out)
    return int(match.group(1)) if match else 0


def pg_dump_binary(server_major: int) -> str:
    """A pg_dump at least as new as the server: the machine's for its own PostgreSQL, the one
    pgserver ships for the embedded server."""
    candidates = [f"/usr/lib/postgresql/{server_major}/bin/pg_dump"]
    try:
        import pgserver

        candidates.append(str(Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_dump"))
    except ImportError:
        pass
    if found := shutil.which("pg_dump"):
        candidates.append(found)
    for candidate in candidates:
        if Path(candidate).exists() and _major(candidate) >= server_major:
            return candidate
    raise RuntimeError(f"no pg_dump for PostgreSQL {server_major} among {candidates}")


def pg_dump(alias: str = "default") -> str:
    connection = connections[alias]
    connection.ensure_connection()
    server_major = connection.pg_version // 10000
    params = connection.get_connection_params()
    args = [pg_dump_binary(server_major), "--no-owner", "--dbname", params["dbname"]]
    host = params.get("host")
    if host:
        args += ["--host", host]
    if params.get("port"):
        args += ["--port", str(params["port"])]
    if params.get("user"):
        args += ["--username", params["user"]]
    env = {"PGPASSWORD": params.get("password") or ""}
    result = subprocess.run(args, capture_output=True, text=True, check=True, env=env, timeout=300)
    return result.stdout


def redis_dump() -> str:
    """Every key and value of the Redis database the project uses (cache and broker)."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    parts: list[str] = []
    for key in client.scan_iter(count=1000):
        kind = client.type(key).decode()
        if kind == "string":
            value: object = client.get(key)
        elif kind == "list":
            value = client.lrange(key, 0, -1)
        elif kind == "hash":
            value = client.hgetall(key)
        elif kind == "set":
            value = client.smembers(key)
        elif kind == "zset":
            value = client.zrange(key, 0, -1)
        else:
            value = client.dump(key)
        parts.append(f"{key!r}={value!r}")
    return "\n".join(parts)
