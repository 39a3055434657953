"""Imported by a Celery worker of the crash test (``celery worker --include``): pauses the erase
at the step named by ``CRASH_AT``, writes that step to the file ``CRASH_MARKER`` and sleeps there,
for the test to SIGKILL the worker at exactly that point.

The steps, in the order an execution reaches them (retention/services/execution.py):

- ``claimed``: the request is claimed (committed: running, with a claim token);
- ``customer_tombstoned``: the customer's tombstone is committed;
- ``key_destroyed``: the first conversation's data key is destroyed (committed in the keys
  database), its rows still there;
- ``rows_deleted``: inside the first conversation's erase transaction, its rows deleted and the
  request's counts added, not yet committed;
- ``conversation_erased``: the first conversation's erase is committed, the others still there;
- ``verified``: the verification scan has run, no receipt yet;
- ``receipt_issued``: the receipt and the completed request are committed, the tick not yet
  acknowledged.

The functions are wrapped when the worker is ready (Django set up), not at import.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from celery.signals import worker_ready

STEPS = (
    "claimed",
    "customer_tombstoned",
    "key_destroyed",
    "rows_deleted",
    "conversation_erased",
    "verified",
    "receipt_issued",
)


def _pause(step: str) -> None:
    Path(os.environ["CRASH_MARKER"]).write_text(step)
    while True:  # until SIGKILL
        time.sleep(60)


def _after(
    modules: list[Any], name: str, step: str, when: Callable[..., bool], *, committed: bool
) -> None:
    """Wrap ``name`` in every module that holds it (a helper is imported by several modules of
    ``retention.services``): pause after it returns when ``when(result, *args)`` holds; with
    ``committed``, once the transaction it ran in has committed."""
    from django.db import transaction

    holders = [m for m in modules if hasattr(m, name)]
    assert holders, name
    original = getattr(holders[0], name)
    assert all(getattr(m, name) is original for m in holders), name

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if when(result, *args, **kwargs):
            if committed:
                transaction.on_commit(lambda: _pause(step))
            else:
                _pause(step)
        return result

    for module in holders:
        setattr(module, name, wrapper)


@worker_ready.connect
def _install(**_: Any) -> None:
    from retention.models import DeletionRequest, Tombstone
    from retention.services import clock, erase, execution, receipts, tombstones

    step = os.environ["CRASH_AT"]
    assert step in STEPS, step
    points: dict[str, tuple[str, Callable[..., bool]]] = {
        "claimed": ("deletion_request_claim", lambda result, **_: result is not None),
        "customer_tombstoned": (
            "tombstone_write",
            lambda result, kind, key_hash: kind == Tombstone.Kind.CUSTOMER,
        ),
        "key_destroyed": ("data_key_destroy", lambda result, conversation_id: result > 0),
        "rows_deleted": ("add_counts", lambda result, total, counts: True),
        "conversation_erased": ("conversation_erase", lambda result, *a, **kw: True),
        "verified": ("verification_scan", lambda result, **kw: True),
        "receipt_issued": (
            "_complete",
            lambda result, *a: result.status == DeletionRequest.Status.COMPLETED,
        ),
    }
    name, when = points[step]
    modules = [clock, erase, execution, receipts, tombstones]
    _after(modules, name, step, when, committed=step == "customer_tombstoned")
