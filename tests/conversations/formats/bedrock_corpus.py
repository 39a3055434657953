"""The recorded Bedrock Converse exchanges under tests/fixtures/bedrock (sources, commits and
licences in its README), as ingest bodies: pydantic-ai's VCR cassettes (the request, the
endpoint from the URI, a JSON body or the eventstream bytes exactly as received) and the AI
SDK's fixtures (a JSON body, or ``.chunks.txt``: one decoded event a line, ``{<type>:
<payload>}``, framed here as the provider frames them)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from conversations.formats.bedrock.kit import MINIMAL_REQUEST, endpoint, frames

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "bedrock"


@dataclass(frozen=True)
class Exchange:
    name: str
    request: str
    endpoint: str
    response: str | None = None
    stream_base64: str | None = None
    status: int = 200

    def fields(self) -> dict[str, str]:
        out = {"request": self.request, "endpoint": self.endpoint}
        if self.response is not None:
            out["response"] = self.response
        if self.stream_base64 is not None:
            out["stream_base64"] = self.stream_base64
        return out

    @property
    def data(self) -> bytes:
        return base64.b64decode(self.stream_base64 or "")


def _cassette(path: Path) -> list[Exchange]:
    out = []
    for i, interaction in enumerate(yaml.safe_load(path.read_text())["interactions"]):
        request, response = interaction["request"], interaction["response"]
        url = urlsplit(request["uri"])
        common = {
            "name": f"{path.name}#{i}",
            "request": request["body"],
            "endpoint": url.path + (f"?{url.query}" if url.query else ""),
            "status": response["status"]["code"],
        }
        if "parsed_body" in response:
            body = json.dumps(response["parsed_body"], ensure_ascii=False)
            out.append(Exchange(**common, response=body))
        else:
            data = response["body"]["string"]
            data = data if isinstance(data, bytes) else data.encode()
            out.append(Exchange(**common, stream_base64=base64.b64encode(data).decode()))
    return out


def _ai_sdk(path: Path) -> Exchange:
    request = json.dumps(MINIMAL_REQUEST)
    if path.name.endswith(".chunks.txt"):
        events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        data = frames(events, padding=False)
        return Exchange(
            path.name,
            request,
            endpoint(streamed=True),
            stream_base64=base64.b64encode(data).decode(),
        )
    return Exchange(path.name, request, endpoint(), response=path.read_text())


def exchanges() -> list[Exchange]:
    out: list[Exchange] = []
    for path in sorted(ROOT.iterdir()):
        if path.name.endswith(".yaml"):
            out += _cassette(path)
        elif path.name.startswith("vercel-ai__"):
            out.append(_ai_sdk(path))
    return out
