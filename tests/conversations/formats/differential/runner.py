"""One stream through the project's parser and an SDK's accumulator, and the verdict.

A verdict agrees when both built a message and ``compare.differences`` finds nothing, or when
both refused the stream (the project with a FormatError, the SDK by raising). Anything else is a
divergence, described by its differences.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conversations.formats import FormatError, get
from tests.conversations.requests import minimal_request
from tests.providers import endpoint_of

from . import compare, oracles


def request_for(fmt: str) -> str:
    """The request a stream is read against: the format kit's minimal request."""
    return json.dumps(minimal_request(fmt))


@dataclass
class Ours:
    messages: list[Any] | None  # the stored messages, parsed back; None when refused
    error: FormatError | None = None
    unknown_chunks: list[str] = field(default_factory=list)


def ours(fmt: str, stream: str, request: str | None = None) -> Ours:
    try:
        parsed = get(fmt).parse(
            request=request or request_for(fmt),
            response=None,
            stream=stream,
            endpoint=endpoint_of(fmt),
        )
    except FormatError as exc:
        return Ours(None, exc)
    return Ours(
        [json.loads(m.raw) for m in parsed.output], unknown_chunks=parsed.params.unknown_chunks
    )


@dataclass
class Verdict:
    oracle: str
    ours: Ours
    theirs: oracles.Outcome
    diffs: list[str]

    @property
    def agree(self) -> bool:
        return not self.diffs

    def __str__(self) -> str:
        return f"{self.oracle}: " + "; ".join(self.diffs)


def verdict(
    oracle: str,
    mine: Ours,
    theirs: oracles.Outcome,
    view: Callable[[list[Any], list[Any]], tuple[Any, Any]],
) -> Verdict:
    if mine.messages is None or theirs.messages is None:
        if mine.messages is None and theirs.messages is None:
            return Verdict(oracle, mine, theirs, [])  # both refused the stream
        said_ours = f"refused ({mine.error.code}: {mine.error.detail})" if mine.error else "ok"
        said_theirs = f"raised ({theirs.error})" if theirs.messages is None else "ok"
        return Verdict(oracle, mine, theirs, [f"project {said_ours}; SDK {said_theirs}"])
    a, b = view(mine.messages, theirs.messages)
    return Verdict(oracle, mine, theirs, compare.differences(a, b))


def _anthropic_view(a: list[Any], b: list[Any]) -> tuple[Any, Any]:
    return compare.normal(a), compare.normal(b)


def _chat_view(a: list[Any], b: list[Any]) -> tuple[Any, Any]:
    return compare.normal(a, drop_null=True), [compare.chat_sdk_view(m) for m in b]


def _responses_view(a: list[Any], b: list[Any]) -> tuple[Any, Any]:
    return compare.normal(a), [compare.responses_sdk_view(m) for m in b]


def anthropic(stream: str, cuts: list[int], *, beta: bool) -> Verdict:
    mine = ours("anthropic.messages", stream)
    theirs = oracles.anthropic(stream, cuts, beta=beta)
    return verdict("anthropic-beta" if beta else "anthropic", mine, theirs, _anthropic_view)


def openai_chat(stream: str, cuts: list[int]) -> Verdict:
    mine = ours("openai.chat", stream)
    return verdict("openai-chat", mine, oracles.openai_chat(stream, cuts), _chat_view)


def openai_responses(stream: str, cuts: list[int]) -> Verdict:
    mine = ours("openai.responses", stream)
    return verdict(
        "openai-responses", mine, oracles.openai_responses(stream, cuts), _responses_view
    )


def ai_outcome(result: dict[str, Any], *, unvalidated: bool = False) -> oracles.Outcome:
    """The harness's result as an Outcome: the browser's (default transport) run, or the
    unvalidated run (the chunks as sent, which is what the console stores)."""
    if "crash" in result:
        return oracles.Outcome(error=f"harness: {result['crash']}")
    run = result["unvalidated"] if unvalidated and "unvalidated" in result else result["browser"]
    notes = {
        "transport_error": result["browser"]["transportError"],
        "error_chunk": run["errorChunk"],
    }
    if run["errors"]:
        return oracles.Outcome(error="; ".join(run["errors"]), notes=notes)
    if run["transportError"] is not None:
        return oracles.Outcome(error=run["transportError"]["message"], notes=notes)
    message = run["message"]
    return oracles.Outcome(messages=[] if message is None else [message], notes=notes)


def ai_verdict(
    stream: str, request: str, result: dict[str, Any], *, unvalidated: bool = False
) -> Verdict:
    mine = ours("ai-sdk.ui", stream, request)
    theirs = ai_outcome(result, unvalidated=unvalidated)

    def view(a: list[Any], b: list[Any]) -> tuple[Any, Any]:
        a = compare.normal(a)
        return a, [compare.ai_sdk_view(x, y) for x, y in zip(a, b, strict=False)] + b[len(a) :]

    return verdict("ai" + ("-unvalidated" if unvalidated else ""), mine, theirs, view)
