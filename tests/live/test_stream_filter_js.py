"""static/console/stream-filter.js on every recorded stream of every format, in random cuts (in
Node): the text it shows is the stored visible text (before redaction: the widget's own
customer), nothing of the deliberation appears, and its classes are the formats' own."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conversations.blocks import BlockClass, known_types
from conversations.formats import formats, get, names
from conversations.projection.project import clean_text
from tests.live.streams import STREAMS_BY_NAME
from tests.live.test_filters import assert_nothing_of, never_strings
from tests.providers import endpoint_of

HERE = Path(__file__).parent
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _raw_visible(fmt: str, request: str, stream: str) -> list[str]:
    parsed = get(fmt).parse(
        request=request, response=None, stream=stream, endpoint=endpoint_of(fmt)
    )
    return [
        clean_text(b.text or "")
        for m in parsed.output
        for b in m.blocks
        if b.cls is BlockClass.VISIBLE and b.text
    ]


@pytest.fixture(scope="module")
def node_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cases = [
        {"name": s.name, "format": s.format, "stream": s.stream} for s in STREAMS_BY_NAME.values()
    ]
    path = tmp_path_factory.mktemp("js") / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    out = subprocess.run(
        ["node", str(HERE / "stream_filter_check.mjs"), str(path)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_every_stream_shows_the_stored_text_and_no_thought(node_run: dict[str, Any]) -> None:
    assert {r["name"] for r in node_run["results"]} == set(STREAMS_BY_NAME)
    for r in node_run["results"]:
        s = STREAMS_BY_NAME[r["name"]]
        expected = _raw_visible(s.format, s.request, s.stream)
        assert r["blocks"] == expected, (r["name"], r["seed"])
        assert_nothing_of(list(never_strings(s)), r["events"], tuple(expected))


def test_its_classes_are_the_formats_own(node_run: dict[str, Any]) -> None:
    # Every registered format, its classes and its inline convention as its profile declares
    # them: a format added without its filter here, or a type classified on one side only, fails.
    assert set(node_run["formats"]) == set(names()) == set(node_run["classes"])
    kinds = {"visible": BlockClass.VISIBLE, "audit": BlockClass.AUDIT, "never": BlockClass.NEVER}
    for fmt, classes in node_run["classes"].items():
        declared = known_types(fmt)
        for name, cls in kinds.items():
            assert set(classes[name]) == set(declared[cls]), (fmt, name)
    inline = {
        f.name: {
            "types": sorted(f.profile.inline.block_types),
            "never": f.profile.inline.never_type,
            "tag": f.profile.inline.tag,
        }
        for f in formats()
        if f.profile.inline is not None
    }
    got = {f: {**rule, "types": sorted(rule["types"])} for f, rule in node_run["inline"].items()}
    assert got == inline


def test_the_indicator_reads_as_the_page_shows_it(node_run: dict[str, Any]) -> None:
    assert node_run["label"] == "Thinking… 14 s · ~1,200 tokens"


def test_a_think_span_in_any_spelling_is_never_shown_by_the_browser(
    node_run: dict[str, Any],
) -> None:
    """``<THINK>``, attributes, ``</think >``, mixed case: the browser's filter, like the
    server's, shows the answer alone, whatever the cuts (it showed the span before)."""
    from tests.live.test_filters import SPELLED

    for name, (marker, answer) in SPELLED.items():
        runs = [r for r in node_run["results"] if r["name"] == name]
        assert len(runs) == 6
        for r in runs:
            assert r["blocks"] == [answer], (name, r["seed"])
            assert marker not in r["events"]
