"""The write index of ``docs/architecture.md`` ("Every write") is the code's.

A write service is a public function of app code that opens a transaction (``transaction.atomic``
as its decorator or a ``with`` in its body), outside the selectors and the management commands;
a name ending in ``_read`` is an audited selector, which opens one for its audit row.

The index lists every write service, where it lives, and how its transaction opens: ``entry``
(``durable=True``: it is the outermost transaction, so what it commits is committed when it
returns and its side effects run on commit) or ``inner`` (it joins the transaction of a caller:
another service, or the admin, which wraps its saves in one). A durable write called from inside
a transaction is a ``RuntimeError`` at that call, which a test in a transaction of its own never
sees, so the last check reads the callers: no function that opens a transaction, and nothing in
an admin module, calls an entry.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("conversations", "retention", "audit", "console")
INDEX = ROOT / "docs" / "architecture.md"
# A read that opens a transaction for one snapshot of the chain, and writes nothing.
NOT_WRITES = {"verify_chain"}
ROW = re.compile(r"^\| `(\w+)` \| `([\w/.]+)` \| (entry|inner) \|", re.M)


@dataclass(frozen=True)
class Write:
    name: str
    path: str
    durable: bool


def _atomic(fn: ast.FunctionDef) -> ast.expr | None:
    for d in fn.decorator_list:
        if "transaction.atomic" in ast.unparse(d):
            return d
    for node in ast.walk(fn):
        if isinstance(node, ast.With):
            for item in node.items:
                if "transaction.atomic" in ast.unparse(item.context_expr):
                    return item.context_expr
    return None


def _durable(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and any(
        k.arg == "durable" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in expr.keywords
    )


def _modules(root: Path) -> dict[str, ast.Module]:
    out = {}
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            if "migrations" not in path.parts:
                out[path.relative_to(root).as_posix()] = ast.parse(path.read_text())
    return out


def writes(root: Path = ROOT) -> dict[str, Write]:
    found = {}
    for path, tree in _modules(root).items():
        if "management" in path.split("/") or "selectors" in path:
            continue
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
                continue
            if fn.name.endswith("_read") or fn.name in NOT_WRITES:
                continue
            if (atomic := _atomic(fn)) is not None:
                found[fn.name] = Write(fn.name, path, _durable(atomic))
    return found


def entries_called_in_a_transaction(root: Path = ROOT) -> list[str]:
    """``caller -> entry`` for every direct call of a durable write from a function that opens a
    transaction, or from an admin module."""
    durable = {w.name for w in writes(root).values() if w.durable}
    bad = []
    for path, tree in _modules(root).items():
        admin = "admin" in path.split("/") or path.endswith("admin.py")
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if not admin and _atomic(fn) is None:  # type: ignore[arg-type]
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                    if name in durable and name != fn.name:
                        bad.append(f"{path}: {fn.name} -> {name}")
    return bad


def index() -> dict[str, tuple[str, str]]:
    return {m[1]: (m[2], m[3]) for m in ROW.finditer(INDEX.read_text())}


def test_the_index_lists_every_write_where_it_lives() -> None:
    code, listed = writes(), index()
    assert sorted(set(code) - set(listed)) == [], "write services missing from the index"
    assert sorted(set(listed) - set(code)) == [], "the index lists what is not a write service"
    wrong = {n: (listed[n][0], w.path) for n, w in code.items() if listed[n][0] != w.path}
    assert wrong == {}, "listed in the wrong module (index, code)"


def test_entries_are_durable_and_inner_writes_are_not() -> None:
    code, listed = writes(), index()
    wrong = {n: listed[n][1] for n, w in code.items() if w.durable != (listed[n][1] == "entry")}
    assert wrong == {}, "the index's entry/inner against the code's durable=True"


def test_no_entry_is_called_inside_a_transaction() -> None:
    assert entries_called_in_a_transaction() == []


def test_the_checks_fail_on_a_planted_write(tmp_path: Path) -> None:
    for app in APPS:
        (tmp_path / app).mkdir()
    (tmp_path / "conversations" / "services.py").write_text(
        "from django.db import transaction\n\n"
        "@transaction.atomic(durable=True)\n"
        "def thing_save(*, thing):\n    thing.save()\n\n"
        "@transaction.atomic\n"
        "def other_save(*, thing):\n    thing_save(thing=thing)\n\n"
        "def thing_read(*, user):\n    with transaction.atomic():\n        pass\n"
    )
    (tmp_path / "conversations" / "admin.py").write_text(
        "def save_model(request, obj, form, change):\n    thing_save(thing=obj)\n"
    )
    found = writes(tmp_path)
    assert found == {
        "thing_save": Write("thing_save", "conversations/services.py", True),
        "other_save": Write("other_save", "conversations/services.py", False),
    }
    assert entries_called_in_a_transaction(tmp_path) == [
        "conversations/admin.py: save_model -> thing_save",
        "conversations/services.py: other_save -> thing_save",
    ]
