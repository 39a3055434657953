"""Retention's writes (DESIGN section 7), one module per concern:

- ``tombstones.py``: the keyed hashes of deleted conversations and customers, and the ingest
  guard that refuses their late exchanges (410).
- ``erase.py``: ``conversation_erase``, the one erase path (tombstone, key, rows, in that order).
- ``holds.py``: legal holds placed and released; what an active hold covers.
- ``requests.py``: deletion requests checked, previewed and submitted, their legal deadline.
- ``execution.py``: a request claimed and carried out, chunk by chunk, resumable after a crash.
- ``receipts.py``: the verification scan and the receipt's HMAC.
- ``classes.py``: retention classes saved and deleted (the admin).
- ``clock.py``: one tick of the retention clock (the sweep of expired conversations, then the due
  requests).
- ``base.py``: the error input is refused with, and the actor's user.

Import from the package (``from retention.services import deletion_request_submit``); a module
imports only those listed before it that it needs (``clock`` → ``execution`` → ``erase`` →
``tombstones``), never the package. To add an erase step, see ``erase.py``.
"""

from .base import DeletionInvalid, ReferenceReused
from .classes import retention_class_delete, retention_class_save
from .clock import retention_sweep, retention_tick
from .erase import conversation_erase
from .execution import deletion_request_claim, deletion_request_execute, deletion_request_release
from .holds import legal_hold_place, legal_hold_release
from .receipts import receipt_hmac, receipt_verify, verification_scan
from .requests import (
    deletion_preview,
    deletion_request_submit,
    deletion_request_submit_once,
    legal_deadline,
)
from .tombstones import conversation_hash, tombstone_guard

__all__ = [
    "DeletionInvalid",
    "ReferenceReused",
    "conversation_erase",
    "conversation_hash",
    "deletion_preview",
    "deletion_request_claim",
    "deletion_request_execute",
    "deletion_request_release",
    "deletion_request_submit",
    "deletion_request_submit_once",
    "legal_deadline",
    "legal_hold_place",
    "legal_hold_release",
    "receipt_hmac",
    "receipt_verify",
    "retention_class_delete",
    "retention_class_save",
    "retention_sweep",
    "retention_tick",
    "tombstone_guard",
    "verification_scan",
]
