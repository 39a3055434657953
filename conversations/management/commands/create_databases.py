"""Create the configured databases that do not exist yet (the keys database in particular).

The main database is usually created with the server; the keys database (``KEYS_DATABASE_URL``,
by default ``<main>_keys`` on the same server) is created here, so `migrate` can run on both.
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from psycopg import sql


class Command(BaseCommand):
    help = "Create the main and keys databases if they do not exist (needs CREATEDB)."

    def handle(self, *args: Any, **options: Any) -> None:
        for alias in settings.DATABASES:
            if alias in getattr(settings, "DATABASE_REPLICAS", []):
                # A replica holds what its primary's server holds: nothing to create there.
                continue
            name = settings.DATABASES[alias]["NAME"]
            # The same connection parameters as Django's (host, socket, user...), on the
            # maintenance database: the target may not exist yet.
            params = connections[alias].get_connection_params()
            params["dbname"] = "postgres"
            params.pop("cursor_factory", None)
            params.pop("context", None)
            try:
                with psycopg.connect(**params, autocommit=True) as conn:
                    exists = conn.execute(
                        "SELECT 1 FROM pg_database WHERE datname = %s", [name]
                    ).fetchone()
                    if exists:
                        self.stdout.write(f"{alias}: database {name} exists")
                        continue
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                    self.stdout.write(f"{alias}: created database {name}")
            except psycopg.Error as exc:
                raise CommandError(f"{alias}: cannot create database {name}: {exc}") from None
