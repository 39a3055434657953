"""Planted markers (reasoning text, signatures, encrypted and redacted reasoning, a dropped tool
field, an unknown block type, a system prompt, raw PII) never reach the report, the page, the
panel or the package, in any format; the reasoning text reaches only the package's reasoning.md,
only when asked with a purpose, which the audit row records."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from audit.models import AuditEvent
from conversations.ingest.body import exchange_input
from conversations.services import conversation_ingest_exchange
from retention.access import REASONING_LABEL
from tests.access.conftest import CUSTOMER, Subject
from tests.console.conftest import DROPPED_MARKER, PII, REASONING_MARKER, SIGNATURE_MARKER
from tests.conversations.test_planted_markers import M, bodies

pytestmark = pytest.mark.django_db

# What the reasoning readers return as text (the rest never has text: signatures, encrypted
# and redacted data, unknown types, tool fields, the system prompt).
M_REASONING = {
    "thinking",
    "oai_summary",
    "reasoning_content",
    "ai_sdk",
    "ai_sdk_stream",
    "anthropic_stream",
    "inline_chat",
    "inline_ai_sdk",
}
NEVER = [SIGNATURE_MARKER, DROPPED_MARKER, *PII.values()]


@pytest.fixture
def marked(subject: Subject) -> Subject:
    for body in bodies():
        conversation_ingest_exchange(data=exchange_input(body))
    return subject


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("subject_access", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _files(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): p.read_text() for p in directory.rglob("*") if p.is_file()
    }


def _clean(text: str, *, reasoning: bool = False) -> list[str]:
    found = [m for m in NEVER if m in text]
    if not reasoning:
        found += [m for m in (REASONING_MARKER,) if m in text]
    found += [
        name for name, m in M.items() if m in text and (not reasoning or name not in M_REASONING)
    ]
    return found


@pytest.mark.parametrize("fmt", ["json", "md"])
def test_no_marker_in_the_report(marked: Subject, fmt: str) -> None:
    for customer in (CUSTOMER, "cus_marker"):
        text = _run(customer, "--format", fmt, "--purpose", "DSAR R-2")
        assert "Blocks" in text  # a report, with its stores
        assert _clean(text) == [], customer


def test_the_package_holds_the_visible_transcript_and_no_marker(
    marked: Subject, tmp_path: Path
) -> None:
    for customer in (CUSTOMER, "cus_marker"):
        directory = tmp_path / customer
        _run(customer, "--purpose", "DSAR R-3", "--package", str(directory))
        files = _files(directory)
        assert {"README.md", "report.json", "report.md", "events.json"} <= set(files)
        assert "reasoning.md" not in files
        for name, text in files.items():
            assert _clean(text) == [], (customer, name)
    files = _files(tmp_path / CUSTOMER)
    transcripts = [n for n in files if n.startswith("conversations/")]
    assert len(transcripts) == 2 * 3  # Markdown and JSON of each conversation
    # The visible answer and the trail's identifier are there (so a leak would be seen too).
    assert all("Let me look up your order." in files[n] for n in transcripts)
    assert all("ORD-7654321" in files[n] for n in transcripts)
    assert "[email]" not in files["report.md"]  # an inventory: no value at all
    # It holds a person's conversations: readable by its owner only.
    modes = {p.stat().st_mode & 0o777 for p in (tmp_path / CUSTOMER).rglob("*")}
    assert modes <= {0o600, 0o700} and (tmp_path / CUSTOMER).stat().st_mode & 0o077 == 0
    row = AuditEvent.objects.filter(code="subject_access.reported").latest("id")
    assert row.details["package"] is True and row.details["reasoning"] is False


def test_reasoning_only_when_asked_with_a_purpose(marked: Subject, tmp_path: Path) -> None:
    purpose = "regulator asked how the model reached answer A-9"
    for customer in (CUSTOMER, "cus_marker"):
        directory = tmp_path / customer
        _run(
            customer,
            "--purpose",
            purpose,
            "--package",
            str(directory),
            "--include-reasoning",
            "--format",
            "json",
        )
        files = _files(directory)
        reasoning = files.pop("reasoning.md")
        assert REASONING_LABEL in reasoning
        assert _clean(reasoning, reasoning=True) == []
        for name, text in files.items():
            assert _clean(text) == [], (customer, name)
        row = AuditEvent.objects.filter(code="subject_access.reported").latest("id")
        assert row.details["reasoning"] is True and row.details["purpose"] == purpose
        assert row.actor_label == "system"
    assert REASONING_MARKER in _files(tmp_path / CUSTOMER)["reasoning.md"]
    marker_reasoning = (tmp_path / "cus_marker" / "reasoning.md").read_text()
    assert [n for n in M_REASONING if M[n] not in marker_reasoning] == []


def test_no_marker_on_the_page_nor_in_the_panel(marked: Subject, client: Client) -> None:
    client.force_login(marked.users["compliance"])
    for fmt in ("page", "json", "md"):
        response = client.post(
            "/compliance/subject-access/",
            {"customer": CUSTOMER, "purpose": "DSAR R-4", "format": fmt},
        )
        assert response.status_code == 200
        text = response.content.decode()
        assert "Reasoning" in text or "reasoning" in text
        assert _clean(text) == [], fmt
    client.force_login(marked.users["admin"])
    response = client.get(f"/conversations/{marked.conversations[0].pk}/")
    text = response.content.decode()
    assert "Exposure map" in text
    assert _clean(text) == []
    panel = client.get(f"/conversations/{marked.conversations[0].pk}/exposure/")
    text = panel.content.decode()
    assert "Held in:" in text
    assert _clean(text) == []


def test_asking_for_reasoning_without_a_package_or_purpose_is_refused(marked: Subject) -> None:
    from django.core.management.base import CommandError

    before = AuditEvent.objects.filter(code="subject_access.reported").count()
    with pytest.raises(CommandError, match="--package"):
        _run(CUSTOMER, "--purpose", "x", "--include-reasoning")
    with pytest.raises(CommandError, match="purpose"):
        _run(CUSTOMER, "--package", "/tmp/never-written-i26", "--include-reasoning")
    assert AuditEvent.objects.filter(code="subject_access.reported").count() == before
    assert not Path("/tmp/never-written-i26").exists()
