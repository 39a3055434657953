"""The recorded provider payloads under tests/fixtures/providers (with their sources and licence
table in that folder's README), turned into ingest bodies.

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

from conversations.formats.sse import from_json_lines

FIXTURES = Path(__file__).parent / "fixtures" / "providers"

# The format each recording is in, by file-name prefix (after the source).
FORMAT_OF = {
    "anthropic": "anthropic.messages",
    "incomplete_partial_json_response": "anthropic.messages",
    "spliced-message-start": "anthropic.messages",
    "test_anthropic": "anthropic.messages",
    "test_pause_turn": "anthropic.messages",
    "openai": "openai.responses",
    "test_openai_responses": "openai.responses",
    "test_reasoning_summary": "openai.responses",
    "deepseek": "openai.chat",
}

# Where a new stream starts inside a file holding several.
_STREAM_START = {"message_start", "response.created"}


@dataclass(frozen=True)
class Recorded:
    name: str  # file name, with "#N" for the N-th exchange of a file holding several
    format: str
    request: str | None  # None where the recording kept only the response
    response: str | None = None
    stream: str | None = None


def format_of(file_name: str) -> str:
    stem = file_name.split("__", 1)[1]
    for prefix, fmt in sorted(FORMAT_OF.items(), key=lambda kv: -len(kv[0])):
        if stem.startswith(prefix):
            return fmt
    raise KeyError(file_name)


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
