"""The recorded Bedrock Converse exchanges the kit claims (``tests/fixtures/bedrock/``, sources,
commits and licences in its README), as ingest bodies: pydantic-ai's VCR cassettes (the
request, the endpoint from the URI, a JSON body or the eventstream bytes exactly as received)
and the AI SDK's fixtures (a JSON body, or ``.chunks.txt``: one decoded event a line,
``{<type>: <payload>}``, framed here as the provider frames them). For the tests (the kit's
``recorded``): read only where the repository's tests are, ``yaml`` imported when called."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..kit import Sample
from .eventstream import encode_frame

ROOT = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "bedrock"
MINIMAL_REQUEST = {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0"


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

    def sample(self) -> Sample:
        return Sample(
            self.request,
            response=self.response,
            stream_base64=self.stream_base64,
            endpoint=self.endpoint,
        )


def _cassette(path: Path) -> list[Exchange]:
    import yaml

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
        data = b"".join(
            encode_frame(name, json.dumps(payload).encode())
            for event in events
            for name, payload in event.items()
        )
        return Exchange(
            path.name,
            request,
            f"/model/{MODEL}/converse-stream",
            stream_base64=base64.b64encode(data).decode(),
        )
    return Exchange(path.name, request, f"/model/{MODEL}/converse", response=path.read_text())


def exchanges() -> list[Exchange]:
    out: list[Exchange] = []
    if not ROOT.is_dir():
        return out  # an installed console, without the repository's tests
    for path in sorted(ROOT.iterdir()):
        if path.name.endswith(".yaml"):
            out += _cassette(path)
        elif path.name.startswith("vercel-ai__"):
            out.append(_ai_sdk(path))
    return out


def recorded() -> list[tuple[str, Sample]]:
    """The answered exchanges, each with its name (the kit's ``recorded``)."""
    return [(e.name, e.sample()) for e in exchanges() if e.status == 200]
