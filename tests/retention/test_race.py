"""An exchange racing an erasure: the ingest guards run once the conversation is locked
(conversations/ingest/guards.py), so an exchange either commits before the erasure takes the lock
(and is erased with the rest) or is refused with 410. Nothing of it survives either way.

Real concurrency: the API runs in a thread, the erasure in another, each on its own database
session; a third session holds a lock to order them, and the test waits on pg_stat_activity
until each is blocked where it should be.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from django.db import connections
from rest_framework.test import APIClient

from conversations.keystore.routers import KEYS_DB
from conversations.models import Conversation, DataKey, Message
from conversations.services import service_token_create
from retention.models import DeletionRequest, Tombstone
from retention.services import conversation_erase, deletion_request_submit
from tests.conftest import post_json
from tests.factories import EXCHANGES_URL as URL
from tests.factories import ExchangeBodyFactory, post_exchange

pytestmark = [pytest.mark.django_db(transaction=True, databases="__all__")]

CONVERSATION, CUSTOMER = "conv-race-71c2", "cus-race-0b9e"


def _raw(*, autocommit: bool = False) -> psycopg.Connection[Any]:
    """A session of its own on the test database (autocommit for the watcher: inside a
    transaction, pg_stat_activity would keep showing its first snapshot)."""
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    return psycopg.connect(**params, autocommit=autocommit)


def _lock_waiters(watcher: psycopg.Connection[Any]) -> int:
    row = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    ).fetchone()
    assert row is not None
    return int(row[0])


def _wait_waiters(watcher: psycopg.Connection[Any], n: int) -> None:
    deadline = time.monotonic() + 20
    while _lock_waiters(watcher) < n:
        if time.monotonic() > deadline:
            sessions = watcher.execute(
                "SELECT pid, state, wait_event_type, left(query, 60), pg_blocking_pids(pid)"
                " FROM pg_stat_activity WHERE backend_type = 'client backend'"
            ).fetchall()
            raise AssertionError(f"never saw {n} sessions waiting on a lock: {sessions!r}")
        time.sleep(0.02)


@contextmanager
def _thread(fn: Callable[[], Any]) -> Iterator[dict[str, Any]]:
    """Run ``fn`` in a thread with its own database sessions; its result (or exception) in the
    yielded dict once the block ends."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = fn()
        except BaseException as exc:  # re-raised in the test's thread
            out["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield out
    finally:
        thread.join(timeout=30)
    assert not thread.is_alive()
    if "error" in out:
        raise out["error"]


def _api() -> APIClient:
    _, token = service_token_create(name="race")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api


def _nothing_left(pk: int) -> None:
    assert not Conversation.objects.filter(external_id=CONVERSATION).exists()
    assert not Message.objects.filter(conversation_id=pk).exists()
    assert not DataKey.objects.using(KEYS_DB).exists()


def test_an_exchange_waiting_on_the_conversation_when_the_tombstone_commits_is_refused() -> None:
    """The exchange reached the conversation's lock before the erasure committed its tombstone
    (a guard run before the lock would have let it through): it is refused, 410."""
    api = _api()
    post_exchange(api, conversation=CONVERSATION, customer=CUSTOMER, text="MARK-RACE-1")
    pk = Conversation.objects.get(external_id=CONVERSATION).pk
    with _raw() as holder, _raw(autocommit=True) as watcher:
        holder.execute("SELECT 1 FROM conversations_conversation WHERE id = %s FOR UPDATE", [pk])
        body = ExchangeBodyFactory(conversation=CONVERSATION, customer=CUSTOMER, text="MARK-RACE-2")
        with _thread(lambda: post_json(api, URL, body)) as posted:
            _wait_waiters(watcher, 1)  # the exchange, on the conversation's row
            with _thread(lambda: conversation_erase(pk)) as erased:
                _wait_waiters(watcher, 2)  # the erasure too, its tombstone committed
                assert Tombstone.objects.filter(kind="conversation").exists()
                holder.commit()
    assert posted["result"].status_code == 410, posted["result"].content
    assert posted["result"].json()["error"] == "gone"
    assert erased["result"][1] == CONVERSATION
    _nothing_left(pk)
    assert Tombstone.objects.get(kind="conversation").refused_count == 1


def test_an_exchange_arriving_while_the_erasure_holds_the_lock_does_not_revive_it() -> None:
    """The erasure holds the conversation (rows deleted, not yet committed) when the exchange
    arrives; once the erasure commits, the exchange's upsert would create the conversation anew:
    the guard, after the lock, refuses it."""
    api = _api()
    post_exchange(api, conversation=CONVERSATION, customer=CUSTOMER, text="MARK-RACE-1")
    pk = Conversation.objects.get(external_id=CONVERSATION).pk
    request = deletion_request_submit(conversations=[CONVERSATION], reason="race")
    with _raw() as holder, _raw(autocommit=True) as watcher:
        # The erase transaction ends by updating the request's counts: hold that row.
        holder.execute(
            "SELECT 1 FROM retention_deletionrequest WHERE id = %s FOR UPDATE", [request.pk]
        )
        with _thread(lambda: conversation_erase(pk, request_id=request.pk)) as erased:
            _wait_waiters(watcher, 1)  # the erasure, its rows deleted, on the request row
            body = ExchangeBodyFactory(
                conversation=CONVERSATION, customer=CUSTOMER, text="MARK-RACE-2"
            )
            with _thread(lambda: post_json(api, URL, body)) as posted:
                _wait_waiters(watcher, 2)  # the exchange, on the conversation's row
                holder.commit()
    assert erased["result"][1] == CONVERSATION
    assert posted["result"].status_code == 410, posted["result"].content
    _nothing_left(pk)
    assert DeletionRequest.objects.get(pk=request.pk).conversations_erased == 1


def test_a_new_conversation_in_flight_is_erased_with_its_customer() -> None:
    """A customer's erasure while an exchange creating a new conversation of theirs is in
    flight (past the guard, not committed): the erasure waits at the ingest barrier until the
    exchange commits, then erases the new conversation too. Without the barrier it would read
    its targets without it and complete, and the conversation would outlive the receipt."""
    from conversations.models import ServiceToken
    from retention.models import Receipt
    from retention.services import deletion_request_claim, deletion_request_execute

    api = _api()
    post_exchange(api, conversation=CONVERSATION, customer=CUSTOMER, text="MARK-RACE-OLD")
    token = ServiceToken.objects.get(name="race")
    request = deletion_request_submit(customer=CUSTOMER, reason="race")
    with _raw() as holder, _raw(autocommit=True) as watcher:
        # The exchange will stop at its Idempotency-Key row, which this session holds.
        holder.execute(
            "INSERT INTO conversations_idempotencykey"
            " (token_id, key, request_sha256, status_code, response, created_at)"
            " VALUES (%s, 'k-race', '', 201, '{}', now())",
            [token.pk],
        )
        body = ExchangeBodyFactory(
            conversation="conv-race-new-5d1e", customer=CUSTOMER, text="MARK-RACE-NEW"
        )
        with _thread(lambda: post_json(api, URL, body, HTTP_IDEMPOTENCY_KEY="k-race")) as posted:
            _wait_waiters(watcher, 1)  # the exchange: its rows written, not committed
            claimed = deletion_request_claim()
            assert claimed is not None and claimed.pk == request.pk

            def execute() -> Any:
                return deletion_request_execute(request=claimed)

            with _thread(execute) as executed:
                _wait_waiters(watcher, 2)  # the erasure, at the ingest barrier
                holder.rollback()  # the exchange goes on, commits
    assert posted["result"].status_code == 201, posted["result"].content
    assert executed["result"].status == "completed"
    assert not Conversation.objects.filter(customer_external_id=CUSTOMER).exists()
    assert not DataKey.objects.using(KEYS_DB).exists()
    receipt = Receipt.objects.get(request=request)
    assert receipt.conversations == 2
    assert receipt.verification["ok"] is True
