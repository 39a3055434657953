"""The ingest body has one definition (conversations/ingest/body.py) that checks it and documents
it: the OpenAPI page shows that schema, an example per format and every error code; these tests
fail when the page, the schema, the examples, the codes and the checks disagree."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from conversations import formats
from conversations.formats import FormatError
from conversations.formats.base import FORMAT_ERRORS
from conversations.ingest.body import ERRORS, FIELDS, exchange_input, json_schema
from conversations.ingest.examples import EXAMPLES
from tests.conftest import post_json

URL = "/api/v1/exchanges"
ROOT = Path(__file__).resolve().parents[2]


def _as_json_schema(schema: Any) -> Any:
    """OpenAPI 3.0's ``nullable`` as JSON Schema's type list (for an independent validator)."""
    if isinstance(schema, list):
        return [_as_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _as_json_schema(v) for k, v in schema.items() if k not in ("nullable", "example")}
    if schema.get("nullable"):
        out["type"] = [schema["type"], "null"]
    return out


VALIDATOR = jsonschema.Draft202012Validator(
    _as_json_schema(json_schema()), format_checker=jsonschema.FormatChecker()
)


def _accepted(body: Any) -> bool:
    try:
        exchange_input(body)
    except FormatError as exc:
        assert exc.code in ERRORS, f"{exc.code} is raised but not documented"
        return False
    return True


# --- the page shows the one schema ------------------------------------------------------------


@pytest.fixture
def page(client: Any) -> dict[str, Any]:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    return yaml.safe_load(response.content)["paths"][URL]["post"]


def test_the_page_shows_the_schema_of_the_one_definition(page: dict[str, Any]) -> None:
    content = page["requestBody"]["content"]["application/json"]
    assert content["schema"] == json_schema()
    described = content["schema"]["properties"]
    assert list(described) == [f.name for f in FIELDS]
    for name, field in described.items():
        assert len(field["description"]) > 20, name  # a sentence, not a placeholder
    assert set(content["schema"]["required"]) == {f.name for f in FIELDS if f.required}
    assert described["format"]["enum"] == formats.names()


def test_the_page_shows_an_example_per_format_and_each_is_stored(
    page: dict[str, Any], api: APIClient
) -> None:
    shown = page["requestBody"]["content"]["application/json"]["examples"]
    assert {e["value"]["format"] for e in shown.values()} == set(formats.names())
    assert set(EXAMPLES) == set(formats.names()), "every registered format has an example"
    # Each format's example is its kit's, in a conversation of its own.
    assert len({e["conversation"] for e in EXAMPLES.values()}) == len(EXAMPLES)
    for fmt, example in EXAMPLES.items():
        assert example == dict(formats.get(fmt).kit.example)
        assert example["format"] == fmt
        VALIDATOR.validate(example)
        response = post_json(api, URL, example)
        assert response.status_code == 201, (fmt, response.content)


def test_the_page_describes_every_error(page: dict[str, Any]) -> None:
    responses = page["responses"]
    assert {"201", "200", "400", "401", "409", "410", "413"} <= set(responses)
    for status, response in responses.items():
        assert response["description"], status
    described = responses["400"]["description"]
    for code in (*ERRORS, *FORMAT_ERRORS):
        assert f"`{code}`" in described, code


# --- the codes documented are the codes raised ------------------------------------------------


def _bounds_codes(name: str, seen: set[str] | None = None) -> set[str]:
    """The codes of every OutOfBounds that ``bounds.<name>`` raises, through the bounds functions
    it calls (OutOfBounds' default: ``out_of_range``)."""
    seen = set() if seen is None else seen
    if name in seen:
        return set()
    seen.add(name)
    tree = ast.parse((ROOT / "conversations" / "bounds.py").read_text())
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    found: set[str] = set()
    for node in ast.walk(defs[name]):
        if not isinstance(node, ast.Call):
            continue
        called = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
        if called == "OutOfBounds":
            code = next((k.value for k in node.keywords if k.arg == "code"), None)
            found.add(code.value if isinstance(code, ast.Constant) else "out_of_range")
        elif called in defs:
            found |= _bounds_codes(called, seen)
    return found


def _codes_raised(path: Path) -> set[str]:
    """The ``code`` of every FormatError a module raises (FormatError's default: ``invalid``),
    and those of the ``bounds`` checks it calls (their codes pass through)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "bounds":
            found |= _bounds_codes(func.attr)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("FormatError", "fail"):
            if getattr(node.func, "id", "") == "fail":
                first = node.args[0]
                if isinstance(first, ast.Constant):
                    found.add(first.value)
                continue
            code = next((k.value for k in node.keywords if k.arg == "code"), None)
            if code is None:
                found.add("invalid")
            elif isinstance(code, ast.Constant):
                found.add(code.value)
    return found


def test_every_format_error_code_is_documented_and_raised() -> None:
    raised = set()
    for module in sorted((ROOT / "conversations" / "formats").rglob("*.py")):
        raised |= _codes_raised(module)
    assert raised == set(FORMAT_ERRORS)


def test_every_body_error_code_is_documented_and_raised() -> None:
    ingest = ROOT / "conversations" / "ingest"
    raised = _codes_raised(ingest / "body.py") | _codes_raised(ingest / "fields.py")
    # ``fail(exc.code, ...)`` passes the code of check_output through: response_or_stream.
    assert raised | {"response_or_stream"} == set(ERRORS)


# --- the schema and the checks accept the same bodies -----------------------------------------

GOOD = EXAMPLES["anthropic.messages"]
TEXT_FIELDS = [f.name for f in FIELDS if f.kind in ("text", "format")]
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=2**31 + 3),
    st.sampled_from([-1, 0, 2**31 - 1, 2**31, 1.5]),
    st.sampled_from(["", "x", "a" * 200, "a" * 201, "2026-11-29T10:00:00Z", "yesterday"]),
    st.sampled_from(["/v1/messages", "/v1 x", "AAAA", "AAA=", "AA=A", "/" + "a" * 2048]),
    st.sampled_from([[], {}, {"queue": "billing"}, {"queue": ""}, {"queue": 3}, {"other": 1}]),
    st.sampled_from(formats.names()),
)


def _mutations() -> st.SearchStrategy[dict[str, Any]]:
    names = [f.name for f in FIELDS] + ["unknown"]
    return st.dictionaries(
        st.sampled_from(names), st.one_of(ODD_VALUES, st.just(...)), max_size=4
    ).map(_apply)


def _apply(changes: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(GOOD)
    for name, value in changes.items():
        if value is ...:
            body.pop(name, None)
        else:
            body[name] = value
    return body


def _schema_can_say(body: dict[str, Any]) -> bool:
    """Bodies whose verdict JSON Schema alone gives: no timestamp string but a valid one (the
    validator here may not check ``format: date-time``; ``test_started_at_...`` does), no labels
    over 4 KB (JSON Schema cannot count them)."""
    at = body.get("started_at")
    if isinstance(at, str) and at != GOOD["started_at"]:
        return False
    return len(json.dumps(body.get("labels") or {})) <= 4096


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
def test_the_schema_and_the_checks_accept_the_same_bodies(body: dict[str, Any]) -> None:
    if not _schema_can_say(body):
        return
    assert _accepted(body) == VALIDATOR.is_valid(body), (
        body,
        [e.message for e in VALIDATOR.iter_errors(body)],
    )


@pytest.mark.parametrize("name", TEXT_FIELDS)
def test_each_string_field_refuses_what_its_schema_refuses(name: str) -> None:
    for value in (None, 1, "", "x" * 201):
        body = {**GOOD, name: value}
        if name in ("response", "stream", "stream_base64") and value is None:
            continue  # absent-or-null: covered by the property above
        assert _accepted(body) == VALIDATOR.is_valid(body), (name, value)


def test_labels_over_4_kb_are_refused_with_the_documented_code() -> None:
    with pytest.raises(FormatError) as info:
        exchange_input({**GOOD, "labels": {"note": "x" * 5000}})
    assert (info.value.code, info.value.field, info.value.at) == ("too_large", "labels", "$.labels")
    assert "4 KB" in next(f.description for f in FIELDS if f.name == "labels")


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("2026-11-29T10:00:00Z", True),
        ("2026-11-29T10:00:00+01:00", True),
        (None, True),
        ("yesterday", False),
        ("", False),
        (1764410400, False),
    ],
)
def test_started_at_is_an_rfc_3339_timestamp_or_null(value: Any, accepted: bool) -> None:
    assert _accepted({**GOOD, "started_at": value}) is accepted
    assert next(f for f in FIELDS if f.name == "started_at").kind == "timestamp"
    assert json_schema()["properties"]["started_at"]["format"] == "date-time"


# --- the endpoint and the binary stream -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("/v1/messages", True),
        ("/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse", True),
        ("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream", True),
        ("v1/messages", False),
        ("https://api.example.com/v1/messages", False),
        ("/v1/mess ages", False),
        ("", False),
        (12, False),
    ],
)
def test_the_endpoint_is_a_path_without_its_host(value: Any, accepted: bool) -> None:
    assert _accepted({**GOOD, "endpoint": value}) is accepted
    assert VALIDATOR.is_valid({**GOOD, "endpoint": value}) is accepted
    if not accepted and isinstance(value, str) and value:
        with pytest.raises(FormatError) as info:
            exchange_input({**GOOD, "endpoint": value})
        assert (info.value.code, info.value.field, info.value.at) == (
            "invalid",
            "endpoint",
            "$.endpoint",
        )


@pytest.mark.parametrize(
    ("value", "code"),
    [("AAAA", None), ("AAA=", None), ("AA==", None), ("AA=A", "not_base64"), ("A", "not_base64")],
)
def test_stream_base64_is_padded_standard_base64(value: str, code: str | None) -> None:
    body = {k: v for k, v in GOOD.items() if k != "response"}
    body["stream_base64"] = value
    assert VALIDATOR.is_valid(body) is (code is None)
    if code is None:
        assert exchange_input(body).stream_base64 == value
        return
    with pytest.raises(FormatError) as info:
        exchange_input(body)
    assert (info.value.code, info.value.field, info.value.at) == (
        code,
        "stream_base64",
        "$.stream_base64",
    )


@pytest.mark.parametrize(
    "outputs",
    [
        {"stream_base64": "AAAA", "response": "{}"},
        {"stream_base64": "AAAA", "stream": "data: {}\n\n"},
        {"stream_base64": "AAAA", "stream": "x", "response": "{}"},
    ],
)
def test_exactly_one_of_response_stream_and_stream_base64(outputs: dict[str, str]) -> None:
    body = {**{k: v for k, v in GOOD.items() if k != "response"}, **outputs}
    assert not VALIDATOR.is_valid(body)
    with pytest.raises(FormatError) as info:
        exchange_input(body)
    assert info.value.code == "response_or_stream"


@pytest.mark.django_db
def test_a_binary_stream_for_a_text_format_is_refused_and_nothing_stored(api: APIClient) -> None:
    from conversations.models import Exchange

    for fmt in formats.names():
        if formats.get(fmt).binary_stream:
            continue
        body = {**EXAMPLES[fmt], "conversation": f"bin-{fmt}", "stream_base64": "AAAA"}
        body.pop("response", None)
        body.pop("stream", None)
        response = post_json(api, URL, body)
        assert response.status_code == 400, response.content
        assert response.json()["error"] == "stream_kind"
        assert response.json()["field"] == "stream_base64"
    assert not Exchange.objects.filter(conversation__external_id__startswith="bin-").exists()
