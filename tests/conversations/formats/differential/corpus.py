"""The real-stream corpus: provider chunk recordings kept in the public AI SDK repository
(tests/conversations/formats/corpus/, README there), each turned back into the SSE bytes its
provider sent.

A chunk recording keeps one JSON payload per line (the ``data:`` of each event, nothing else). The
provider's framing is put back: Anthropic and Responses events get their ``event:`` line (the
payload's ``type``, as both APIs send it), Chat Completions chunks are bare ``data:`` lines ended
by ``data: [DONE]``. A file holding several streams back to back (a tool loop's calls) is split
where a new ``message_start`` / ``response.created`` begins after the previous stream finished.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "corpus"

_STARTS = {"message_start": "anthropic.messages", "response.created": "openai.responses"}
_ENDS = {"message_stop", "response.completed", "response.incomplete", "response.failed"}


@dataclass(frozen=True)
class Stream:
    name: str  # the file's path under corpus/, with "#N" for the N-th stream of a file
    format: str
    stream: str  # the SSE text


def format_of(first: dict[str, object]) -> str | None:
    kind = first.get("type")
    if isinstance(kind, str) and kind in _STARTS:
        return _STARTS[kind]
    if isinstance(first.get("choices"), list):
        return "openai.chat"
    return None


def _split(lines: list[str], fmt: str) -> list[list[str]]:
    if fmt == "openai.chat":
        return [lines]
    start = next(k for k, f in _STARTS.items() if f == fmt)
    streams: list[list[str]] = []
    finished = True
    for line in lines:
        kind = json.loads(line).get("type")
        if kind == start and finished:
            streams.append([])
            finished = False
        if not streams:
            streams.append([])
        streams[-1].append(line)
        if kind in _ENDS:
            finished = True
    return streams


def sse(lines: list[str], fmt: str) -> str:
    """The provider's SSE text for recorded payload lines (kept byte for byte)."""
    if fmt == "openai.chat":
        return "".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n"
    return "".join(f"event: {json.loads(line)['type']}\ndata: {line}\n\n" for line in lines)


def _sse_format(text: str) -> str | None:
    """The format of a raw SSE recording, from its first ``data:`` payload."""
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            return format_of(json.loads(line[5:]))
    return None


def streams() -> list[Stream]:
    """Every stream of the corpus: the chunk recordings (``*.chunks.txt``), and the raw SSE
    bodies of VCR cassettes (``*.sse``, kept as the cassette holds them)."""
    out = []
    for path in sorted(ROOT.rglob("*.sse")):
        text = path.read_text(encoding="utf-8")
        fmt = _sse_format(text)
        if fmt is not None:
            out.append(Stream(path.relative_to(ROOT).as_posix(), fmt, text))
    for path in sorted(ROOT.rglob("*.chunks.txt")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        fmt = format_of(json.loads(lines[0]))
        if fmt is None:
            continue
        name = path.relative_to(ROOT).as_posix()
        parts = _split(lines, fmt)
        for i, part in enumerate(parts):
            out.append(Stream(f"{name}#{i}" if len(parts) > 1 else name, fmt, sse(part, fmt)))
    return out
