"""``manage.py subject_access`` and the compliance page: who may ask (compliance staff and admins;
404 for anyone else), bad input refused precisely with nothing recorded, every report audited."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from audit.models import AuditEvent
from tests.access.conftest import CUSTOMER, Subject

pytestmark = pytest.mark.django_db


def _reports() -> int:
    return AuditEvent.objects.filter(code="subject_access.reported").count()


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("subject_access", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_the_command_prints_json_and_markdown(subject: Subject) -> None:
    body = json.loads(_run(CUSTOMER, "--format", "json", "--purpose", "DSAR R-5"))
    assert body["customer"] == CUSTOMER and len(body["conversations"]) == 3
    assert "transcripts" not in body and "reasoning_text" not in body
    first = subject.conversations[0]
    md = _run(CUSTOMER, "--conversation", first.external_id, "--purpose", "incident I-2")
    assert md.startswith(f"# Subject access: conversation {first.external_id} of customer")
    by_pk = json.loads(
        _run(CUSTOMER, "--conversation", str(first.pk), "--format", "json", "--purpose", "p")
    )
    assert [c["id"] for c in by_pk["conversations"]] == [first.pk]
    assert _reports() == 3
    row = AuditEvent.objects.filter(code="subject_access.reported").latest("id")
    assert row.conversation_id == first.pk and row.details["scope"] == "conversation"


def test_a_customer_with_nothing_held_gets_an_empty_report(subject: Subject) -> None:
    body = json.loads(_run("cus-unknown", "--format", "json", "--purpose", "DSAR R-6"))
    assert body["conversations"] == [] and body["left"] == []
    assert all(s["rows"] == 0 for s in body["stores"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((CUSTOMER,), "purpose"),
        ((CUSTOMER, "--purpose", "   "), "purpose"),
        ((CUSTOMER, "--purpose", "x" * 301), "purpose"),
        ((CUSTOMER, "--purpose", "a\x00b"), "purpose"),
        (("", "--purpose", "p"), "customer"),
        (("c" * 201, "--purpose", "p"), "customer"),
        (("a\x00b", "--purpose", "p"), "NUL"),
        ((CUSTOMER, "--purpose", "p", "--format", "xml"), "invalid choice"),
        ((CUSTOMER, "--purpose", "p", "--conversation", "o-bill-0"), "no such conversation"),
        ((CUSTOMER, "--purpose", "p", "--conversation", "nope"), "no such conversation"),
        ((CUSTOMER, "--purpose", "p", "--conversation", ""), "conversation"),
        ((CUSTOMER, "--purpose", "p", "--include-reasoning"), "--package"),
    ],
)
def test_bad_arguments_are_command_errors_and_record_nothing(
    subject: Subject, args: tuple[str, ...], message: str
) -> None:
    before = _reports()
    with pytest.raises(CommandError, match=message):
        _run(*args)
    assert _reports() == before


def test_a_package_directory_that_is_not_empty_is_refused(subject: Subject, tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("x")
    with pytest.raises(CommandError, match="not an empty directory"):
        _run(CUSTOMER, "--purpose", "p", "--package", str(tmp_path))
    assert _reports() == 0


URL = "/compliance/subject-access/"


@pytest.mark.parametrize("role", ["agent", "reviewer", "stranger"])
def test_the_page_is_404_for_anyone_but_compliance_and_admins(
    subject: Subject, client: Client, role: str
) -> None:
    client.force_login(subject.users[role])
    assert client.get(URL).status_code == 404
    post = client.post(URL, {"customer": CUSTOMER, "purpose": "p", "format": "page"})
    assert post.status_code == 404
    assert _reports() == 0


def test_the_page_asks_signed_out_people_to_sign_in(client: Client, subject: Subject) -> None:
    response = client.get(URL)
    assert response.status_code == 302 and "login" in response["Location"]


@pytest.mark.parametrize("role", ["compliance", "admin"])
def test_the_page_shows_and_downloads_the_report(
    subject: Subject, client: Client, role: str
) -> None:
    client.force_login(subject.users[role])
    assert client.get(URL).status_code == 200
    shown = client.post(URL, {"customer": CUSTOMER, "purpose": "DSAR R-7", "format": "page"})
    assert shown.status_code == 200 and "no-store" in shown["Cache-Control"]
    assert "Where it is held" in shown.content.decode()
    download = client.post(URL, {"customer": CUSTOMER, "purpose": "DSAR R-7", "format": "json"})
    assert download["Content-Disposition"].startswith("attachment;")
    assert len(json.loads(download.content)["conversations"]) == 3
    rows = AuditEvent.objects.filter(code="subject_access.reported", actor_label=role)
    assert [r.details["format"] for r in rows.order_by("id")] == ["page", "json"]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"customer": CUSTOMER, "format": "page"}, "purpose"),
        ({"customer": "", "purpose": "p", "format": "page"}, "customer"),
        ({"customer": CUSTOMER, "purpose": "p", "format": "xml"}, "format"),
        (
            {"customer": CUSTOMER, "purpose": "p", "format": "page", "conversation": "o-bill-0"},
            "conversation",
        ),
        ({"customer": "a\x00b", "purpose": "p", "format": "page"}, "customer"),
    ],
)
def test_bad_input_on_the_page_is_a_form_error_and_records_nothing(
    subject: Subject, client: Client, data: dict[str, Any], field: str
) -> None:
    client.force_login(subject.users["compliance"])
    response = client.post(URL, data)
    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert _reports() == 0


def test_the_exposure_map_is_for_compliance_and_admins_only(
    subject: Subject, client: Client
) -> None:
    first = subject.conversations[0]
    panel = f"/conversations/{first.pk}/exposure/"
    client.force_login(subject.users["agent"])
    page = client.get(f"/conversations/{first.pk}/").content.decode()
    assert "Exposure map" not in page
    assert client.get(panel).status_code == 404
    assert client.get(panel, headers={"HX-Request": "true"}).status_code == 404
    assert _reports() == 0
    client.force_login(subject.users["admin"])
    page = client.get(f"/conversations/{first.pk}/").content.decode()
    # The panel is on the page, closed; its report is read (and audited) only when opened.
    assert "Exposure map" in page and f'hx-get="{panel}"' in page
    assert _reports() == 0
    body = client.get(panel, headers={"HX-Request": "true"})
    assert body.status_code == 200 and "no-store" in body["Cache-Control"]
    text = body.content.decode()
    assert "hold" in text and "<html" not in text
    row = AuditEvent.objects.get(code="subject_access.reported")
    assert row.conversation_id == first.pk and row.details["format"] == "panel"
    # Without htmx, a page of its own; a conversation that does not exist is a 404.
    whole = client.get(panel).content.decode()
    assert "<html" in whole and "hold" in whole
    assert _reports() == 2
    assert client.get("/conversations/999999999/exposure/").status_code == 404
    client.logout()
    assert client.get(panel).status_code == 302
    assert _reports() == 2
