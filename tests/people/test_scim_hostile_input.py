"""SCIM under hostile input: every endpoint answers a SCIM error (RFC 7644 section 3.12, its
``status`` a string) in 4xx where the request was at fault, never a 500, never a database's
text, and stores nothing: filters nested 500 deep, integers of 5,000 digits, bytes that are not
UTF-8, JSON nested 100,000 deep, a 9 MB body, bodies that are not objects, 21 e-mail
addresses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from console.people.models import DirectoryGroup, Person

from .test_scim import GROUP_URN, SCIM, USER_URN, Scim, new_user, scim

__all__ = ["scim"]

User = get_user_model()
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"


def refused(response: Any, status: int, scim_type: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == SCIM
    body = response.json()
    assert body["schemas"] == [ERROR_URN]
    assert body["status"] == str(status)
    if scim_type is not None:
        assert body.get("scimType") == scim_type, body
    return dict(body)


def stored() -> tuple[int, int, int]:
    return User.objects.count(), Person.objects.count(), DirectoryGroup.objects.count()


def user_body(**extra: Any) -> dict[str, Any]:
    return {"schemas": [USER_URN], "userName": "pat@example.com", "active": True, **extra}


@pytest.mark.parametrize("path", ["Users", "Groups"])
def test_a_filter_nested_500_deep_is_a_400(scim: Scim, path: str) -> None:
    deep = "(" * 500 + 'displayName eq "x"' + ")" * 500
    body = refused(scim.get(path, filter=deep), 400)
    assert "nests at most" in body["detail"]
    # As a POST .search too.
    search = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], "filter": deep}
    refused(scim.post(f"{path}/.search", search), 400)


@pytest.mark.parametrize(
    ("raw", "scim_type", "says"),
    [
        (
            json.dumps(user_body())[:-1] + ', "externalId": ' + "7" * 5000 + "}",
            "invalidSyntax",
            "integer of 5000 digits",
        ),
        (b'{"userName": "\xff", "active": true}', "invalidSyntax", "not valid UTF-8"),
        ("[" * 100_000, "invalidSyntax", "nested too deep"),
        ('["userName", "active"]', "invalidSyntax", "must be a JSON object"),
        ('{"userName": "x\\u0000y", "active": true}', "invalidSyntax", "NUL"),
        ("{not json", "invalidSyntax", "not valid JSON"),
    ],
    ids=["digits", "not-utf-8", "deep", "a-list", "nul", "not-json"],
)
def test_a_body_no_parser_can_read_is_a_400(
    scim: Scim, raw: str | bytes, scim_type: str, says: str
) -> None:
    existing = new_user(scim, "sam@example.com")
    before = stored()
    for method, path in (
        ("post", "Users"),
        ("put", f"Users/{existing['id']}"),
        ("patch", f"Users/{existing['id']}"),
        ("post", "Groups"),
        ("post", "Users/.search"),
    ):
        body = refused(scim.send(method, path, raw), 400, scim_type)
        assert says in body["detail"], (method, path, body)
    assert stored() == before


def test_a_body_of_9_mb_is_a_413(scim: Scim) -> None:
    before = stored()
    big = json.dumps(user_body(displayName="x" * 9_000_000))
    body = refused(scim.post("Users", big), 413)
    assert "larger than" in body["detail"]
    group = json.dumps({"schemas": [GROUP_URN], "displayName": "g" * 9_000_000})
    refused(scim.post("Groups", group), 413)
    assert stored() == before


def test_a_patch_or_search_body_that_is_not_an_object_is_a_400(scim: Scim) -> None:
    existing = new_user(scim, "lee@example.com")
    refused(scim.send("patch", f"Users/{existing['id']}", "[1, 2]"), 400, "invalidSyntax")
    refused(scim.send("post", "Groups/.search", '"a string"'), 400, "invalidSyntax")


def test_a_person_holds_at_most_20_addresses(scim: Scim) -> None:
    before = stored()
    many = [{"value": f"a{i}@example.com"} for i in range(21)]
    body = refused(scim.post("Users", user_body(emails=many)), 400, "invalidValue")
    assert "holds 21 values; at most 20" in body["detail"]
    assert stored() == before
    person = new_user(scim, "kim@example.com")
    more = [{"value": f"k{i}@example.com"} for i in range(19)]
    ok = scim.patch(f"Users/{person['id']}", {"op": "add", "path": "emails", "value": more})
    assert ok.status_code == 200, ok.content  # 1 + 19
    over = scim.patch(
        f"Users/{person['id']}", {"op": "add", "path": "emails", "value": [{"value": "z@x.io"}]}
    )
    refused(over, 400, "invalidValue")
    kept = Person.objects.get(scim_id=person["id"]).attributes["emails"]
    assert len(kept) == 20


def test_a_conflict_never_quotes_the_database(scim: Scim) -> None:
    new_user(scim, "dana@example.com")
    # Its full-width twin: NFKC makes it the same name, which the database refused once, in its
    # own words (the constraint, the key and the value).
    twin = user_body(userName="\uff44\uff41\uff4e\uff41@example.com")
    clash = refused(scim.post("Users", twin), 409, "uniqueness")
    text = json.dumps(clash).lower()
    for word in ("constraint", "duplicate key", "auth_user", "unique", "detail: key"):
        assert word not in text.replace("uniqueness", ""), clash
