"""Google Gemini ``generateContent`` and ``streamGenerateContent`` (``google.generate_content``):
the request, a JSON response, or a stream (SSE with ``alt=sse``, the JSON array without).

What a parse produces (DESIGN section 19):

- history: one Message per element of the request's ``contents``, ``raw`` = the element's exact
  source text; its role as sent (``user`` when it names none; ``model`` is the assistant:
  the profile's ``roles``).
- output: a JSON response's ``candidates[0].content``, its exact source text. A stream's answer
  is one ``Content``: each chunk's ``candidates[0].content`` holds the parts generated since the
  chunk before, put together by ``accumulate.py`` (a text continues the text before it until a
  part carries a signature: a signed text part followed by more text stays two parts, and a
  signature that comes alone on an empty last part goes onto the text it closes, where a
  non-streamed response has it), serialised once, compactly.
- a history that sends a streamed answer back one ``Content`` per chunk (``google-genai``'s
  ``Chat`` records it so) holds successive ``model`` contents: they are put together by the same
  rule into one history message, so the next request matches the stored answer (both forms
  count as unmodified: the differential test runs the SDK's chat); a single content is kept as
  its exact source text.
- params: the model (from the endpoint: the path names it), ``maxOutputTokens`` and the
  thinking config (request); ``modelVersion`` (the snapshot), ``responseId``, the finish
  reason, a blocked prompt's ``blockReason`` (a refusal), usage (response or the stream's last
  chunk: Gemini's counts are cumulative).

Usage: ``promptTokenCount`` holds ``cachedContentTokenCount``; the tool-use prompt
(``toolUsePromptTokenCount``, a server tool's results read back) is input too. The output the
call was billed for is ``candidatesTokenCount`` plus ``thoughtsTokenCount`` (reasoning, split
out).

A stream's end is its ``finishReason`` (or a blocked prompt, or an ``error`` chunk: kept as the
stream's error, what arrived before it kept); one that ends without is refused as
``truncated_stream`` unless the client cancelled it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ...blocks import Message, Params, ParsedExchange
from ..base import (
    FormatError,
    Span,
    body_members,
    compact_checked,
    element_spans,
    expect,
    object_member_spans,
    opt_str,
    take_answer,
)
from ..profile import Endpoint, Finish
from ..registry import Format
from ..traces import Trace, TraceKind, Withheld
from . import parts
from .accumulate import Turn, merged
from .profile import FORMAT, PROFILE
from .stream import Chunk, chunks, is_array


def _get(obj: dict[str, Any], key: str, kind: type, *, field: str, at: str) -> Any:
    """``obj[key]`` (camelCase, or its snake_case spelling) checked against ``kind``; None when
    absent or null."""
    value = obj.get(key)
    name = key
    if value is None:
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        value, name = obj.get(snake), snake
    if value is None:
        return None
    return expect(value, kind, field=field, at=f"{at}.{name}")


# --- request ---------------------------------------------------------------------------------


def _parse_request(request: str, params: Params) -> list[Message]:
    field = "request"
    members = body_members(request, field=field)
    body = {key: span.value for key, span in members.items()}
    params.request_settings = {k: v for k, v in body.items() if k != "contents"}
    params.requested_model = _get(body, "model", str, field=field, at="$")
    config = _get(body, "generationConfig", dict, field=field, at="$")
    if config is not None:
        at = "$.generationConfig"
        params.max_tokens = _get(config, "maxOutputTokens", int, field=field, at=at)
        thinking = _get(config, "thinkingConfig", dict, field=field, at=at)
        if thinking is not None:
            _apply_thinking(thinking, params, at=f"{at}.thinkingConfig")
    if "contents" not in members:
        raise FormatError(
            "expected 'contents' (array), but the key is missing",
            field=field,
            at="$.contents",
            code="missing",
        )
    expect(members["contents"].value, list, field=field, at="$.contents")
    history: list[Message] = []
    run: list[Any] = []  # successive model contents: one turn sent back one piece per chunk
    for i, span in enumerate(element_spans(members["contents"], field=field, at="$.contents")):
        role, blocks = parts.content_blocks(span.value, field=field, at=f"$.contents[{i}]")
        if role == "model" and history and history[-1].role == "model":
            if not run:
                run.append(json.loads(history[-1].raw))
            run.append(span.value)
            content = merged(run)
            raw = compact_checked(content, field=field, at=f"$.contents[{i}]")
            history[-1] = Message(role=role, raw=raw, blocks=_blocks(content, field, i))
            continue
        run = []
        history.append(Message(role=role, raw=span.raw, blocks=blocks))
    return history


def _blocks(content: Any, field: str, i: int) -> tuple[Any, ...]:
    return parts.content_blocks(content, field=field, at=f"$.contents[{i}]")[1]


def _apply_thinking(thinking: dict[str, Any], params: Params, *, at: str) -> None:
    budget = _get(thinking, "thinkingBudget", int, field="request", at=at)
    level = _get(thinking, "thinkingLevel", str, field="request", at=at)
    if level is not None:
        params.thinking = "enabled"
        params.effort = level.lower()
    if budget is not None:
        # -1: the model decides how much; 0: thinking off.
        params.thinking = "dynamic" if budget < 0 else "disabled" if budget == 0 else "enabled"
        params.budget_tokens = budget if budget > 0 else None


# --- what a response and every chunk carry ---------------------------------------------------


class _Answer:
    """What the response (or the stream so far) says besides its messages."""

    def __init__(self, field: str) -> None:
        self.field = field
        self.params = Params()
        self.ended = False

    def fields(self, body: dict[str, Any], at: str) -> None:
        field, out = self.field, self.params
        model = _get(body, "modelVersion", str, field=field, at=at)
        if model is not None:
            out.response_model = model
        response_id = _get(body, "responseId", str, field=field, at=at)
        if response_id is not None:
            out.response_id = response_id
        usage = _get(body, "usageMetadata", dict, field=field, at=at)
        if usage is not None:
            self._usage(usage, f"{at}.usageMetadata")
        feedback = _get(body, "promptFeedback", dict, field=field, at=at)
        if feedback is not None:
            reason = _get(feedback, "blockReason", str, field=field, at=f"{at}.promptFeedback")
            if reason is not None:
                out.stop_reason = reason
                out.refusal = True
                self.ended = True

    def finish(self, reason: str) -> None:
        out = self.params
        out.stop_reason = reason
        kind = PROFILE.finish(reason)
        out.refusal = kind is Finish.REFUSED
        out.truncated = out.truncated or kind is Finish.TRUNCATED
        self.ended = True

    def _usage(self, usage: dict[str, Any], at: str) -> None:
        field, counts = self.field, self.params.usage

        def count(key: str) -> int | None:
            value: int | None = _get(usage, key, int, field=field, at=at)
            return value

        prompt, tool = count("promptTokenCount"), count("toolUsePromptTokenCount")
        cached = count("cachedContentTokenCount")
        answer, thoughts = count("candidatesTokenCount"), count("thoughtsTokenCount")
        if prompt is not None or tool is not None:
            counts.input_tokens = (prompt or 0) + (tool or 0)
        if cached is not None:
            counts.cache_read_tokens = cached
        if answer is not None or thoughts is not None:
            counts.output_tokens = (answer or 0) + (thoughts or 0)
        if thoughts is not None:
            counts.reasoning_tokens = thoughts

    def error(self, body: dict[str, Any]) -> None:
        error = body.get("error")
        status = None
        if isinstance(error, dict):
            status = opt_str(error.get("status")) or opt_str(error.get("code"))
        self.params.stream_error = status or "error"
        self.params.truncated = True
        self.ended = True


def _candidate_content(
    members: dict[str, Span], answer: _Answer, at: str
) -> tuple[str, Any] | None:
    """The first candidate's content (its exact text and value), its finish reason applied;
    None when the body carries no content."""
    field = answer.field
    span = members.get("candidates")
    if span is None or span.value is None:
        return None
    expect(span.value, list, field=field, at=f"{at}.candidates")
    elements = element_spans(span, field=field, at=f"{at}.candidates")
    if not elements:
        return None
    first = next(
        (e for e in elements if isinstance(e.value, dict) and e.value.get("index", 0) == 0),
        elements[0],
    )
    where = f"{at}.candidates[{elements.index(first)}]"
    candidate = expect(first.value, dict, field=field, at=where)
    reason = _get(candidate, "finishReason", str, field=field, at=where)
    if reason is not None:
        answer.finish(reason)
    if candidate.get("content") is None:
        return None
    expect(candidate["content"], dict, field=field, at=f"{where}.content")
    content = object_member_spans(first.raw, field=field)["content"]
    return content.raw, content.value


def _message(raw: str, value: Any, *, field: str, at: str) -> Message:
    role, blocks = parts.content_blocks(value, field=field, at=at)
    return Message(role=role if "role" in value else "model", raw=raw, blocks=blocks)


def _members(text: str, *, field: str, at: str) -> dict[str, Span]:
    try:
        return object_member_spans(text, field=field)
    except FormatError as exc:
        raise FormatError(exc.detail, field=field, at=at, code=exc.code) from None


def _parse_response(response: str, params: Params) -> list[Message]:
    field = "response"
    members = body_members(response, field=field)
    if "error" in members:
        raise FormatError(
            "the response is the provider's error, not an answer",
            field=field,
            at="$.error",
            code="provider_error",
        )
    answer = _Answer(field)
    answer.fields({k: s.value for k, s in members.items()}, "$")
    found = _candidate_content(members, answer, "$")
    take_answer(params, answer.params)
    if found is None:
        return []
    raw, value = found
    return [_message(raw, value, field=field, at="$.candidates[0].content")]


def _parse_stream(stream: str, params: Params, *, cancelled: bool) -> list[Message]:
    field = "stream"
    answer = _Answer(field)
    turn = Turn()
    count = 0
    for chunk in chunks(stream, cancelled=cancelled):
        count = chunk.index + 1
        members = _members(chunk.raw, field=field, at=chunk.at)
        if "error" in members:
            answer.error({"error": members["error"].value})
            break
        answer.fields({k: s.value for k, s in members.items()}, chunk.at)
        found = _candidate_content(members, answer, chunk.at)
        if found is not None:
            _, value = found
            # Read now, so a bad part is refused at the chunk it came in.
            parts.content_blocks(value, field=field, at=f"{chunk.at}.candidates[0].content")
            turn.add(value)
    if not answer.ended and not cancelled:
        raise FormatError(
            f"the stream ended after {count} chunks without a finishReason",
            field=field,
            at=f"$[{count}]",
            code="truncated_stream",
        )
    take_answer(params, answer.params)
    if not turn.seen:
        return []
    content = turn.content()
    raw = compact_checked(content, field=field, at="$", unicode_code="bad_unicode")
    return [_message(raw, content, field=field, at="$")]


# --- the format ------------------------------------------------------------------------------


class GoogleGenerateContent(Format):
    name = FORMAT

    def read(
        self,
        *,
        request: str,
        response: str | None,
        stream: str | None,
        endpoint: Endpoint | None = None,
        cancelled: bool = False,
    ) -> ParsedExchange:
        params = Params()
        # The answer first: an error of its own is named before the request's.
        if response is not None and is_array(response):
            # streamGenerateContent without alt=sse answers one JSON array: a stream.
            output = _parse_stream(response, params, cancelled=False)
        elif response is not None:
            output = _parse_response(response, params)
        else:
            assert stream is not None
            output = _parse_stream(stream, params, cancelled=cancelled)
        history = _parse_request(request, params)
        return ParsedExchange(history=history, output=output, params=params)

    def message_blocks(self, raw: str) -> tuple[Any, ...]:
        """The blocks of one stored ``Content``."""
        return parts.content_blocks(json.loads(raw), field="response", at="$")[1]

    def reasoning(self, message: Any) -> Iterator[Trace]:
        """Thought parts (``thought: true``: Gemini's thought summaries); a content whose parts
        carry signatures and no thought text is "redacted by provider" (the signatures are
        encrypted, never read)."""
        texts, signed = [], False
        for part in parts.parts_of(message):
            signed = signed or parts.signature_of(part) is not None
            text = part.get("text")
            if part.get("thought") is True and isinstance(text, str) and text:
                texts.append(text)
        for text in texts:
            yield Trace(TraceKind.SUMMARY, text)
        if signed and not texts:
            yield Trace(TraceKind.SUMMARY, withheld=Withheld.REDACTED)

    def match_form(self, value: Any) -> Any:
        """Member names in camelCase, signatures as their bytes (``parts.match_form``)."""
        return parts.match_form(value)


__all__ = ["Chunk", "GoogleGenerateContent"]
