"""Admin for the conversation store.

The admin is a human surface like any page: it shows projections (Block rows), never
``Message.raw_ciphertext``, which holds the deliberation, encrypted, for replay.

One module per concern: ``base.py`` (``AuditedAdmin``: every write through an audited service;
``ReadOnlyAdmin``), ``store.py`` (conversations, exchanges, unknown block types, re-projection
jobs: read-only), ``config.py`` (service tokens, field policies and their preview, tool links,
queues), ``reviews.py`` (review grants and alerts). A new writable admin subclasses
``AuditedAdmin`` (tests/console/test_admin_writes.py fails otherwise).
"""

from . import config, monitoring, reviews, store
from .base import AuditedAdmin, ReadOnlyAdmin

__all__ = ["AuditedAdmin", "ReadOnlyAdmin", "config", "monitoring", "reviews", "store"]
