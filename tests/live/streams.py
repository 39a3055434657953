"""Every recorded stream of every format, and what the stored exchange shows of it: the corpus
the live filters (Python and JS) are held to."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, replace
from pathlib import Path

from conversations.blocks import BlockClass
from conversations.formats import FormatError, formats, get
from conversations.projection.project import clean_text
from conversations.projection.redaction import redact
from tests.providers import endpoint_of, fixture_files, load, stream_files

FIXTURES = Path(__file__).parent.parent / "fixtures"


@dataclass(frozen=True)
class Stream:
    name: str
    format: str
    request: str
    # SSE text; for a binary stream its bytes as Latin-1 text (one character a byte: what the
    # live engine and the browser filter take).
    stream: str
    visible: tuple[str, ...]  # the stored VISIBLE blocks' text, redacted, in order
    endpoint: str | None = None

    def parse_args(self) -> dict[str, str | None]:
        """The parse of this stream's exchange (a binary stream as ``stream_base64``)."""
        if get(self.format).binary_stream:
            data = base64.b64encode(self.stream.encode("latin-1")).decode()
            return {"request": self.request, "stream_base64": data, "endpoint": self.endpoint}
        return {"request": self.request, "stream": self.stream, "endpoint": self.endpoint}


def _visible(s: Stream) -> tuple[str, ...] | None:
    try:
        parsed = get(s.format).parse(**s.parse_args())
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
    candidates = []
    for name, fmt, request, text in found:
        request = request or json.dumps(dict(get(fmt).kit.minimal_request))
        candidates.append(Stream(name, fmt, request, text, (), endpoint_of(fmt)))
    for fmt in formats():
        for name, sample in fmt.kit.recorded() if fmt.kit.recorded else ():
            if sample.stream_base64 is not None:
                data = base64.b64decode(sample.stream_base64).decode("latin-1")
                candidates.append(Stream(name, fmt.name, sample.request, data, (), sample.endpoint))
    out = []
    for s in candidates:
        visible = _visible(s)
        if visible is not None:
            out.append(replace(s, visible=visible))
    return out


STREAMS_BY_NAME = {s.name: s for s in streams()}
