"""Shared fixtures: a service-token API client, row counts of every table, provider payloads."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from rest_framework.test import APIClient

from conversations.services import service_token_create


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


def table_counts() -> dict[str, int]:
    """Rows in every table of every installed model: to assert that nothing was stored."""
    counts = {}
    with connection.cursor() as cur:
        for model in apps.get_models(include_auto_created=True):
            table = model._meta.db_table
            cur.execute(f'SELECT count(*) FROM "{table}"')  # noqa: S608 (table names from models)
            counts[table] = cur.fetchone()[0]
    return counts


@pytest.fixture
def counts() -> Callable[[], dict[str, int]]:
    return table_counts
