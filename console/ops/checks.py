"""``manage.py check --database default`` (run by ``migrate``) refuses a database stopped partway
through the migrations a squashed one replaces: Django would take the app for having nothing
to apply, and its missing steps would never run (docs/operations.md, "Upgrading")."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.db import DatabaseError, connections
from django.db.migrations.loader import MigrationLoader


@checks.register(checks.Tags.database)
def squashed_migrations_partly_applied(
    app_configs: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    for alias in kwargs.get("databases") or []:
        try:
            loader = MigrationLoader(connections[alias], replace_migrations=False)
        except DatabaseError:
            continue  # nothing recorded yet: migrate makes the table
        applied = set(loader.applied_migrations)
        for key, migration in loader.disk_migrations.items():
            replaced = set(migration.replaces or ())
            done = replaced & applied
            if not done or done == replaced or key in applied:
                continue
            missing = ", ".join(name for _, name in sorted(replaced - done))
            errors.append(
                checks.Error(
                    f"database {alias!r} applied {len(done)} of the {len(replaced)} migrations "
                    f"{key[0]}.{key[1]} replaces; missing: {missing}",
                    hint="migrate with a checkout from before the squash first "
                    "(docs/operations.md, Upgrading)",
                    id="ops.E001",
                )
            )
    return errors
