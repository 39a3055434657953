"""Hypothesis fuzz of POST /api/v1/exchanges: no input produces a 5xx, and a refused input
stores nothing."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from conversations.formats import names
from conversations.models import Exchange, Message
from tests.conftest import post_json
from tests.conversations.requests import body_for
from tests.providers import fixture_files, load

URL = "/api/v1/exchanges"
pytestmark = pytest.mark.django_db

FUZZ = settings(
    # FUZZ_EXAMPLES=5000 for a longer hunt; the suite runs a quick pass.
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)

SEEDS = [body_for(r, conversation="fuzz") for f in fixture_files() for r in load(f)]


def _mutate(value: Any, path: list[int], replacement: Any) -> Any:
    """Replace the node reached by following ``path`` (indexes into children) by ``replacement``."""
    if not path or not isinstance(value, (dict, list)) or not value:
        return replacement
    if isinstance(value, dict):
        keys = list(value)
        key = keys[path[0] % len(keys)]
        return {**value, key: _mutate(value[key], path[1:], replacement)}
    i = path[0] % len(value)
    return [*value[:i], _mutate(value[i], path[1:], replacement), *value[i + 1 :]]


def _check(api: APIClient, body: Any) -> None:
    before = (Exchange.objects.count(), Message.objects.count())
    response = post_json(api, URL, body)
    assert response.status_code < 500, response.content
    if response.status_code >= 400:
        payload = response.json()
        assert set(payload) == {"error", "detail", "field", "at"}
        assert (Exchange.objects.count(), Message.objects.count()) == before


@FUZZ
@given(body=json_values)
def test_any_json_body(api: APIClient, body: Any) -> None:
    _check(api, body)


@FUZZ
@given(raw=st.binary(max_size=200))
def test_any_bytes(api: APIClient, raw: bytes) -> None:
    _check(api, raw)


@FUZZ
@given(
    seed=st.sampled_from(range(len(SEEDS))),
    part=st.sampled_from(["request", "response"]),
    path=st.lists(st.integers(min_value=0, max_value=50), max_size=8),
    replacement=json_values,
)
def test_a_real_exchange_with_one_node_replaced(
    api: APIClient, seed: int, part: str, path: list[int], replacement: Any
) -> None:
    body = dict(SEEDS[seed])
    if part not in body:
        part = "request"
    body[part] = json.dumps(_mutate(json.loads(body[part]), path, replacement))
    _check(api, body)


@FUZZ
@given(
    seed=st.sampled_from([i for i, b in enumerate(SEEDS) if "stream" in b]),
    cut=st.integers(min_value=0, max_value=10**6),
    junk=st.text(max_size=40),
)
def test_a_real_stream_cut_or_spliced(api: APIClient, seed: int, cut: int, junk: str) -> None:
    body = dict(SEEDS[seed])
    stream = body["stream"]
    cut %= max(len(stream), 1)
    body["stream"] = stream[:cut] + junk + stream[cut:]
    _check(api, body)


@FUZZ
@given(
    envelope=st.fixed_dictionaries(
        {
            "conversation": json_values,
            "customer": json_values,
            "format": st.sampled_from([*names(), "x"]),
            "request": st.text(max_size=50) | json_values,
            "response": st.text(max_size=50) | json_values,
        },
        optional={"labels": json_values, "latency_ms": json_values, "started_at": json_values},
    )
)
def test_envelope_fields_of_any_type(api: APIClient, envelope: dict) -> None:
    _check(api, envelope)
