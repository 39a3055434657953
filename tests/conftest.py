"""Shared fixtures: a service-token API client, row counts of every table, provider payloads."""

from __future__ import annotations

import copy
import itertools
import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from django.apps import apps
from django.db import connections, router
from rest_framework.test import APIClient

from conversations.keystore.keys import data_key_for, decrypt_message
from conversations.models import Message
from conversations.projection.policies import policies_changed
from conversations.services import service_token_create


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every database test may use both databases: the main one and the keys one (data keys live
    apart, console/settings.py). Tests asking for ``db`` get a django_db mark saying so.

    Tests that start real Celery workers and beats (the ``clock`` fixture) share one private
    Redis database, whose queue they flush: under pytest-xdist they run in one group, on one
    worker, one after the other."""
    for item in items:
        if "clock" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("celery"))
        marker = item.get_closest_marker("django_db")
        fixtures = getattr(item, "fixturenames", ())
        if marker is None and not {"db", "transactional_db", "admin_client", "client"} & set(
            fixtures
        ):
            continue
        kwargs = dict(marker.kwargs) if marker is not None else {}
        if "transactional_db" in fixtures:
            kwargs["transaction"] = True
        kwargs["databases"] = "__all__"
        item.add_marker(pytest.mark.django_db(**kwargs), append=False)


@pytest.fixture(autouse=True, scope="session")
def _flush_past_the_audit_triggers() -> Any:
    """The audit tables refuse TRUNCATE (a trigger of the audit app's migration), and a
    transactional test's flush empties every table with TRUNCATE. For the test databases only, the
    flush runs with ``session_replication_role = replica`` (which skips triggers and which only a
    superuser can set), so the refusal stays in force everywhere else, including the tests that
    check it."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.execute_sql_flush

    def execute_sql_flush(self: DatabaseOperations, sql_list: list[str]) -> None:
        original(self, ["SET LOCAL session_replication_role = replica", *sql_list])

    DatabaseOperations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]
    yield
    DatabaseOperations.execute_sql_flush = original  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    """Real hashing costs a third of a second per user: too slow for fixtures making many."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_guardian_content_types() -> Any:
    """django-guardian memoises permission content types for the process (an lru_cache), but a
    transactional test's flush recreates them under new ids: clear it around every test."""
    from django.contrib.contenttypes.models import ContentType
    from guardian.shortcuts import _get_ct_cached

    # Django's own content type cache too: it would hand guardian the ids from before a flush.
    ContentType.objects.clear_cache()
    _get_ct_cached.cache_clear()
    yield
    ContentType.objects.clear_cache()
    _get_ct_cached.cache_clear()


_namespaces = itertools.count()


@pytest.fixture(autouse=True)
def _own_cache_namespace(settings: Any) -> None:
    """Each test reads and writes the shared cache (Redis) under a key prefix of its own: a
    counter one test fills (the share page's rate limit per address, a window of a minute) is
    never another's, in this process or the other workers'. The servers and workers a test
    starts keep the configured prefix."""
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["KEY_PREFIX"] = f"test-{os.getpid()}-{next(_namespaces)}"
    settings.CACHES = caches


@pytest.fixture(autouse=True)
def _fresh_known_queues() -> None:
    """Ingest remembers the queues whose rows it created; a test's rows go with it (rolled back,
    or truncated by a transactional test's flush, which sends no signal): forget them."""
    from conversations.ingest.store import known_queues_forget

    known_queues_forget()


@pytest.fixture(autouse=True)
def _fresh_policy_cache() -> None:
    """A test's policies are rolled back with it: no process cache may outlive the test."""
    policies_changed()


@pytest.fixture
def service_token(db: Any) -> str:
    _, token = service_token_create(name="chat-backend")
    return token


@pytest.fixture
def api(service_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {service_token}")
    return client


def post_json(client: APIClient, url: str, body: Any, **extra: Any) -> Any:
    """POST a body given as a dict (serialised here) or as raw str/bytes (sent as is)."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body, ensure_ascii=False)
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogatepass")
    return client.generic("POST", url, body, content_type="application/json", **extra)


def database_url(alias: str) -> str:
    """A DATABASE_URL naming the test database of ``alias``, for a subprocess: TCP, or a Unix
    socket directory (embedded server)."""
    params = connections[alias].get_connection_params()
    host = str(params.get("host") or "")
    port = params.get("port") or 5432
    user = params.get("user") or ""
    password = params.get("password") or ""
    if host.startswith("/") or not host:
        socket = host or "/var/run/postgresql"
        return f"postgres://{user}:{password}@/{params['dbname']}?host={socket}&port={port}"
    return f"postgres://{user}:{password}@{host}:{port}/{params['dbname']}"


def table_counts() -> dict[str, int]:
    """Rows in every table of every installed model: to assert that nothing was stored."""
    counts = {}
    for model in apps.get_models(include_auto_created=True):
        alias = router.db_for_read(model) or "default"
        table = model._meta.db_table
        with connections[alias].cursor() as cur:
            cur.execute(f'SELECT count(*) FROM "{table}"')  # noqa: S608 (table names from models)
            counts[f"{alias}.{table}"] = cur.fetchone()[0]
    return counts


def raw_of(message: Message) -> str:
    """A stored message's raw text, decrypted with its conversation's data key."""
    key = data_key_for(message.conversation_id)
    return decrypt_message(key, message.conversation_id, message.sequence, message.raw_ciphertext)


@pytest.fixture
def counts() -> Callable[[], dict[str, int]]:
    return table_counts


@pytest.fixture(autouse=True, scope="session")
def _audit_witness_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Processes the tests start (servers, workers) append their digest heads to a witness of
    this session, not to the developer's var/audit-witness.log."""
    import os

    path = tmp_path_factory.mktemp("witness") / "audit-witness.log"
    before = os.environ.get("AUDIT_WITNESS")
    os.environ["AUDIT_WITNESS"] = str(path)
    yield path
    if before is None:
        os.environ.pop("AUDIT_WITNESS", None)
    else:
        os.environ["AUDIT_WITNESS"] = before


@pytest.fixture(autouse=True)
def _audit_witness_of_the_test(
    settings: Any, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """Each test's database starts empty: its digests are witnessed in a file of its own, by
    this process and by those it starts."""
    settings.AUDIT_WITNESS = str(tmp_path_factory.mktemp("witness") / "audit-witness.log")
    monkeypatch.setenv("AUDIT_WITNESS", settings.AUDIT_WITNESS)
    return settings.AUDIT_WITNESS
