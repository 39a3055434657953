"""The differential test (issue 13): every stream format's accumulated message beside the one the
provider's own SDK builds from the same stream, field by field (compare.py says what counts as
the same).

- On generated streams (generate.py): ``DIFFERENTIAL_STREAMS`` per format (200 by default),
  from seed ``DIFFERENTIAL_SEED`` (13 by default), so a run is reproducible; a disagreement
  writes the stream to tests/artifacts/differential/ and names its seed.
- On every stream fixture: the recordings under tests/fixtures/providers, the hand-written AI
  SDK stream, and the hand-made streams of tests/fixtures/streams.
- Where the project and an SDK differ on purpose, a test below says which is right and pins
  both behaviours (``PINNED`` lists them for the fixtures); docs/formats.md explains each.

The AI SDK side runs in Node (node/harness.mjs, ``ai`` from node/package-lock.json, installed
by ``npm ci`` on first use); without Node >= 20 and npm those tests are skipped, saying so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conversations.formats import formats as all_formats
from conversations.formats import get
from tests.providers import fixture_files, load, stream_files

from . import compare, generate, oracles, runner

STREAMS_PER_FORMAT = int(os.environ.get("DIFFERENTIAL_STREAMS", "200"))
SEED = int(os.environ.get("DIFFERENTIAL_SEED", "13"))
TESTS = Path(__file__).resolve().parents[3]
FIXTURES = TESTS / "fixtures"
ARTIFACTS = TESTS / "artifacts" / "differential"


@pytest.fixture(scope="module")
def node() -> None:
    reason = oracles.node_unavailable()
    if reason is not None:
        pytest.skip(reason)
    oracles.node_install()


def seeds(fmt: str) -> list[int]:
    offset = list(generate.GENERATORS).index(fmt)
    return [SEED * 1_000_000 + offset * 100_000 + i for i in range(STREAMS_PER_FORMAT)]


def keep(case: generate.Generated, verdicts: list[runner.Verdict]) -> str:
    """The stream of a disagreement, written where it can be replayed; its description."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{case.format}-{case.seed}.sse"
    path.write_text(case.stream, encoding="utf-8", errors="surrogatepass")
    return f"seed {case.seed} ({path}): " + " | ".join(str(v) for v in verdicts)


def verdicts_of(case: generate.Generated) -> list[runner.Verdict]:
    if case.format == "anthropic.messages":
        found = [runner.anthropic(case.stream, case.cuts, beta=True)]
        if not case.beta_only:  # compaction and MCP blocks: beta-only (test below)
            found.append(runner.anthropic(case.stream, case.cuts, beta=False))
        return found
    if case.format == "openai.chat":
        return [runner.openai_chat(case.stream, case.cuts)]
    return [runner.openai_responses(case.stream, case.cuts)]


# --- generated streams --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["anthropic.messages", "openai.chat", "openai.responses"])
def test_generated_streams_agree_with_the_python_sdks(fmt: str) -> None:
    failures = []
    compared = 0
    for seed in seeds(fmt):
        case = generate.GENERATORS[fmt](seed)
        verdicts = verdicts_of(case)
        compared += len(verdicts)
        bad = [v for v in verdicts if not v.agree]
        if bad:
            failures.append(keep(case, bad))
    assert not failures, f"{len(failures)} of {STREAMS_PER_FORMAT} streams differ:\n" + "\n".join(
        failures[:10]
    )
    assert compared >= STREAMS_PER_FORMAT


@pytest.mark.slow
def test_generated_streams_agree_with_the_ai_sdk(node: None) -> None:
    cases = [generate.ai_sdk(seed) for seed in seeds("ai-sdk.ui")]
    version, results = oracles.ai_sdk(
        oracles.AiCase(str(c.seed), c.stream, c.base, c.cuts) for c in cases
    )
    assert version.startswith("6."), version
    failures = []
    for case in cases:
        request = case.request or runner.request_for("ai-sdk.ui")
        verdict = runner.ai_verdict(case.stream, request, results[str(case.seed)])
        if not verdict.agree:
            failures.append(keep(case, [verdict]))
    assert not failures, f"{len(failures)} of {len(cases)} streams differ:\n" + "\n".join(
        failures[:10]
    )


def test_the_comparison_sees_one_changed_field() -> None:
    """A test that cannot fail proves nothing: change one field of an accumulated message and
    the comparison names it."""
    case = generate.openai_chat(SEED)
    mine = runner.ours("openai.chat", case.stream)
    assert mine.messages is not None
    theirs = oracles.openai_chat(case.stream, case.cuts)
    assert runner.verdict("x", mine, theirs, runner._chat_view).agree
    changed = json.loads(json.dumps(mine.messages))
    changed[0]["role"] = "user"
    assert runner.verdict("x", runner.Ours(changed), theirs, runner._chat_view).diffs == [
        "$[0].role: 'user' != 'assistant'"
    ]
    assert compare.differences({"a": 1}, {"a": 1.0}) == []
    assert compare.differences({"a": True}, {"a": 1}) == ["$.a: True != 1"]
    assert compare.differences(["\U0001f600"], compare.normal(["\ud83d\ude00"])) == []
    assert compare.differences({"a": [1]}, {"a": [1, 2]}) == ["$.a: 1 elements != 2 elements"]


# --- every stream fixture -----------------------------------------------------------------------


@dataclass(frozen=True)
class Fixture:
    name: str
    format: str
    stream: str
    request: str | None = None


def _fixtures() -> Iterator[Fixture]:
    for name in fixture_files():
        for rec in load(name):
            if rec.stream is not None:
                yield Fixture(rec.name, rec.format, rec.stream)
    # The other recorded streams, each in the format whose kit claims it (with the request a kit
    # names for it).
    for f in stream_files():
        yield Fixture(f.name, f.format, f.stream, f.request)


FIXTURE_STREAMS = list(_fixtures())

# (fixture, oracle) -> the divergence it shows, each pinned by a test below.
PINNED = {
    ("vercel-ai__spliced-message-start.chunks.txt#0", "anthropic"): "second message_start",
    ("vercel-ai__spliced-message-start.chunks.txt#0", "anthropic-beta"): "second message_start",
    (
        "anthropics-anthropic-sdk-python__incomplete_partial_json_response.txt",
        "anthropic",
    ): "cut-off tool input",
    (
        "anthropics-anthropic-sdk-python__incomplete_partial_json_response.txt",
        "anthropic-beta",
    ): "cut-off tool input",
    ("streams/anthropic-tool-input-nan.sse", "anthropic"): "not JSON",
    ("streams/anthropic-tool-input-nan.sse", "anthropic-beta"): "not JSON",
    ("streams/anthropic-tool-input-overflow.sse", "anthropic"): "not JSON",
    ("streams/anthropic-tool-input-overflow.sse", "anthropic-beta"): "not JSON",
    ("streams/anthropic-compaction.sse", "anthropic"): "beta-only block",
    ("pydantic-pydantic-ai__test_anthropic_mcp_servers_stream.yaml#0", "anthropic"): (
        "beta-only block"
    ),
    ("streams/ai-sdk-unknown-chunk.sse", "ai"): "unknown chunk type",
}


def _fixture_verdicts(fixture: Fixture) -> list[runner.Verdict]:
    if fixture.format == "anthropic.messages":
        return [
            runner.anthropic(fixture.stream, [], beta=False),
            runner.anthropic(fixture.stream, [], beta=True),
        ]
    if fixture.format == "openai.chat":
        return [runner.openai_chat(fixture.stream, [])]
    return [runner.openai_responses(fixture.stream, [])]


# google.generate_content has its own oracle (test_google.py: google-genai's chat).
PY_FIXTURES = [
    f
    for f in FIXTURE_STREAMS
    if f.format in ("anthropic.messages", "openai.chat", "openai.responses")
]
AI_FIXTURES = [f for f in FIXTURE_STREAMS if f.format == "ai-sdk.ui"]


def test_there_are_fixtures_of_every_format() -> None:
    formats = {f.format for f in FIXTURE_STREAMS}
    # Every format whose streams are text (a binary stream has its own decoder's tests).
    assert formats == {f.name for f in all_formats() if not f.binary_stream}
    assert {name for name, _ in PINNED} <= {f.name for f in FIXTURE_STREAMS}


@pytest.mark.parametrize("fixture", PY_FIXTURES, ids=[f.name for f in PY_FIXTURES])
def test_every_fixture_agrees_with_the_python_sdks_or_is_pinned(fixture: Fixture) -> None:
    for verdict in _fixture_verdicts(fixture):
        pinned = PINNED.get((fixture.name, verdict.oracle))
        if pinned is None:
            assert verdict.agree, str(verdict)
        else:
            assert not verdict.agree, f"{verdict.oracle} now agrees: unpin {pinned!r}"


@pytest.fixture(scope="module")
def ai_fixture_results(node: None) -> dict[str, dict[str, Any]]:
    cases = [oracles.AiCase(f.name, f.stream, _continued(f)) for f in AI_FIXTURES]
    cases += [oracles.AiCase(name, stream, base) for name, (stream, base) in AI_PINNED.items()]
    return oracles.ai_sdk(cases)[1]


def _continued(fixture: Fixture) -> Any:
    if fixture.request is None:
        return None
    last = json.loads(fixture.request)["messages"][-1]
    return last if last["role"] == "assistant" else None


@pytest.mark.slow
@pytest.mark.parametrize("fixture", AI_FIXTURES, ids=[f.name for f in AI_FIXTURES])
def test_every_ai_sdk_fixture_agrees_with_the_ai_sdk_or_is_pinned(
    fixture: Fixture, ai_fixture_results: dict[str, dict[str, Any]]
) -> None:
    request = fixture.request or runner.request_for("ai-sdk.ui")
    verdict = runner.ai_verdict(fixture.stream, request, ai_fixture_results[fixture.name])
    pinned = PINNED.get((fixture.name, verdict.oracle))
    if pinned is None:
        assert verdict.agree, str(verdict)
    else:
        assert not verdict.agree, f"{verdict.oracle} now agrees: unpin {pinned!r}"


# --- where the project is right and an SDK is not (or both are, differently) --------------------


def _fixture(name: str) -> Fixture:
    return next(f for f in FIXTURE_STREAMS if f.name == name)


def test_pinned_a_second_message_start_starts_the_message_over() -> None:
    """A second ``message_start`` mid-stream is a new generation spliced in (the recording's
    first one stops inside its tool input): the message is the second generation. The SDK's
    ``accumulate_event`` ignores the second start and applies the second generation's deltas by
    index to the first one's blocks: two thinking texts run together, a tool input of two
    JSON texts, four blocks."""
    stream = _fixture("vercel-ai__spliced-message-start.chunks.txt#0").stream
    (ours,) = runner.ours("anthropic.messages", stream).messages or [None]
    assert [b.get("id") for b in ours["content"]] == [None, "toolu_second"]
    assert ours["content"][0]["thinking"] == "Let me call the tool."
    assert ours["content"][1]["input"] == {"value": "Sparkle Day"}
    for beta in (False, True):
        (theirs,) = oracles.anthropic(stream, beta=beta).messages or [None]
        assert len(theirs["content"]) == 4
        assert theirs["content"][0]["thinking"] == "I will call the tool.Let me call the tool."
        assert theirs["content"][1]["id"] == "toolu_first"


def _chat(*deltas: dict[str, Any], finish: str = "stop", choices: Any = None) -> str:
    head = {"id": "chatcmpl-p", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    out = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    out += [{**head, "choices": c} for c in choices or ()]
    out.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in out) + "data: [DONE]\n\n"


def test_pinned_an_id_repeated_in_every_chunk_is_the_id_once() -> None:
    """Some compatible servers resend a tool call's id, type and name (and an audio id) in every
    chunk. The SDK's ``accumulate_delta`` concatenates strings, so its id becomes the id three
    times over and no tool result matches it any more."""
    call = {"id": "call_1", "type": "function", "function": {"name": "get_order"}}
    stream = _chat(
        {"role": "assistant"},
        {"tool_calls": [{"index": 0, **call, "function": {**call["function"], "arguments": ""}}]},
        {"tool_calls": [{"index": 0, **call, "function": {**call["function"], "arguments": "{}"}}]},
        {"tool_calls": [{"index": 0, **call, "function": {**call["function"], "arguments": ""}}]},
        {"audio": {"id": "audio_1", "transcript": "Hi"}},
        {"audio": {"id": "audio_1", "transcript": " there"}},
        finish="tool_calls",
    )
    (ours,) = runner.ours("openai.chat", stream).messages or [None]
    assert ours["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}}
    ]
    assert ours["audio"] == {"id": "audio_1", "transcript": "Hi there"}
    (theirs,) = oracles.openai_chat(stream).messages or [None]
    assert theirs["tool_calls"][0]["id"] == "call_1call_1call_1"
    assert theirs["tool_calls"][0]["function"]["name"] == "get_orderget_orderget_order"
    assert theirs["audio"]["id"] == "audio_1audio_1"


def test_pinned_choices_and_tool_calls_out_of_order() -> None:
    """With ``n > 1`` the choices of one chunk need not come in index order, and a tool call may
    begin before one with a lower index. The project reads choice 0 by its index and files each
    call by its own; the SDK files a choice or call by its index into the list as it stands: the
    choice-1 text lands in choice 0 (or the list is too short and it raises)."""
    other = {"index": 1, "delta": {"role": "assistant", "content": "OTHER"}, "finish_reason": None}
    first = {"index": 0, "delta": {"role": "assistant", "content": "mine"}, "finish_reason": None}
    for before in ([], [[]]):  # the first chunk names choice 1 / a chunk with no choices first
        stream = _chat(choices=[*before, [other], [first]])
        (ours,) = runner.ours("openai.chat", stream).messages or [None]
        assert ours == {"role": "assistant", "content": "mine"}
        theirs = oracles.openai_chat(stream)
        # IndexError, or choice 0's text filed under choice 1 and no choice 0 at all.
        assert theirs.messages is None or theirs.messages[0].get("content") != "mine"

    late = {"index": 1, "id": "call_b", "type": "function", "function": {"name": "b"}}
    early = {"index": 0, "id": "call_a", "type": "function", "function": {"name": "a"}}
    stream = _chat(
        {"role": "assistant"},
        {"tool_calls": [{**late, "function": {"name": "b", "arguments": "{}"}}]},
        {"tool_calls": [{**early, "function": {"name": "a", "arguments": "{}"}}]},
        {"tool_calls": [{"index": 1, "function": {"arguments": ""}}]},
        finish="tool_calls",
    )
    (ours,) = runner.ours("openai.chat", stream).messages or [None]
    assert [(c["id"], c["function"]["name"]) for c in ours["tool_calls"]] == [
        ("call_b", "b"),
        ("call_a", "a"),
    ]  # each call whole, in the order they began
    assert oracles.openai_chat(stream).error is not None  # IndexError


def test_pinned_numbers_json_cannot_carry_are_refused() -> None:
    """``NaN`` is not JSON and ``1e400`` overflows a double: the Anthropic SDK (jiter) reads
    them as nan and inf, and its message serialises back to ``NaN``/``Infinity``, which the API
    refuses on the next turn. The project refuses the exchange with a precise error instead of
    storing a message it could not replay."""
    for name, value in (("nan", "NaN"), ("overflow", "Infinity")):
        stream = _fixture(f"streams/anthropic-tool-input-{name}.sse").stream
        mine = runner.ours("anthropic.messages", stream)
        assert mine.error is not None and mine.error.code == "not_json"
        for beta in (False, True):
            (theirs,) = oracles.anthropic(stream, beta=beta).messages or [None]
            amount = theirs["content"][0]["input"]["amount"]
            assert json.dumps(amount) == value


def test_pinned_a_cut_off_tool_input_keeps_the_start_input() -> None:
    """A tool input cut off by ``max_tokens`` is not JSON. The SDK's partial parse makes a value
    of it (``"taxes.txt"`` and the lines that had arrived); a number cut at ``12`` of ``1234``
    would come out as 12, a value the model never gave. The project's message keeps the input
    of the block's start (``{}``), its Block the partial text, and the exchange is truncated."""
    stream = _fixture(
        "anthropics-anthropic-sdk-python__incomplete_partial_json_response.txt"
    ).stream
    parsed = get("anthropic.messages").parse(
        request=runner.request_for("anthropic.messages"), response=None, stream=stream
    )
    tool = json.loads(parsed.output[0].raw)["content"][1]
    assert tool["input"] == {}
    assert isinstance(parsed.output[0].blocks[1].input, str)
    assert parsed.params.truncated
    (theirs,) = oracles.anthropic(stream, beta=True).messages or [None]
    assert theirs["content"][1]["input"]["filename"] == "taxes.txt"


def test_pinned_beta_only_blocks_follow_the_beta_accumulator() -> None:
    """``compaction`` (``compaction_delta``) and ``mcp_tool_use`` (its ``input_json_delta``) are
    beta features: only the beta accumulator reads their deltas, and the project follows it. The
    non-beta one keeps a compaction block's ``content: null`` and an MCP call's empty input."""
    compaction = _fixture("streams/anthropic-compaction.sse").stream
    (ours,) = runner.ours("anthropic.messages", compaction).messages or [None]
    assert runner.anthropic(compaction, [], beta=True).agree
    (plain,) = oracles.anthropic(compaction, beta=False).messages or [None]
    assert plain["content"][0].get("content") is None
    assert ours["content"][0]["content"].startswith("The customer asked")
    mcp = _fixture("pydantic-pydantic-ai__test_anthropic_mcp_servers_stream.yaml#0").stream
    assert runner.anthropic(mcp, [], beta=True).agree
    (plain,) = oracles.anthropic(mcp, beta=False).messages or [None]
    assert plain["content"][1]["type"] == "mcp_tool_use" and plain["content"][1]["input"] == {}


def test_reencrypted_reasoning_is_the_completed_items_blob() -> None:
    """OpenAI encrypts reasoning again for every serialisation: ``response.output_item.done``
    and ``response.completed`` carry different ``encrypted_content`` for the same item, both
    valid. The SDK's final response takes the completed one, and so does the project (issue 28:
    the stored message is the one the SDK hands the backend, which sends it back)."""
    stream = _fixture("vercel-ai__openai-reasoning-encrypted-content.1.chunks.txt#0").stream
    verdict = runner.openai_responses(stream, [])
    assert verdict.agree, str(verdict)
    events = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]
    done = next(e for e in events if e["type"] == "response.output_item.done")
    final = next(e for e in events if e["type"] == "response.completed")["response"]["output"]
    assert verdict.ours.messages is not None
    assert done["item"]["encrypted_content"] != final[0]["encrypted_content"]
    assert verdict.ours.messages[0]["encrypted_content"] == final[0]["encrypted_content"]


# Streams for the AI SDK pins: name -> (stream, continued message).
def _ui(*chunks: dict[str, Any]) -> str:
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


_CONTINUED = {
    "id": "msg_a",
    "role": "assistant",
    "parts": [
        {"type": "step-start"},
        {"type": "tool-ask", "toolCallId": "c1", "state": "input-available", "input": {}},
    ],
}
AI_PINNED: dict[str, tuple[str, Any]] = {
    "overflow": (
        _ui(
            {"type": "start", "messageId": "m"},
            {"type": "tool-input-start", "toolCallId": "c", "toolName": "t"},
            {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"n": 1e400}'},
            {"type": "finish"},
        ),
        None,
    ),
    "lone-surrogate": (
        _ui(
            {"type": "start", "messageId": "m"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "\ud800"},
            {"type": "finish"},
        ),
        None,
    ),
    "cr-framing": (
        "data: "
        + "\r\rdata: ".join(
            json.dumps(c)
            for c in (
                {"type": "start", "messageId": "m"},
                {"type": "finish", "messageMetadata": {"usage": {"outputTokens": 3}}},
            )
        )
        + "\r\r",
        None,
    ),
    "new-message-id": (
        _ui(
            {"type": "start", "messageId": "msg_b"},
            {"type": "tool-output-available", "toolCallId": "c1", "output": "yes"},
            {"type": "finish"},
        ),
        _CONTINUED,
    ),
}


@pytest.mark.slow
def test_pinned_an_unknown_chunk_type_is_read_past_and_flagged(
    ai_fixture_results: dict[str, dict[str, Any]],
) -> None:
    """ai 6's default transport validates every chunk and fails the stream at one whose type it
    does not know: the browser shows an error and the message stops there. The console reads
    past it, as ``processUIMessageStream`` (and any transport that does not validate) does, and
    flags the exchange: docs/formats.md says why."""
    fixture = _fixture("streams/ai-sdk-unknown-chunk.sse")
    result = ai_fixture_results[fixture.name]
    assert result["browser"]["transportError"]["at"] == 4
    request = runner.request_for("ai-sdk.ui")
    assert runner.ai_verdict(fixture.stream, request, result, unvalidated=True).agree
    assert runner.ours("ai-sdk.ui", fixture.stream).unknown_chunks == ["reasoning-file"]


@pytest.mark.slow
def test_pinned_values_javascript_keeps_and_stored_text_cannot(
    ai_fixture_results: dict[str, dict[str, Any]],
) -> None:
    """JavaScript reads ``1e400`` as Infinity and writes it as ``null``; it keeps a lone
    surrogate in a string. Stored as the browser holds them, the first would change the number
    and the second is not UTF-8: the project refuses both exchanges, precisely."""
    theirs = ai_fixture_results["overflow"]["browser"]["message"]
    assert theirs["parts"][0]["input"] == {"n": None}
    assert runner.ours("ai-sdk.ui", AI_PINNED["overflow"][0]).error is not None
    theirs = ai_fixture_results["lone-surrogate"]["browser"]["message"]
    assert theirs["parts"][0]["text"] == "\ud800"
    mine = runner.ours("ai-sdk.ui", AI_PINNED["lone-surrogate"][0])
    assert mine.error is not None and mine.error.code == "invalid_unicode"


@pytest.mark.slow
def test_pinned_a_new_message_id_on_a_continued_message_keeps_the_message(
    ai_fixture_results: dict[str, dict[str, Any]],
) -> None:
    """A ``start`` naming another message id while the stream continues the last assistant
    message: ``readUIMessageStream`` starts a new message (and then finds no tool call to give
    the output to), ``useChat``'s submit keeps the message and only renames it. The project
    follows ``useChat``, the browser whose message the chat backend stores."""
    stream, base = AI_PINNED["new-message-id"]
    request = json.dumps(
        {"messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "?"}]}, base]}
    )
    (ours,) = runner.ours("ai-sdk.ui", stream, request).messages or [None]
    assert ours["id"] == "msg_b"
    assert ours["parts"][1]["state"] == "output-available"
    assert ai_fixture_results["new-message-id"]["browser"]["errors"]  # no tool invocation c1


@pytest.mark.slow
def test_pinned_the_last_event_of_a_stream_framed_in_cr_is_read(
    ai_fixture_results: dict[str, dict[str, Any]],
) -> None:
    """SSE lines may end in CR alone. eventsource-parser (the AI SDK's parser) holds a final CR
    back, waiting to see whether LF follows, and never dispatches the stream's last event when
    nothing does; the WHATWG rules dispatch it at the blank line, and so do the project and the
    Python SDKs. Here that event is the ``finish`` with the usage metadata."""
    stream = AI_PINNED["cr-framing"][0]
    (ours,) = runner.ours("ai-sdk.ui", stream).messages or [None]
    assert ours["metadata"] == {"usage": {"outputTokens": 3}}
    assert "metadata" not in ai_fixture_results["cr-framing"]["browser"]["message"]
