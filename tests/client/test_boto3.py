"""The Python client instruments a boto3 ``bedrock-runtime`` client (botocore's event hooks):
real boto3 against a fake Bedrock on loopback that answers Converse with a recorded JSON body and
ConverseStream with recorded eventstream bytes (chunked, cut anywhere), and a real console.
Each exchange arrives once, with its endpoint (the model id percent-encoded as boto3 sent it):
the request as boto3 sent it, the answer as the fake sent it (a stream byte for byte, as
``stream_base64``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import console_client
import pytest

from conversations.formats import get
from conversations.formats.bedrock.kit import boto3_client, converse
from conversations.formats.bedrock.recordings import exchanges
from conversations.models import Exchange

from .conftest import ConsoleServer

pytestmark = pytest.mark.slow
FMT = get("bedrock.converse")
STREAM = next(e for e in exchanges() if "thinking_part_stream" in e.name)
JSON_ANSWER = next(e for e in exchanges() if "anthropic_tool_with_thinking.yaml#0" in e.name)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    received: list[tuple[str, bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.received.append((self.path, body))
        if self.path.endswith("/converse-stream"):
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.amazon.eventstream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            data = STREAM.data
            for start in range(0, len(data), 61):
                piece = data[start : start + 61]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            payload = (JSON_ANSWER.response or "").encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def bedrock() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Handler.received = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"


def test_a_boto3_client_s_calls_arrive_with_their_endpoint_byte_for_byte(
    bedrock: str, live_console: ConsoleServer, token: str, tmp_path: Path
) -> None:
    client = boto3_client(bedrock)
    assert (
        console_client.instrument(
            client, url=live_console.url, token=token, spool_dir=tmp_path, backoff=0.05
        )
        is client
    )
    with console_client.conversation("conv-boto3-stream", customer="cus-1"):
        events = converse(client, MODEL, "Where is my parcel?", True)
    with console_client.conversation("conv-boto3-json", customer="cus-1"):
        (answer,) = converse(client, MODEL, "And now?", False)
    outside = converse(client, MODEL, "not in a conversation", False)  # not captured
    assert any("contentBlockDelta" in e for e in events) and "output" in answer and outside
    assert console_client.flush(timeout=60)
    counts = console_client.counters()
    assert (counts.sent, counts.dropped, counts.rejected) == (2, 0, 0)

    stored = Exchange.objects.filter(conversation__external_id__startswith="conv-boto3")
    assert [e.requested_model for e in stored] == [MODEL, MODEL]
    (stream_path, stream_body), (json_path, json_body) = _Handler.received[:2]
    assert "%3A" in stream_path
    assert unquote(stream_path).endswith(f"/model/{MODEL}/converse-stream")
    assert json_path.endswith("/converse") and b"And now?" in json_body
    # The question as boto3 sent it; the streamed answer as the console reads the fake's bytes.
    streamed = console_client.history("conv-boto3-stream", url=live_console.url, token=token)
    fields = {k: v for k, v in STREAM.fields().items() if k != "request"}
    parsed = FMT.parse(request=stream_body.decode(), **fields)
    assert streamed.raw_messages[0] in stream_body
    assert streamed.raw_messages[1] == parsed.output[0].raw.encode()
    # The JSON answer: the fake's output.message, byte for byte, its signature and all.
    plain = console_client.history("conv-boto3-json", url=live_console.url, token=token)
    assert plain.raw_messages[0] in json_body
    assert plain.raw_messages[1] in (JSON_ANSWER.response or "").encode()
    content = json.loads(plain.raw_messages[1])["content"]
    assert content[0]["reasoningContent"]["reasoningText"]["signature"]
    client.close()
