"""Summaries fetched from the provider at read time, against a fake OpenAI server on loopback:
the fetch, and its failures (a clear message on the page, never a 500)."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest
from django.test import Client

from audit.models import AuditEvent
from conversations.formats import formats
from conversations.reviews import MAX_FETCHES
from conversations.reviews.provider import ProviderError, client, response_retrieve
from tests.review.conftest import (
    HIDDEN,
    PII,
    PURPOSE,
    SHOWN,
    World,
    fetched_response,
    ingest,
    openai_fetch_body,
    review_url,
)
from tests.review.fake_provider import FakeOpenAI, Route, fake_openai

pytestmark = pytest.mark.django_db(databases="__all__")

KEY = "sk-test-review-key-not-real"
# The format whose reviews fetch missing summaries (OpenAI Responses): its transport and fetch.
_FETCHING = [f.profile for f in formats() if f.profile.summary is not None]
assert len(_FETCHING) == 1 and _FETCHING[0].transport is not None
TRANSPORT, SUMMARY = _FETCHING[0].transport, _FETCHING[0].summary


@pytest.fixture
def provider(settings: Any) -> Any:
    with fake_openai() as fake:
        settings.OPENAI_API_KEY = KEY
        settings.OPENAI_BASE_URL = fake.url
        settings.PROVIDER_TIMEOUT_SECONDS = 0.5
        yield fake


def review(client: Client, world: World, conversation: str = "fetch") -> tuple[int, str]:
    world.grant(conversation=conversation)
    client.force_login(world.users["reviewer"])
    response = client.post(review_url(world.conversations[conversation]), PURPOSE)
    return response.status_code, response.content.decode()


def test_a_missing_summary_is_fetched_redacted_and_not_stored(
    client: Client, world: World, provider: FakeOpenAI
) -> None:
    provider.json_route("resp_fetch_ok", fetched_response("resp_fetch_ok"))
    status, html = review(client, world)
    assert status == 200
    assert SHOWN["fetched"] in html
    assert "fetched from the provider at read time" in html
    assert PII["email"] not in html and "[email]" in html
    # Only the stored item's summary: the fetched response's other item is not this exchange's.
    assert "another item" not in html
    assert HIDDEN["encrypted"] not in html
    assert provider.requests == [("/v1/responses/resp_fetch_ok", f"Bearer {KEY}")]
    event = AuditEvent.objects.get(code="review.read")
    assert SHOWN["fetched"] not in json.dumps(event.details)


def test_a_stored_summary_is_not_fetched_again(
    client: Client, world: World, provider: FakeOpenAI
) -> None:
    status, html = review(client, world, "openai")
    assert status == 200 and SHOWN["oai_summary"] in html
    assert provider.requests == []


@pytest.mark.parametrize(
    ("route", "message"),
    [
        (Route(200, b"{}", delay=3.0), "did not answer within 0.5 seconds"),
        (Route(500, b'{"error": "boom"}'), "failed to answer (HTTP 500)"),
        (Route(404, b'{"error": "gone"}'), "no longer has this response"),
        (Route(401, b'{"error": "key"}'), "refused the configured API key (HTTP 401)"),
        (Route(429, b'{"error": "slow down"}'), "rate limiting this key"),
        (Route(200, b"not json " + SHOWN["fetched"].encode()), "not readable JSON"),
        (Route(200, b"[1, 2]"), "not a response object"),
    ],
)
def test_provider_failures_are_explained_not_500(
    client: Client, world: World, provider: FakeOpenAI, route: Route, message: str
) -> None:
    provider.routes["/v1/responses/resp_fetch_ok"] = route
    status, html = review(client, world)
    assert status == 200
    assert "The summary could not be fetched: the provider" in html
    assert message in html
    assert SHOWN["fetched"] not in html  # not even from a body that was not JSON
    # The read is audited all the same: the reviewer saw the exchange and the explanation.
    assert AuditEvent.objects.filter(code="review.read").count() == 1


def test_an_unreachable_provider(client: Client, world: World, settings: Any) -> None:
    with socket.socket() as sock:  # a port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings.OPENAI_API_KEY = KEY
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{port}"
    status, html = review(client, world)
    assert status == 200
    assert "could not be reached (ConnectError)" in html


def test_the_provider_has_no_summary_either(
    client: Client, world: World, provider: FakeOpenAI
) -> None:
    body = fetched_response("resp_fetch_ok")
    body["output"] = [{"id": "rs_resp_fetch_ok", "type": "reasoning", "summary": []}]
    provider.json_route("resp_fetch_ok", body)
    status, html = review(client, world)
    assert status == 200
    assert "The provider has no reasoning summary for this response." in html


def long_conversation(world: World, provider: FakeOpenAI, name: str, exchanges: int) -> None:
    """One conversation of several OpenAI exchanges stored without summaries, each resending the
    history; the fake provider has each one's summary."""
    items: list[Any] = []
    for i in range(exchanges):
        response_id = f"resp_{name}_{i}"
        body = openai_fetch_body(name, response_id)
        request = json.loads(body["request"])
        request["input"] = [*items, {"role": "user", "content": f"Question {i}"}]
        body["request"] = json.dumps(request)
        conversation = ingest(body)
        items = [*request["input"], *json.loads(body["response"])["output"]]
        provider.json_route(response_id, fetched_response(response_id))
    assert conversation.exchanges.count() == exchanges
    world.conversations[name] = conversation


def test_after_a_timeout_the_review_stops_asking(
    client: Client, world: World, provider: FakeOpenAI
) -> None:
    """A provider that does not answer is asked once per review, not once per exchange."""
    long_conversation(world, provider, "slow", 3)
    for path in list(provider.routes):
        provider.routes[path] = Route(200, b"{}", delay=3.0)
    status, html = review(client, world, "slow")
    assert status == 200
    assert len(provider.requests) == 1
    assert html.count("did not answer within 0.5 seconds") == 3
    assert html.count("Not fetched: earlier in this review") == 2


def test_fetches_per_review_are_capped(client: Client, world: World, provider: FakeOpenAI) -> None:
    long_conversation(world, provider, "long", MAX_FETCHES + 2)
    status, html = review(client, world, "long")
    assert status == 200
    assert len(provider.requests) == MAX_FETCHES
    assert html.count(SHOWN["fetched"]) == MAX_FETCHES
    assert html.count(f"a review fetches at most {MAX_FETCHES} exchanges") == 2


def test_the_client_refuses_ids_it_would_have_to_escape(settings: Any) -> None:
    settings.OPENAI_API_KEY = KEY
    with client(TRANSPORT) as http, pytest.raises(ProviderError, match="not one the provider"):
        response_retrieve(http, SUMMARY, "../../v1/files")


def test_the_client_caps_the_body(provider: FakeOpenAI, monkeypatch: Any) -> None:
    monkeypatch.setattr("conversations.reviews.provider.MAX_BODY_BYTES", 100)
    provider.routes["/v1/responses/resp_big"] = Route(200, b'{"a": "' + b"x" * 500 + b'"}')
    with client(TRANSPORT) as http, pytest.raises(ProviderError, match="larger than expected"):
        response_retrieve(http, SUMMARY, "resp_big")


def test_the_client_has_timeouts_and_no_redirects(provider: FakeOpenAI) -> None:
    with client(TRANSPORT) as http:
        assert isinstance(http.timeout, httpx.Timeout)
        assert http.timeout.read == 0.5 and http.timeout.connect == 0.5
        assert http.follow_redirects is False
