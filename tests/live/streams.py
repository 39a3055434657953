"""Every recorded stream of every format, and what the stored exchange shows of it: the corpus
the live filters (Python and JS) are held to."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from conversations.blocks import BlockClass
from conversations.formats import FormatError, get
from conversations.projection.project import clean_text
from conversations.projection.redaction import redact
from tests.providers import endpoint_of, fixture_files, load, stream_files

FIXTURES = Path(__file__).parent.parent / "fixtures"


@dataclass(frozen=True)
class Stream:
    name: str
    format: str
    request: str
    stream: str
    visible: tuple[str, ...]  # the stored VISIBLE blocks' text, redacted, in order


def _visible(fmt: str, request: str, stream: str) -> tuple[str, ...] | None:
    try:
        parsed = get(fmt).parse(
            request=request, response=None, stream=stream, endpoint=endpoint_of(fmt)
        )
    except FormatError:
        return None  # refused at ingest: not a stream anyone watches to its end
    return tuple(
        redact(clean_text(b.text or ""))
        for m in parsed.output
        for b in m.blocks
        if b.cls is BlockClass.VISIBLE and b.text
    )


def streams() -> list[Stream]:
    found: list[tuple[str, str, str | None, str]] = []
    for name in fixture_files():
        for r in load(name):
            if r.stream is not None:
                found.append((r.name, r.format, r.request, r.stream))
    for f in stream_files():
        found.append((f.name, f.format, f.request, f.stream))
    out = []
    for name, fmt, request, text in found:
        request = request or json.dumps(dict(get(fmt).kit.minimal_request))
        visible = _visible(fmt, request, text)
        if visible is not None:
            out.append(Stream(name, fmt, request, text, visible))
    return out


STREAMS_BY_NAME = {s.name: s for s in streams()}
