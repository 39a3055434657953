"""The real-stream corpus (issue 28) through the differential test: every recorded provider
stream under tests/conversations/formats/corpus (README there: sources, commits, licences),
turned back into its provider's SSE bytes (corpus.py), parsed by the project and accumulated by
the official Python SDK (anthropic: both accumulators; openai: Chat Completions or Responses).

A stream agrees, or it is listed in ``DIFFERENCES`` with the difference docs/formats.md
explains; a listed stream that starts to agree fails too (unlist it). The tests after the
parametrised one say, for each listed difference, which side is right.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from . import corpus, oracles, runner

STREAMS = corpus.streams()
_V = "vercel-ai/packages/"
_ANT = _V + "anthropic/src/__fixtures__/"
_RESP = _V + "openai/src/responses/__fixtures__/"

# stream -> oracle -> the documented difference (docs/formats.md, "The real-stream corpus").
DIFFERENCES: dict[str, dict[str, str]] = {
    _ANT + "anthropic-compaction.1.chunks.txt": {"anthropic": "beta-only block"},
    _ANT + "anthropic-mcp.1.chunks.txt": {"anthropic": "beta-only block"},
    _ANT + "spliced-message-start.chunks.txt": {
        "anthropic": "second message_start",
        "anthropic-beta": "second message_start",
    },
    _V + "moonshotai/src/__fixtures__/moonshotai-stream.chunks.txt": {
        "openai-chat": "chunks without object"
    },
    _V + "perplexity/src/__fixtures__/perplexity-citations.chunks.txt": {
        "openai-chat": "role resent"
    },
    _V + "perplexity/src/__fixtures__/perplexity-text.chunks.txt": {"openai-chat": "role resent"},
    "pydantic-ai/test_openrouter_streaming_reasoning.sse": {
        "openai-chat": "role resent, reasoning_details format kept whole"
    },
    _RESP + "github-copilot-id-rotation.1.chunks.txt": {"openai-responses": "response id rotates"},
    _RESP + "openai-client-tool-search.1.chunks.txt": {"openai-responses": "call id changes"},
}


def verdicts(stream: corpus.Stream) -> list[runner.Verdict]:
    if stream.format == "anthropic.messages":
        return [
            runner.anthropic(stream.stream, [], beta=False),
            runner.anthropic(stream.stream, [], beta=True),
        ]
    if stream.format == "openai.chat":
        return [runner.openai_chat(stream.stream, [])]
    return [runner.openai_responses(stream.stream, [])]


def _stream(name: str) -> corpus.Stream:
    return next(s for s in STREAMS if s.name == name)


def test_the_corpus_holds_real_streams_of_every_python_sdk_format() -> None:
    counts = Counter(s.format for s in STREAMS)
    assert counts["anthropic.messages"] >= 40, counts
    assert counts["openai.responses"] >= 40, counts
    assert counts["openai.chat"] >= 15, counts
    assert set(DIFFERENCES) <= {s.name for s in STREAMS}


@pytest.mark.parametrize("stream", STREAMS, ids=[s.name for s in STREAMS])
def test_every_corpus_stream_agrees_with_the_sdk_or_its_difference_is_documented(
    stream: corpus.Stream,
) -> None:
    listed = DIFFERENCES.get(stream.name, {})
    for verdict in verdicts(stream):
        reason = listed.get(verdict.oracle)
        if reason is None:
            assert verdict.agree, str(verdict)
        else:
            assert not verdict.agree, f"{verdict.oracle} now agrees: unlist {reason!r}"


# --- each documented difference: which side is right ---------------------------------------------


@pytest.mark.parametrize(
    "name",
    [n for n, d in DIFFERENCES.items() if any("role resent" in v for v in d.values())],
)
def test_a_role_resent_in_every_chunk_is_the_role_once(name: str) -> None:
    """Perplexity and OpenRouter send ``"role": "assistant"`` in every chunk. The SDK's
    ``accumulate_delta`` concatenates strings, so its message says ``assistantassistant...``, a
    role the API refuses when the backend sends the turn back; the project keeps it once. The
    rest of the message is the SDK's, field by field (OpenRouter's ``reasoning_details`` merged
    by index included)."""
    stream = _stream(name).stream
    (theirs,) = oracles.openai_chat(stream).messages or [None]
    role = theirs["role"]
    assert role != "assistant" and role == "assistant" * (len(role) // len("assistant"))
    expected = {**theirs, "role": "assistant"}
    ours = runner.ours("openai.chat", stream)
    if "reasoning_details" in expected:  # each entry's format as OpenRouter sent it, once
        mine = (ours.messages or [{}])[0].get("reasoning_details") or []
        expected["reasoning_details"] = [
            {**e, "format": m.get("format")} if "format" in e else e
            for e, m in zip(expected["reasoning_details"], mine, strict=True)
        ]
    verdict = runner.verdict(
        "openai-chat", ours, oracles.Outcome(messages=[expected]), runner._chat_view
    )
    assert verdict.agree, str(verdict)


def test_chunks_without_object_are_read_as_a_backend_iterating_them_reads_them() -> None:
    """Moonshot's chunks carry no ``object``. The SDK's stream helper skips every chunk whose
    ``object`` is not ``chat.completion.chunk`` (it filters Azure's asynchronous content-filter
    events that way) and ends with no message at all; a backend iterating ``create(stream=True)``
    feeds each chunk to the same accumulator and gets the message the project stores."""
    stream = _stream(_V + "moonshotai/src/__fixtures__/moonshotai-stream.chunks.txt").stream
    assert oracles.openai_chat(stream).messages == []
    ours = runner.ours("openai.chat", stream)
    verdict = runner.verdict(
        "openai-chat", ours, oracles.openai_chat(stream, helper=False), runner._chat_view
    )
    assert verdict.agree, str(verdict)
    assert ours.messages and ours.messages[0]["reasoning_content"]


@pytest.mark.parametrize(
    ("name", "raised", "same_ids"),
    [
        (_RESP + "github-copilot-id-rotation.1.chunks.txt", "Lifecycle response identity", False),
        (_RESP + "openai-client-tool-search.1.chunks.txt", "Completed output item identity", True),
    ],
)
def test_identity_checks_the_sdk_fails_keep_the_completed_response(
    name: str, raised: str, same_ids: bool
) -> None:
    """Two real streams fail the SDK's own consistency checks: GitHub Copilot's Responses
    endpoint rotates the response id between lifecycle events, and OpenAI's client
    ``tool_search_call`` changes its ``call_id`` between ``output_item.added`` and ``done``. The
    SDK raises ``RuntimeError`` and the backend's loop gets no response; the provider answered
    200 and the customer saw the answer, so the project records it: the items are the terminal
    response's output, as the SDK would have returned them without its check. (The Copilot
    recording gives every id a fresh value, items' too: no item of the terminal response has
    the identity of a streamed one, so the ``output_item.done`` items are kept; they differ
    from the terminal ones in their ids only.)"""
    stream = _stream(name).stream
    theirs = oracles.openai_responses(stream)
    assert theirs.messages is None and raised in (theirs.error or "")
    ours = runner.ours("openai.responses", stream)
    events = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]
    final = next(e for e in events if e["type"] == "response.completed")["response"]["output"]
    if same_ids:
        assert ours.messages == final
    else:
        done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
        assert ours.messages == done
        assert [{**i, "id": None} for i in done] == [{**i, "id": None} for i in final]
