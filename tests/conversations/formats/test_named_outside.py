"""Nothing outside the format packages names a format or a provider block type (DESIGN section
19): a room that needs a format's knowledge asks its profile, so adding a format touches its
package, its fixtures and the generated tables, and no other room. The list of names comes from
the registry: every format name and every block type a profile declares (its patterns too,
``*_tool_result``). Walked: the source outside ``conversations/formats/``; not walked: tests,
docs, benchmarks, migrations, Markdown, the hand-written browser filter classes
(``static/console/stream-filter.js``, one class per format by design) and the generated tables.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import subprocess
from pathlib import Path

from conversations.formats import formats, names
from conversations.formats.tables import TABLES

ROOT = Path(__file__).resolve().parents[3]

# Provider block types that are also words of the console's own vocabulary, used for its own
# things and not for a format's blocks: live events and page parts ("text", "thinking",
# "tool"), speakers ("tool"), JSON members every body has ("message", "content"), the audit
# log's detail keys and a Trace's kind ("reasoning"), the rollup's finish column ("refusal"),
# the signals' metric and the export's member ("tool_calls"), the inline span's own name
# ("think"), the conversation page's tool-call view in the audit log ("tool-call"). A format's
# block of one of these types is still only ever read through its profile.
CONSOLE_WORDS = frozenset(
    {
        "text",
        "thinking",
        "tool",
        "message",
        "content",
        "reasoning",
        "refusal",
        "tool_calls",
        "think",
        "tool-call",
    }
)

SUFFIXES = (".py", ".js", ".mjs", ".ts", ".html", ".txt", ".json", ".toml", ".cfg", ".yml")
NOT_WALKED = (
    "tests/",
    "docs/",
    "bench/",
    "conversations/formats/",
    "static/console/stream-filter.js",
)


def declared() -> tuple[set[str], set[str]]:
    """(exact names, patterns): every format name and every block type the profiles declare."""
    exact = set(names())
    patterns = set()
    for fmt in formats():
        for types in fmt.block_types.values():
            for name in types:
                (patterns if "*" in name else exact).add(name)
        if fmt.profile.inline is not None:
            exact.add(fmt.profile.inline.never_type)
    return exact - CONSOLE_WORDS, patterns


def walked() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    files = []
    for name in out:
        if not name.endswith(SUFFIXES) or name.startswith(NOT_WALKED) or name in TABLES:
            continue
        parts = name.split("/")
        if "migrations" in parts or "node_modules" in parts:
            continue
        if parts[0] == "clients" and len(parts) > 2 and parts[2] in ("tests", "e2e"):
            continue
        if (ROOT / name).is_file():
            files.append(ROOT / name)
    return files


def python_strings(text: str) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


_COMMENTS = re.compile(r"/\*.*?\*/|(?<![:\"'\\])//[^\n]*|<!--.*?-->|\{#.*?#\}", re.S)
_LITERAL = re.compile(r"""(["'`])((?:(?!\1)[^\\\n]|\\.)*)\1""")


def other_strings(text: str) -> list[tuple[int, str]]:
    """The quoted strings of a JS, template or data file, comments left out (a comment may name
    a format: it explains, it decides nothing)."""
    text = _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return [(text.count("\n", 0, m.start()) + 1, m.group(2)) for m in _LITERAL.finditer(text)]


def named(path: Path, text: str, exact: set[str], patterns: set[str]) -> list[str]:
    strings = python_strings(text) if path.suffix == ".py" else other_strings(text)
    found = []
    for line, value in strings:
        if value in CONSOLE_WORDS:
            continue
        if value in exact or any(fnmatch.fnmatchcase(value, p) for p in patterns):
            found.append(f"{path.relative_to(ROOT)}:{line}: {value!r}")
    return found


def test_no_room_outside_the_format_packages_names_a_format_or_its_block_types() -> None:
    exact, patterns = declared()
    found = []
    for path in walked():
        found += named(path, path.read_text(encoding="utf-8"), exact, patterns)
    assert found == [], "ask the format's profile instead:\n" + "\n".join(found)


def test_the_walk_finds_a_name_where_one_is_spelled(tmp_path: Path) -> None:
    # The check itself can fail: a format name, a declared block type and a type matching a
    # declared pattern, in Python and in JS, are each found; a comment and a docstring's prose
    # are not.
    exact, patterns = declared()
    fmt = names()[0]
    block = sorted(exact - set(names()))[0]
    planted = {
        "room.py": f'"""Mentions {fmt} in prose."""\nif kind == {block!r} or f == {fmt!r}: pass\n',
        "room.js": f'// {fmt}\nif (kind === "{block}") go();\n',
    }
    expected = {"room.py": 2, "room.js": 1}
    for pattern in patterns:
        planted["room.py"] += f"x = {pattern.replace('*', 'made_up')!r}\n"
        expected["room.py"] += 1
    for name, text in planted.items():
        path = ROOT / "conversations" / name
        hits = named(path, text, exact, patterns)
        assert len(hits) == expected[name], (name, hits)
    assert set(names()) <= exact  # every format's own name is always walked for
