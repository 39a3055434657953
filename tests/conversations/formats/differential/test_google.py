"""``google.generate_content`` streams against the official ``google-genai`` SDK: its ``Chat``
reads each stream (the recorded AI SDK fixtures, and generated ones) and keeps one ``Content``
per chunk; the console stores one ``Content`` for the answer (``formats/google/accumulate.py``).
Both are the same answer when the SDK's pieces, put together by that rule, are the stored
message in its match form (names and signature bytes), and when the next request the SDK's chat
sends (its kept pieces, signatures URL-safe base64) matches the stored answer without a
rewrite. Also: the JSON-array framing gives what SSE gives."""

from __future__ import annotations

import json
import os
import random
from typing import Any

import pytest

from conversations.formats import get
from conversations.formats.google.accumulate import merged
from conversations.formats.google.kit import STREAM, signature
from conversations.replay import canonical_sha256
from tests.conversations.formats.differential.google_chat import chat_history
from tests.conversations.formats.differential.test_differential import FIXTURE_STREAMS

FMT = "google.generate_content"
GOOGLE = get(FMT)
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
STREAMS = int(os.environ.get("DIFFERENTIAL_STREAMS", "60"))
SEED = int(os.environ.get("DIFFERENTIAL_SEED", "13"))
FIXTURES = [f for f in FIXTURE_STREAMS if f.format == FMT]


def ours(stream: str) -> Any:
    parsed = GOOGLE.parse(request=json.dumps(REQUEST), stream=stream, endpoint=STREAM)
    assert len(parsed.output) == 1
    return parsed.output[0]


def check(stream: str) -> None:
    stored = ours(stream)
    kept = chat_history(stream)
    assert kept.messages is not None, kept.error
    assert GOOGLE.match_form(merged(kept.messages)) == GOOGLE.match_form(json.loads(stored.raw))
    # The SDK's next request: the question, its kept pieces, the next question.
    again = {
        "contents": [
            REQUEST["contents"][0],
            *kept.messages,
            {"role": "user", "parts": [{"text": "and then?"}]},
        ]
    }
    parsed = GOOGLE.parse(request=json.dumps(again), stream=stream, endpoint=STREAM)
    assert len(parsed.history) == 3
    resent = parsed.history[1]
    assert canonical_sha256(resent.raw, FMT) == canonical_sha256(stored.raw, FMT)
    assert resent.blocks == stored.blocks


def test_there_are_recorded_gemini_streams() -> None:
    assert len(FIXTURES) >= 4


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_every_recorded_stream_is_what_the_sdk_chat_keeps(fixture: Any) -> None:
    check(fixture.stream)


# --- generated streams -----------------------------------------------------------------------

_WORDS = ["Your", " order", " ORD-1", " shipped", " 🚚", " über", " 😀!", "\n\n", ' "q"', " ok"]


def _chunk(parts: list[dict[str, Any]], finish: str | None, rng: random.Random) -> str:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    body = {"candidates": [candidate], "modelVersion": "gemini-3-pro-preview"}
    if rng.random() < 0.5:
        body["usageMetadata"] = {"promptTokenCount": 3, "candidatesTokenCount": rng.randint(1, 9)}
    indent = rng.choice([None, None, 1])
    return json.dumps(body, ensure_ascii=rng.random() < 0.5, indent=indent)


def generated(rng: random.Random) -> tuple[str, str]:
    """A stream (SSE, and the same chunks as the JSON array) from Gemini's documented shapes:
    thought pieces, text pieces, a signature on a text piece mid-answer (more text follows it),
    on a lone empty last piece, or on the first of parallel function calls."""
    chunks: list[list[dict[str, Any]]] = []
    if rng.random() < 0.4:
        for _ in range(rng.randint(1, 3)):
            chunks.append([{"text": rng.choice(_WORDS), "thought": True}])
    for _ in range(rng.randint(1, 5)):
        part: dict[str, Any] = {"text": rng.choice(_WORDS)}
        if rng.random() < 0.2:
            part["thoughtSignature"] = signature(str(rng.random()))
        chunks.append([part])
    if rng.random() < 0.4:
        calls: list[dict[str, Any]] = [
            {"functionCall": {"name": "get_order", "args": {"n": i}}}
            for i in range(rng.randint(1, 3))
        ]
        calls[0]["thoughtSignature"] = signature("call")
        chunks.append(calls)
    last = [{"text": "", "thoughtSignature": signature("end")}] if rng.random() < 0.6 else []
    if not last:
        last = [{"text": rng.choice(_WORDS)}]
    texts = [_chunk(c, None, rng) for c in chunks] + [_chunk(last, "STOP", rng)]
    eol = rng.choice(["\n", "\r\n"])
    sse = "".join("".join(f"data: {line}{eol}" for line in t.split("\n")) + eol for t in texts)
    array = "[" + "\n,\r\n".join(texts) + "]"
    return sse, array


@pytest.mark.parametrize("n", range(STREAMS))
def test_generated_streams_are_what_the_sdk_chat_keeps(n: int) -> None:
    rng = random.Random(f"{SEED}:{n}")
    sse, array = generated(rng)
    check(sse)
    assert ours(array).raw == ours(sse).raw


def test_a_signed_text_part_followed_by_more_text_stays_two_parts() -> None:
    chunks = [
        {"candidates": [{"content": {"parts": [{"text": "A", "thoughtSignature": "c2ln"}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "B"}]}, "finishReason": "STOP"}]},
    ]
    for c in chunks:
        c["candidates"][0]["content"]["role"] = "model"  # type: ignore[index]
    chunks = [
        *chunks,
    ]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    stored = json.loads(ours(stream).raw)
    assert stored["parts"] == [{"text": "A", "thoughtSignature": "c2ln"}, {"text": "B"}]
    check(stream)
