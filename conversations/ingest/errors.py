"""What ingest refuses with, besides a ``FormatError`` for input that does not fit its shape."""

from __future__ import annotations


class IngestConflict(Exception):
    """The request contradicts what is stored (another customer, a reused idempotency key)."""

    def __init__(self, detail: str, *, field: str, code: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.code = code
