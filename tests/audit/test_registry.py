"""The registry: stable codes, declared once, and an app that imports no other app."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from audit.registry import EVENT_TYPES, EventType

# Codes are written into rows kept forever: this list only ever grows.
STABLE_CODES = {
    "conversation.viewed",
    "conversation.searched",
    "conversation.listed",
    "policy.changed",
    "grant.created",
    "grant.revoked",
    "queue.granted",
    "queue.revoked",
    "review.read",
    "deletion.requested",
    "deletion.executed",
    "deletion.blocked",
    "legal_hold.placed",
    "legal_hold.released",
    "exchange.refused_tombstoned",
    "deletion.viewed",
    "deletion.previewed",
    "retention.swept",
    "restore.reconciled",
    "audit.viewed",
    "preference.changed",
    "share_link.created",
    "share_link.revoked",
    "share_link.opened",
    "subject_access.reported",
    "work_note.changed",
    "signals.viewed",
    "alert_rule.changed",
    "model_price.changed",
    "person.invited",
    "person.provisioned",
    "person.updated",
    "person.roles_changed",
    "person.deactivated",
    "person.reactivated",
    "person.deleted",
    "directory_group.changed",
}

AUDIT_DIR = Path(__file__).resolve().parents[2] / "audit"


def test_codes_are_stable() -> None:
    assert set(EVENT_TYPES) >= STABLE_CODES, "an audit event code was renamed or removed"


def test_declared_details() -> None:
    assert EVENT_TYPES["conversation.searched"].details >= {"query_hash", "filters", "results"}
    assert EVENT_TYPES["policy.changed"].details >= {"change", "policy"}
    assert EVENT_TYPES["review.read"].details >= {
        "purpose",
        "reference",
        "exchanges",
        "content_hash",
    }
    assert "purpose" in EVENT_TYPES["review.read"].required


def test_every_type_is_described() -> None:
    for code, t in EVENT_TYPES.items():
        assert t.code == code
        assert t.description.strip()


def test_event_types_are_frozen() -> None:
    t = EVENT_TYPES["review.read"]
    with pytest.raises(AttributeError):
        t.code = "review.peeked"  # type: ignore[misc]
    with pytest.raises(TypeError):
        EVENT_TYPES["review.peeked"] = t  # type: ignore[index]


@pytest.mark.parametrize("code", ["Review.Read", "review", "review.read.twice", ""])
def test_bad_codes_refused(code: str) -> None:
    with pytest.raises(ValueError, match=r"not <subject>\.<verb>"):
        EventType(code, "x")


def test_audit_imports_no_other_app() -> None:
    """Everyone writes to the log; the log knows no one (DESIGN.md section 3)."""
    others = {"conversations", "retention", "console"}
    offenders = []
    for path in sorted(AUDIT_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in others]
    assert list(AUDIT_DIR.rglob("*.py"))
    assert offenders == []
