"""The recorded provider payloads under tests/fixtures/providers (with their sources and licence
table in that folder's README), turned into ingest bodies. Which format a file is in is the format
kit's (``fixtures`` in ``conversations/formats/<name>/kit.py``): a file no kit claims, or two,
fails here.

A recording becomes one or more ``Recorded`` exchanges: the request and response bodies as JSON
text (VCR cassettes keep JSON re-serialised as YAML, so those are serialised once here), or the
stream as raw SSE text (``*.chunks.txt`` keep one data payload per line; they become ``data:``
events; files holding several streams back to back are split where a new stream starts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from conversations.formats import formats
from conversations.formats.kit import Fixture
from conversations.formats.sse import from_json_lines

ROOT = Path(__file__).parent / "fixtures"
FIXTURES = ROOT / "providers"

# Where a new stream starts inside a file holding several.
_STREAM_START = {"message_start", "response.created"}


@dataclass(frozen=True)
class Recorded:
    name: str  # file name, with "#N" for the N-th exchange of a file holding several
    format: str
    request: str | None  # None where the recording kept only the response
    response: str | None = None
    stream: str | None = None

    @property
    def endpoint(self) -> str | None:
        """Where the call went, for a format that reads its model from the endpoint: the kit's
        example's (recordings keep no endpoint)."""
        return endpoint_of(self.format)


def endpoint_of(fmt: str) -> str | None:
    """The endpoint of the format kit's example (None: the format reads none)."""
    example = next(f for f in formats() if f.name == fmt).kit.example
    value = example.get("endpoint")
    return value if isinstance(value, str) else None


def claimed(path: str) -> tuple[str, Fixture]:
    """The format whose kit claims ``path`` (relative to tests/fixtures/), and its entry."""
    found = [(f.name, entry) for f in formats() if (entry := f.kit.fixture(path)) is not None]
    if len(found) != 1:
        raise KeyError(f"{path}: claimed by {len(found)} format kits, not one")
    return found[0]


def format_of(file_name: str) -> str:
    return claimed(f"providers/{file_name}")[0]


@dataclass(frozen=True)
class StreamFile:
    name: str  # relative to tests/fixtures/
    format: str
    stream: str
    request: str | None  # the request it answers, where a kit names one


def stream_files() -> list[StreamFile]:
    """The recorded streams outside providers/: every ``streams/*.sse`` (each claimed by one
    format's kit), and the streams a kit names elsewhere with the request they answer
    (``ai_sdk/assistant-stream.sse``)."""
    names = {f"streams/{p.name}" for p in (ROOT / "streams").glob("*.sse")}
    for fmt in formats():
        for entry in fmt.kit.fixtures:
            if entry.pattern.endswith(".sse") and "*" not in entry.pattern:
                names.add(entry.pattern)
    out = []
    for name in sorted(names):
        fmt_name, entry = claimed(name)
        request = (ROOT / entry.request).read_text(encoding="utf-8") if entry.request else None
        out.append(StreamFile(name, fmt_name, (ROOT / name).read_text(encoding="utf-8"), request))
    return out


def fixture_files() -> list[str]:
    return sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")


def _split_json_lines(text: str) -> list[str]:
    streams: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        kind = json.loads(line).get("type")
        if (
            kind in _STREAM_START
            and streams
            and any(json.loads(prev).get("type") == kind for prev in streams[-1])
        ):
            # a second start of the same kind: a new stream, unless it splices into an
            # unfinished one (Anthropic's spliced message_start is one stream).
            last = json.loads(streams[-1][-1]).get("type")
            if last in {"message_stop", "response.completed"}:
                streams.append([])
        if not streams:
            streams.append([])
        streams[-1].append(line)
    return ["\n".join(s) + "\n" for s in streams]


def load(file_name: str) -> list[Recorded]:
    path = FIXTURES / file_name
    fmt = format_of(file_name)
    text = path.read_text(encoding="utf-8")
    if file_name.endswith(".yaml"):
        cassette = yaml.safe_load(text)
        out = []
        for i, interaction in enumerate(cassette["interactions"]):
            request = json.dumps(interaction["request"]["parsed_body"], ensure_ascii=False)
            response = interaction["response"]
            if "parsed_body" in response:
                body = json.dumps(response["parsed_body"], ensure_ascii=False)
                out.append(Recorded(f"{file_name}#{i}", fmt, request, response=body))
            else:
                out.append(
                    Recorded(f"{file_name}#{i}", fmt, request, stream=response["body"]["string"])
                )
        return out
    if file_name.endswith(".chunks.txt"):
        return [
            Recorded(f"{file_name}#{i}", fmt, None, stream=from_json_lines(chunk))
            for i, chunk in enumerate(_split_json_lines(text))
        ]
    if file_name.endswith(".txt"):  # raw SSE
        return [Recorded(file_name, fmt, None, stream=text)]
    return [Recorded(file_name, fmt, None, response=text)]
