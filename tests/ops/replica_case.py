"""The replica router against a real streaming replica: run by tests/ops/test_replica.py in a
pytest process of its own, whose main database is a primary the test made and whose
``DATABASE_REPLICA_URLS`` names that primary's streaming replica (bench/pgcluster.py). Not
collected by the suite itself (its name does not start with ``test_``).

- a page's reads go to the replica, its audit row (and its session) to the primary;
- a review read in the replica scope: its reads on the replica, its data key and its audit row on
  the primary;
- with the replica held behind (``pg_wal_replay_pause()``), a page read right after an erasure
  renders nothing erased, although the replica still holds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import psycopg
import pytest
from django.conf import settings
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from prometheus_client import REGISTRY

from conversations.keystore.routers import KEYS_DB
from conversations.replicas import replica_reads
from conversations.reviews import review_grant_create, review_read
from retention.services import conversation_erase
from tests.factories import ConversationFactory, ExchangeBodyFactory, UserFactory, roles
from tests.ops.replication import (
    caught_up,
    fresh_replica,
    pause_replay,
    resume_replay,
    server,
)
from tests.review.conftest import PURPOSE, SHOWN, anthropic_body

if not getattr(settings, "DATABASE_REPLICAS", None):
    pytest.skip("run by tests/ops/test_replica.py against a replica", allow_module_level=True)

pytestmark = pytest.mark.django_db(transaction=True, databases="__all__")
REPLICA = settings.DATABASE_REPLICAS[0]


@contextmanager
def queries() -> Iterator[dict[str, CaptureQueriesContext]]:
    with ExitStack() as stack:
        yield {
            alias: stack.enter_context(CaptureQueriesContext(connections[alias]))
            for alias in ("default", KEYS_DB, REPLICA)
        }


def sql(captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in captured.captured_queries]


def read(captured: CaptureQueriesContext, table: str) -> bool:
    return any(s.startswith("SELECT") and f'"{table}"' in s for s in sql(captured))


def pages(outcome: str) -> float:
    return REGISTRY.get_sample_value("console_replica_pages_total", {"outcome": outcome}) or 0.0


def test_the_keys_database_is_the_primarys() -> None:
    keys, primary = connections[KEYS_DB].settings_dict, connections["default"].settings_dict
    replica = connections[REPLICA].settings_dict
    assert (keys["HOST"], keys["PORT"]) == (primary["HOST"], primary["PORT"])
    assert replica["PORT"] != primary["PORT"]
    with connections[REPLICA].cursor() as cur:
        cur.execute("SELECT pg_is_in_recovery()")
        assert cur.fetchone()[0] is True


def test_a_page_is_read_on_the_replica_and_audited_on_the_primary(client: Client) -> None:
    roles()
    agent = UserFactory(groups=["support_agent"], queues=["billing"])
    conversation = ConversationFactory(body=ExchangeBodyFactory(text="MARKER-REPLICA-PAGE"))
    client.force_login(agent)
    fresh_replica()
    on_replica = pages("replica")
    with queries() as q:
        response = client.get(f"/conversations/{conversation.pk}/")
    assert response.status_code == 200
    assert "MARKER-REPLICA-PAGE" in response.content.decode()
    assert pages("replica") == on_replica + 1
    # The conversation's rows came from the replica, and only from it.
    for table in ("conversations_conversation", "conversations_message", "conversations_block"):
        assert read(q[REPLICA], table), table
        assert not read(q["default"], table), table
    # The audit row and the session on the primary; nothing of the log on the replica.
    assert any(s.startswith('INSERT INTO "audit_auditevent"') for s in sql(q["default"]))
    assert read(q["default"], "django_session")
    assert not any("audit_" in s or "django_session" in s for s in sql(q[REPLICA]))
    assert not sql(q[KEYS_DB])  # the page decrypts nothing


def test_a_reads_data_key_and_audit_row_go_to_the_primary() -> None:
    roles()
    reviewer = UserFactory(groups=["reviewer"], queues=["billing"])
    admin = UserFactory(groups=["admin"], is_staff=True)
    conversation = ConversationFactory(body=anthropic_body("rep-review"))
    from datetime import timedelta

    from django.utils import timezone

    review_grant_create(
        reviewer=reviewer,
        conversation=conversation,
        purpose=PURPOSE["purpose"],
        reference=PURPOSE["reference"],
        expires_at=timezone.now() + timedelta(days=1),
        granted_by=admin,
    )
    fresh_replica()
    with replica_reads() as scope, queries() as q:
        review = review_read(user=reviewer, conversation_id=conversation.pk, **PURPOSE)
    assert scope.alias == REPLICA and scope.outcome == "replica"
    assert SHOWN["thinking"] in repr(review.exchanges)  # decrypted with the primary's key
    # The stored messages (ciphertext) and the grant read on the replica...
    assert read(q[REPLICA], "conversations_message")
    assert read(q[REPLICA], "conversations_reviewgrant")
    assert not read(q["default"], "conversations_message")
    # ...the data key on the primary's keys database, never on the replica...
    assert read(q[KEYS_DB], "conversations_datakey") or any(
        "conversations_datakey" in s for s in sql(q[KEYS_DB])
    )
    assert not any("conversations_datakey" in s for s in sql(q[REPLICA]))
    # ...and the audit row (and the reviewer's lock) on the primary.
    assert any(s.startswith('INSERT INTO "audit_auditevent"') for s in sql(q["default"]))
    assert not any("audit_" in s for s in sql(q[REPLICA]))


def test_a_page_read_right_after_an_erasure_renders_nothing_erased(client: Client) -> None:
    roles()
    agent = UserFactory(groups=["support_agent"], queues=["billing"])
    erased = ConversationFactory(
        body=ExchangeBodyFactory(
            conversation="rep-erased", customer="cus-rep-erased", text="MARKER-REPLICA-ERASED"
        )
    )
    ConversationFactory(
        body=ExchangeBodyFactory(
            conversation="rep-kept", customer="cus-rep-kept", text="MARKER-REPLICA-KEPT"
        )
    )
    client.force_login(agent)
    fresh_replica()
    with queries() as q:
        before = client.get("/").content.decode()
    assert read(q[REPLICA], "conversations_conversation")  # the list on the replica
    assert "rep-erased" in before and "MARKER-REPLICA-ERASED" in before

    pause_replay()
    try:
        conversation_erase(erased.pk)  # the one erase path; its commit raises the fence
        # The replica, held behind, still holds every erased row.
        with psycopg.connect(**server(REPLICA, connections[REPLICA].settings_dict["NAME"])) as conn:
            held = conn.execute(
                "SELECT count(*) FROM conversations_block WHERE text LIKE %s",
                ["%MARKER-REPLICA-ERASED%"],
            ).fetchone()[0]  # type: ignore[index]
        assert held >= 1
        behind = pages("fence")
        with queries() as q:
            listing = client.get("/")
            detail = client.get(f"/conversations/{erased.pk}/")
        assert listing.status_code == 200
        page = listing.content.decode()
        assert "rep-kept" in page and "MARKER-REPLICA-KEPT" in page
        assert "rep-erased" not in page and "MARKER-REPLICA-ERASED" not in page
        assert "cus-rep-erased" not in page
        assert detail.status_code == 404
        assert "MARKER-REPLICA-ERASED" not in detail.content.decode()
        assert not read(q[REPLICA], "conversations_block")
        assert not read(q[REPLICA], "conversations_conversation")
        assert pages("fence") == behind + 2  # both read on the primary: the replica is behind
    finally:
        resume_replay()
    # Replayed: the replica serves pages again, and has nothing erased either.
    caught_up()
    with queries() as q:
        again = client.get("/").content.decode()
    assert read(q[REPLICA], "conversations_conversation")
    assert "MARKER-REPLICA-ERASED" not in again and "rep-kept" in again
