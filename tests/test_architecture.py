"""The house rules of docs/architecture.md, checked: which way imports run (the import-linter
contracts in pyproject.toml), who may read reasoning, how long a module may grow, and that nothing
in the repository points outside it."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent
APPS = ("console", "conversations", "audit", "retention")
# About 400 lines: past that a module becomes a package, or says in its docstring why it is one
# piece ("One piece: ...").
MAX_LINES = 420
READERS = ("reasoning_of", "fetched_reasoning")


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", *patterns],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / name for name in out if (ROOT / name).is_file()]


def _app_modules() -> list[Path]:
    return [p for p in _tracked(*(f"{app}/*.py" for app in APPS)) if "migrations" not in p.parts]


def test_the_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    # console imports the apps and no app imports console; retention imports conversations and
    # audit, not they it; audit imports no app; formats import no Django and no model; ingest's
    # stages import only those before them.
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert code == 0, capsys.readouterr().out


def test_a_broken_contract_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The checker itself can fail: a contract that the code breaks (audit importing nothing of
    # Django is false) is reported as broken.
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["audit"]\ninclude_external_packages = true\n'
        '[[tool.importlinter.contracts]]\nname = "audit without django"\ntype = "forbidden"\n'
        'source_modules = ["audit"]\nforbidden_modules = ["django"]\n'
    )
    assert lint_imports(config_filename=str(config), no_cache=True, no_logo=True) == 1
    assert "BROKEN" in capsys.readouterr().out


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative). grimp reads every import statement, those inside a
    function or under ``TYPE_CHECKING`` included, so a circle hidden in a function is one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            pushed = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                    pushed = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_through_others() -> None:
    # Two modules that need each other are one room cut in two, or a room importing upward;
    # an import moved into a function hides the circle from the reader, not from this test.
    graph = grimp.build_graph(*APPS, cache_dir=None)
    assert cycles(graph) == []


def test_a_circle_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The finder itself can fail: a circle closed by an import inside a function is reported.
    package = tmp_path / "circled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def late():\n    from . import a\n")
    (package / "c.py").write_text("from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("circled", cache_dir=None)
    assert cycles(graph) == [["circled.a", "circled.b"]]


def test_only_the_review_reads_reasoning() -> None:
    # Each format's ``reasoning`` reader reads deliberation out of the raw bytes; the review
    # (conversations/reviews/) is its one caller, so no other surface can show or keep it.
    callers = []
    for path in _app_modules():
        if path.parts[-3:-1] == ("conversations", "reviews") or "formats" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            name = None
            if isinstance(node, ast.Attribute) and node.attr == "reasoning":
                name = "reasoning"
            elif isinstance(node, ast.Name) and node.id in READERS:
                name = node.id
            elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith(
                "reviews.reasoning"
            ):
                name = node.module
            if name:
                callers.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')} {name}")
    assert callers == []


def test_no_module_of_app_code_is_over_about_400_lines_unless_it_says_why() -> None:
    long = []
    for path in _app_modules():
        lines = path.read_text().count("\n")
        if lines <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if "One piece:" not in doc:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert long == []


def test_nothing_in_the_repository_points_outside_it() -> None:
    # A user's clone has nothing beside the repository: the design notes live in docs/.
    outside = "../" + "shared"  # spelled apart, so this file does not match itself
    found = []
    for path in _tracked():
        if path.suffix in {".png", ".jpg", ".ico", ".gz", ".woff", ".woff2"}:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if outside in line:
                found.append(f"{path.relative_to(ROOT)}:{number}")
    assert found == []


def test_the_readme_links_the_architecture() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "docs/architecture.md" in readme
    assert (ROOT / "docs" / "architecture.md").is_file()
