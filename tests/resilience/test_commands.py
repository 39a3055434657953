"""Case 9: every management command answers bad arguments with a ``CommandError`` (one line,
no traceback), stores nothing, and the pages still work afterwards. Case 8: the Markdown export
escapes HTML."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command, get_commands
from django.core.management.base import CommandError

from tests.conftest import table_counts

pytestmark = pytest.mark.django_db(databases="__all__")

TRAVERSAL = "../../etc/passwd"
NUL = "a\x00b"
# Each of the project's commands, with arguments it must refuse.
BAD: dict[str, list[tuple[Any, ...]]] = {
    "seal_audit": [("--batch-size", "0"), ("--batch-size", "-1"), ("--batch-size", "x")],
    "verify_audit": [("--chunk-size", "0"), ("--max-problems", "-1"), ("extra",)],
    "create_databases": [("extra",)],
    "create_service_token": [("",), (NUL,), ("x" * 10_000,), ("t", "--scope", "nope")],
    "export_conversation": [
        ("{pk}", "--format", "md", "--zone", TRAVERSAL),
        ("{pk}", "--format", "md", "--zone", NUL),
        ("{pk}", "--format", "md", "--zone", "Europe"),
        ("{pk}", "--format", "html"),
        ("99999999999999999999999",),
        (NUL,),
        (TRAVERSAL,),
    ],
    "grant_queue": [("nobody", "billing"), ("{agent}", NUL), ("{agent}", "")],
    "grant_review": [
        ("nobody", "conv-billing"),
        ("{agent}", "nope"),
        ("{agent}", "conv-billing", "--expires", "not a date"),
        ("--revoke", "0"),
        ("--revoke", "99999999999999999999999"),
    ],
    "ingest": [
        ("/nonexistent/file.jsonl",),
        ("/etc",),
        ("{file}", "--batch-size", "0"),
        ("{file}", "--workers", "0"),
    ],
    "probe_allowance": [("--format", "nope"), ("--model", NUL)],
    "reasoning_readiness": [("--since", "not-a-date"), ("--since", "9999-99-99"), ("--queue", NUL)],
    "redact": [("--detectors", "nope")],
    "replay": [("nope",), ("99999999999999999999999",), (NUL,)],
    "rewrap_keys": [("extra",)],
    "rollups_rebuild": [("extra",)],
    "seed_demo": [("--conversations", "-1"), ("--conversations", "x")],
    "setup_roles": [("extra",)],
    "monitoring_tick": [("extra",)],
    "write_format_tables": [("extra",), ("--nope",)],
    "deletion_request": [
        (),
        ("--customer", ""),
        ("--customer", NUL),
        ("--customer", "c", "--due", "not a date"),
        ("--customer", "c", "--due", "1999-01-01"),
        ("--conversation", "nope"),
    ],
    "reconcile_restore": [("extra",)],
    "subject_access": [
        (),
        ("cust",),  # no purpose
        ("cust", "--purpose", ""),
        (NUL, "--purpose", "request 1"),
        ("cust", "--purpose", NUL),
        ("cust", "--purpose", "request 1", "--format", "html"),
        ("cust", "--purpose", "request 1", "--conversation", "nope"),
        ("cust", "--purpose", "request 1", "--package", "{file}"),
    ],
    "retention_tick": [("extra",)],
}
CASES = [(name, args) for name, cases in BAD.items() for args in cases]


def test_every_project_command_is_listed() -> None:
    ours = {
        name
        for name, app in get_commands().items()
        if app in ("conversations", "audit", "retention", "console", "console.people")
    }
    assert ours == set(BAD)


@pytest.mark.parametrize(
    ("name", "args"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
)
def test_bad_arguments_are_a_command_error(
    name: str, args: tuple[Any, ...], world: Any, client: Any, tmp_path: Any
) -> None:
    good = tmp_path / "one.jsonl"
    good.write_text("")
    fill = {"pk": world.billing.pk, "agent": world.users["agent"].username, "file": str(good)}
    argv = [a.format(**fill) if "{" in a else a for a in args]
    before = table_counts()
    with pytest.raises(CommandError):
        call_command(name, *argv, stdout=StringIO(), stderr=StringIO())
    after = table_counts()
    assert {k: v for k, v in after.items() if v != before[k]} == {}
    client.force_login(world.users["admin"])
    assert client.get("/").status_code == 200
    assert client.get(f"/conversations/{world.billing.pk}/").status_code == 200


def test_the_markdown_export_escapes_html(world: Any, client: Any) -> None:
    """Case 8: an answer's HTML and a work note's are shown, never carried as markup (the page
    and the share page escape them; a Markdown reader would render them)."""
    from conversations.models import WorkNote
    from conversations.sharing.services import work_note_save
    from tests.console.conftest import ingest
    from tests.factories import ExchangeBodyFactory

    work_note_save(
        note=WorkNote(tool_name="get_order", template="<img src=x onerror=alert(2)> {order_id}")
    )
    answer = "<script>alert(1)</script> & <b>bold</b>"
    ingest(
        ExchangeBodyFactory(
            conversation="conv-html<i>",
            content=[
                {"type": "text", "text": answer},
                {
                    "type": "tool_use",
                    "id": "toolu_h",
                    "name": "get_order",
                    "input": {"order_id": "ORD-1"},
                },
            ],
            stop_reason="tool_use",
        )
    )
    out = StringIO()
    call_command("export_conversation", "conv-html<i>", "--format", "md", stdout=out)
    text = out.getvalue()
    assert "<script>" not in text and "<img" not in text and "<b>" not in text and "<i>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in text
    assert "&lt;img src=x onerror=alert(2)&gt; ORD-1" in text
    assert "# Conversation conv-html&lt;i&gt;" in text
    # the plain text export is text: it keeps the characters as they are
    out = StringIO()
    call_command("export_conversation", "conv-html<i>", "--format", "txt", stdout=out)
    assert answer in out.getvalue()
