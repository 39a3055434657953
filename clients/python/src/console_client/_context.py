"""Which conversation a provider call belongs to: a context variable set by ``conversation()``.

A context variable, not a thread-local, so each asyncio task sees the conversation of the code
that created it, and a thread sees only what it entered itself (a thread pool's worker does not
inherit the caller's context: enter ``conversation()`` in the worker, or run it through
``contextvars.copy_context().run``). Nothing of it is ever added to the provider request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

# The console's limits (POST /api/v1/exchanges): checked here so a mistake shows where the
# conversation is named, not as exchanges the console refuses later.
MAX_ID_CHARS = 200
MAX_QUEUE_CHARS = 100
MAX_LABELS_CHARS = 4096


@dataclass(frozen=True)
class Conversation:
    """The chat backend's ids for the exchanges made inside ``conversation()``."""

    id: str
    customer: str
    labels: Mapping[str, Any] = field(default_factory=dict)


_current: ContextVar[Conversation | None] = ContextVar("console_client_conversation", default=None)


def current() -> Conversation | None:
    return _current.get()


def _check_id(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"console_client.conversation: {name} must be a str, not {type(value)}")
    if not 0 < len(value) <= MAX_ID_CHARS:
        raise ValueError(
            f"console_client.conversation: {name} must be 1 to {MAX_ID_CHARS} characters"
        )
    return value


def _check_labels(labels: object) -> dict[str, Any]:
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise TypeError("console_client.conversation: labels must be a mapping")
    out = dict(labels)
    queue = out.get("queue")
    if queue is not None and (not isinstance(queue, str) or not 0 < len(queue) <= MAX_QUEUE_CHARS):
        raise ValueError(
            f"console_client.conversation: labels['queue'] must be a string of 1 to "
            f"{MAX_QUEUE_CHARS} characters"
        )
    try:
        size = len(json.dumps(out, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"console_client.conversation: labels must be JSON: {exc}") from None
    if size > MAX_LABELS_CHARS:
        raise ValueError("console_client.conversation: labels are limited to 4 KB of JSON")
    return out


@contextmanager
def conversation(
    id: str, *, customer: str, labels: Mapping[str, Any] | None = None
) -> Iterator[Conversation]:
    """Provider calls made inside this block are posted as exchanges of conversation ``id``,
    of the data subject ``customer``, with ``labels`` (``{"queue": "billing"}`` puts the
    conversation in a queue).

    This is the one place the client raises: a wrong type or an id the console would refuse
    is a programming mistake, better seen where it is made than as exchanges lost later.
    """
    value = Conversation(
        _check_id("id", id), _check_id("customer", customer), _check_labels(labels)
    )
    token = _current.set(value)
    try:
        yield value
    finally:
        _current.reset(token)
