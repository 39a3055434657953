"""On a phone every table keeps its column labels (issue 35): at 390 px a ``table.list`` becomes
one card per row and its header is hidden (``static/console/console.css``), so each cell of its
body says its column in ``data-label``, the column's own header. Walks every template, so a new
table without labels fails here (the browser test measures the rendered pages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
PAGES = sorted(
    p for p in TEMPLATES.rglob("*.html") if "admin" not in p.relative_to(TEMPLATES).parts
)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def _tables(path: Path) -> list[tuple[str, list[str], str]]:
    """(the table's opening tag, its headers, its body) of each table.list of a template."""
    out = []
    for table in re.finditer(r"<table\b[^>]*>.*?</table>", path.read_text(), re.S):
        tag = re.match(r"<table\b[^>]*>", table.group(0))
        assert tag is not None
        if not re.search(r'class="[^"]*\blist\b', tag.group(0)):
            continue
        head = re.search(r"<thead>(.*?)</thead>", table.group(0), re.S)
        assert head, f"{path.name}: a table.list without a header row"
        headers = [_text(h) for h in re.findall(r"<th\b[^>]*>(.*?)</th>", head.group(1), re.S)]
        out.append((tag.group(0), headers, table.group(0)[head.end() :]))
    return out


def test_the_templates_have_tables_to_check() -> None:
    walked = {p.name for p in PAGES if _tables(p)}
    # The ones the issue named, and the subject-access report.
    assert {"_subject_access_report.html", "people.html", "audit.html", "holds.html"} <= walked
    assert len(walked) >= 15


@pytest.mark.parametrize("path", [p for p in PAGES if _tables(p)], ids=lambda p: p.name)
def test_every_cell_of_every_table_says_its_column(path: Path) -> None:
    for tag, headers, body in _tables(path):
        for cell in re.finditer(r"<td\b[^>]*>", body):
            if "colspan" in cell.group(0):
                continue  # a row saying the table is empty
            label = re.search(r'data-label="([^"]*)"', cell.group(0))
            assert label, f"{path.name} {tag}: a cell without data-label: {cell.group(0)}"
            if "{{" not in label.group(1):
                assert label.group(1) in headers, (
                    f"{path.name}: {label.group(1)!r} not in {headers}"
                )
