"""Schemathesis over the API's OpenAPI schema: its stateless checks on every operation, with the
chat backend's token (ingest) and the ticketing system's (compliance). Whatever it generates,
valid or not, the API answers in its documented shape and never with a 5xx.

Bounded in CI (``SCHEMATHESIS_EXAMPLES``, default 20 per operation; ``SCHEMATHESIS_EXAMPLES=500``
for a deeper run). Each case goes through the whole Django stack in-process (WSGI), against the
test database.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings

from conversations.services import service_token_create
from tests.factories import ConversationFactory, ExchangeBodyFactory

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "20"))
APP = get_wsgi_application()
RAW = SchemaGenerator().get_schema(request=None, public=True)
schema = schemathesis.openapi.from_dict(RAW)
schema.app = APP  # every case and every probe a check sends go to the app in-process
# Every stateless check but one: "a schema-valid request is accepted" cannot hold for this API,
# whose rules are more than JSON Schema says (the request must be the format's JSON, a customer
# or conversations but not both, a hold's scope names its target). Those 400s are still checked
# for their documented status and shape by the other checks.
EXCLUDED = [schemathesis.checks.positive_data_acceptance]

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _keep_the_test_connection() -> Any:
    """As Django's test client does: the WSGI handler must not close the test's connection at the
    end of each request (the test runs in one transaction)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def tokens(db: Any) -> dict[str, str]:
    """Both scopes' tokens, and the conversation the examples name (c-1), so that reads and
    events reach a stored conversation, not only the 404."""
    _, ingest = service_token_create(name="chat-backend")
    _, compliance = service_token_create(name="desk", scope="compliance")
    ConversationFactory(body=ExchangeBodyFactory(conversation="c-1", customer="u-9"))
    return {"ingest": ingest, "compliance": compliance}


def _scope(path: str) -> str:
    return "compliance" if "/deletion-requests" in path or "/legal-holds" in path else "ingest"


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same cases on every run: CI is repeatable
    suppress_health_check=list(HealthCheck),
)
def test_the_api_holds_its_schema(case: Any, tokens: dict[str, str]) -> None:
    headers = {"Authorization": f"Bearer {tokens[_scope(case.operation.path)]}"}
    case.call_and_validate(headers=headers, excluded_checks=EXCLUDED)
