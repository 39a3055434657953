"""Recorded provider traffic read as ingest bodies: the VCR cassettes public projects keep of their
own test runs (vcrpy's YAML, plain or gzipped; pydantic-ai's variant with ``parsed_body``).

A cassette is one conversation: its interactions, in order, are the exchanges a chat backend
would have posted. Only what the console stores is read: a ``POST`` to a provider endpoint of a
registered format (``FORMAT_OF``: Anthropic ``/messages``, Chat ``/chat/completions``, Responses
``/responses``), answered 200. A request body kept as JSON text is taken as it is; one the
cassette kept parsed (``parsed_body``) is serialised once (``json.dumps``), the same way for
every interaction of the file, so a history sent again compares as the backend sent it. A
response body compressed on the wire (``Content-Encoding: gzip``/``deflate``) is decompressed; a
streamed one (``text/event-stream``, or text starting with ``event:``/``data:``) is posted as
``stream``. The call's path and query go in ``endpoint`` (an Azure deployment names its model
there). Nothing here knows the console beyond the ingest body's shape.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

# The provider paths whose calls are exchanges, by the format that reads them.
FORMAT_OF = (
    ("/chat/completions", "openai.chat"),
    ("/responses", "openai.responses"),
    ("/messages", "anthropic.messages"),
)


@dataclass(frozen=True)
class Recorded:
    """One exchange of a cassette: its position among the file's interactions, the format, the
    ingest body's provider fields, and why it was left out (``skip``: not an exchange)."""

    index: int
    format: str
    request: str
    endpoint: str
    response: str | None = None
    stream: str | None = None


def _loader() -> Any:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, str):
        return value
    return None


def _header(headers: Any, name: str) -> str:
    if not isinstance(headers, dict):
        return ""
    for key, value in headers.items():
        if str(key).lower() == name:
            return str(value[0] if isinstance(value, list) and value else value or "")
    return ""


def _body(part: dict[str, Any]) -> str | None:
    """A request's or response's body as text (None: none the console could read)."""
    if "parsed_body" in part:
        parsed = part["parsed_body"]
        return parsed if isinstance(parsed, str) else json.dumps(parsed, ensure_ascii=False)
    body = part.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    if isinstance(body, bytes):
        encoding = _header(part.get("headers"), "content-encoding").lower()
        try:
            if encoding == "gzip" or body[:2] == b"\x1f\x8b":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
        except (OSError, zlib.error, EOFError):
            return None
        if encoding == "br":
            return None  # brotli: not read (no decoder among the console's dependencies)
    return _text(body)


def _format(uri: str) -> str | None:
    path = urlsplit(uri).path.rstrip("/")
    if "/threads/" in path:
        return None  # the Assistants API's thread messages: no provider call of a format
    for suffix, fmt in FORMAT_OF:
        if path.endswith(suffix):
            return fmt
    return None


def cassette(path: Path) -> Iterator[Recorded]:
    """The exchanges of one cassette, in order (none for a file that is not one)."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    try:
        data = yaml.load(raw.decode("utf-8", "surrogateescape"), Loader=_loader())  # noqa: S506
    except yaml.YAMLError:
        return
    interactions = data.get("interactions") if isinstance(data, dict) else None
    for index, interaction in enumerate(interactions if isinstance(interactions, list) else ()):
        if not isinstance(interaction, dict):
            continue
        request, response = interaction.get("request"), interaction.get("response")
        if not isinstance(request, dict) or not isinstance(response, dict):
            continue
        fmt = _format(str(request.get("uri", "")))
        status = response.get("status")
        status = status.get("code", 200) if isinstance(status, dict) else 200
        if fmt is None or str(request.get("method", "POST")).upper() != "POST" or status != 200:
            continue
        body, answer = _body(request), _body(response)
        if not body or not answer or not answer.strip():
            continue  # a body the cassette did not keep: nothing was recorded to post
        parts = urlsplit(str(request["uri"]))
        endpoint = parts.path + (f"?{parts.query}" if parts.query else "")
        kind = _header(response.get("headers"), "content-type")
        streamed = "event-stream" in kind or answer.lstrip().startswith(("event:", "data:"))
        yield Recorded(
            index,
            fmt,
            body,
            endpoint,
            response=None if streamed else answer,
            stream=answer if streamed else None,
        )


def cassettes(roots: list[Path]) -> Iterator[tuple[str, list[Recorded]]]:
    """Every cassette under ``roots`` (``*.yaml``, ``*.yml``, ``*.yaml.gz``) with at least one
    exchange, by a name of its own (root, then the path inside it), in name order."""
    for root in roots:
        files = sorted(
            p
            for pattern in ("*.yaml", "*.yml", "*.yaml.gz")
            for p in root.rglob(pattern)
            if p.is_file()
        )
        for path in files:
            recorded = list(cassette(path))
            if recorded:
                yield f"{root.name}/{path.relative_to(root)}", recorded
