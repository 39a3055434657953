"""Defence in depth for rows already stored out of range (an older version, a restore): a
``timestamptz`` that Python cannot hold (after year 9999, before year 1) is read as the nearest
instant every page can show (``bounds.clamp``) instead of failing the whole query. New values
never get there: ``bounds`` refuses them at the boundary. Installed on every new connection by
``ConversationsConfig.ready``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.backends.signals import connection_created
from psycopg import DataError
from psycopg.types.datetime import TimestamptzBinaryLoader, TimestamptzLoader

from .bounds import CLAMP_MAX, CLAMP_MIN


def _clamped(data: Any, error: DataError) -> datetime:
    text = bytes(data).decode("ascii", "replace")
    return CLAMP_MIN if "BC" in text or "too small" in str(error) else CLAMP_MAX


class ClampingTimestamptzLoader(TimestamptzLoader):
    timezone: Any = None  # the connection's (Django's loaders compare it before replacing)

    def load(self, data: Any) -> datetime:
        try:
            value = super().load(data)
        except DataError as exc:
            value = _clamped(data, exc)
        return value.astimezone(self.timezone) if self.timezone is not None else value


class ClampingTimestamptzBinaryLoader(TimestamptzBinaryLoader):
    timezone: Any = None

    def load(self, data: Any) -> datetime:
        try:
            value = super().load(data)
        except DataError as exc:
            value = _clamped(b"", exc)
        return value.astimezone(self.timezone) if self.timezone is not None else value


def install(sender: Any, connection: Any, **kwargs: Any) -> None:
    """Register the clamping loaders on a new PostgreSQL connection (psycopg 3)."""
    if connection.vendor != "postgresql" or not hasattr(connection.connection, "adapters"):
        return
    zone = connection.timezone

    class Text(ClampingTimestamptzLoader):
        timezone = zone

    class Binary(ClampingTimestamptzBinaryLoader):
        timezone = zone

    adapters = connection.connection.adapters
    adapters.register_loader("timestamptz", Text)
    adapters.register_loader("timestamptz", Binary)


def connect() -> None:
    connection_created.connect(install, dispatch_uid="conversations.timestamps")
