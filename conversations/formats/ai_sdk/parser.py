"""The Vercel AI SDK (6.x; v5 streams read the same) UI protocol: what a browser's ``useChat``
and the chat backend exchange. Format name ``ai-sdk.ui``.

Request: the chat request body the browser sent, ``{"id"?, "messages": [UIMessage...],
"trigger"?, "messageId"?, ...extra body fields}``. One history Message per element of
``messages``; ``raw`` is the element's exact source text. ``requested_model`` is the body's
``model`` when the backend's client put one there (the protocol itself has none).

Response: the assistant UIMessage as the backend finally produced it. ``raw`` is the response
text trimmed of the JSON whitespace around it (the text IS the message object, so nothing else
is cut). Its ``role`` must be ``assistant``.

Stream: the UI message stream (SSE, one ``data: {chunk}`` per event, ended by ``data: [DONE]``).
It is accumulated into the UIMessage the browser's ``useChat`` builds: ``processUIMessageStream``
and ``createStreamingUIMessageState`` of the npm package ``ai`` 6.0 (the version in
tests/conversations/formats/differential/node/package-lock.json, which the differential test
runs beside this code; docs/formats.md), with the chunk shapes of its ``uiMessageChunkSchema``
and partial tool input repaired as its ``fixJson`` + ``parsePartialJson`` do. What we follow:

- A new message starts as ``{id, metadata, role: "assistant", parts: []}``; ``start`` sets the
  id. The browser's own random id for a stream whose ``start`` has no ``messageId`` never reaches
  us, so such a message has no ``id`` key (we do not invent one).
- Continuation: when the request's last message is an assistant message (a client tool result
  or a tool approval sent back), ``createStreamingUIMessageState`` continues THAT message: new
  parts are appended to it, tool outputs update its tool parts, and a tool input it left
  streaming in its last step takes more deltas. We do the same, so the output is the whole
  message as the browser holds it afterwards, with the same id, and the exchange says so
  (``output_supersedes_last``): ingest keeps both versions and makes the new one current.
  A JSON response supersedes the last message when it is an assistant message with its id.
- Keys are JavaScript-object keys: a key the SDK sets to ``undefined`` keeps its place but
  ``JSON.stringify`` drops it. ``UNDEF`` plays ``undefined`` here and is dropped at
  serialisation, so the key order of the one ``compact()`` serialisation is the one the SDK's
  object would have (``{type, toolCallId, state, title, toolMetadata?, input, inputEncoding?,
  output, rawInput, errorText, providerExecuted, preliminary, resultProviderMetadata? |
  callProviderMetadata?}`` for a new tool part, ``{type, id, text, providerMetadata, state}`` for
  reasoning, ``{type, text, providerMetadata, state}`` for text...).
- Tool parts are found as the SDK finds them: an update by the stream (``tool-input-*``) looks in
  the current step (the parts after the last ``step-start``); an output, approval or denial looks
  in the current step, then backwards through the whole message. A tool input still streaming
  carries ``rawInput`` (the text so far) and ``input`` (``parsePartialJson`` of it, or the text
  itself for ``inputEncoding: "text"``).
- ``step-start`` is pushed at each ``start-step``; ``finish-step`` forgets the open text and
  reasoning ids, so a delta after it for an older id is an error, as in the SDK.
- A delta, end or tool update for an id that never started is a FormatError at
  ``$[<event index>].id`` (or ``.toolCallId``): the SDK throws there too.
- ``error``: the browser's ``onError`` throws, so it stops reading at that chunk. We keep what
  arrived before it, do not read the rest, and set ``stream_error="error"``, ``truncated``.
- ``abort`` has no case in the SDK (the message keeps what arrived); we record
  ``stream_error="abort"``, ``truncated``.
- ``finish`` (``finishReason``: ``length`` means truncated) or ``[DONE]`` ends the stream;
  chunks after ``[DONE]`` are still read, as the SDK's ``parseJsonEventStream`` skips the
  marker and reads on (an event cut off after it is not). A ``step-start`` that no later chunk
  wrote out (a trailing ``start-step``) is not in the message, as in the browser. A stream
  with neither (and no ``error``/``abort``) was cut off: ``truncated_stream``. A final event
  cut mid-line is used when its data is whole JSON.
- Chunk types this code does not know are read past, as ``processUIMessageStream``'s
  ``default`` branch does, and listed in ``params.unknown_chunks`` (the exchange is flagged).
  The SDK's default transport would fail the stream on them (its chunk schema refuses unknown
  types); docs/formats.md says why the console does not. ``: keep-alive`` comments are SSE
  comments and never reach us.
- Strings streamed in deltas are joined with ``join_pieces`` (a surrogate pair whose halves came
  in two deltas is one character, as in JavaScript); a lone surrogate is refused, where the
  browser would keep it (stored text must be UTF-8). Numbers beyond a double (``1e400``) are
  refused too, where JavaScript would read Infinity and write ``null``.
- Deviations: metadata that is not an object on both sides replaces instead of the SDK's
  object-spread of a non-object, and integer-like keys keep the stream's order where a
  JavaScript object would list them first (JavaScript artefacts, not protocol rules). A
  ``start`` with a new ``messageId`` sets the id and keeps the message, as ``useChat`` does
  (``readUIMessageStream`` starts a new message there).

Blocks: ``text`` VISIBLE; ``reasoning`` NEVER (``redacted`` when its text is empty and its
``providerMetadata`` carries a signature / redacted / encrypted marker: the provider withheld
it); ``tool-<NAME>`` and ``dynamic-tool`` AUDIT (``output`` is ``errorText`` for an
``output-error`` part, ``input`` falls back to ``rawInput``, and a tool input still streaming
when the stream stopped is the raw input text). ``step-start`` gets no Block: it is a step
boundary, structural, with no content to show or hide, and an UNKNOWN block for it would sit on
the admins' "to classify" list forever; its position stays in ``raw``. ``source-url``,
``source-document``, ``file`` and ``data-*`` are UNKNOWN until someone classifies them in
``BLOCK_TYPES`` of ``profile.py`` (fail closed).

Params: usage only where the backend put an AI SDK ``LanguageModelUsage`` under
``metadata.usage`` or ``metadata.totalUsage``; ``response_id`` is the message id; server tool
counts are the new ``providerExecuted`` tool parts.

To extend: a new part type is a line in ``BLOCK_TYPES`` of ``profile.py`` (its class) and, if
AUDIT or VISIBLE needs fields, a branch in ``_part_block`` of ``parts.py``. A new chunk type is a
method of ``Accumulator`` (``accumulator.py``, with its field checks) and a line in its
``HANDLERS``; follow what ``processUIMessageStream`` does for it.

The package's modules: this one reads the three shapes and makes the exchange; ``parts.py`` reads
a part and a message (shared by all three, so they agree on every part shape); ``accumulator.py``
follows ``processUIMessageStream`` step by step; ``js.py`` holds JavaScript's ``undefined``, the
member checks and the SDK's partial-JSON repair.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ...blocks import Block, Message, Params, ParsedExchange
from ..base import (
    FormatError,
    compact,
    element_spans,
    loads,
    maybe_not_finite,
    object_member_spans,
    strict_loads,
)
from ..live import inline_traces
from ..profile import Endpoint, Finish
from ..registry import Format
from ..sse import iter_events
from ..traces import Trace, TraceKind, Withheld
from .accumulator import Accumulator, Stop
from .js import want
from .parts import check_message, message_blocks, message_usage, server_tool_counts, tool_call_ids
from .profile import FORMAT, INLINE, PROFILE

_JSON_WS = " \t\n\r"


def _withheld_kind(meta: Any) -> Withheld:
    """For the review: Anthropic through the AI SDK keeps ``redactedData`` for redacted thinking
    and a ``signature`` for omitted thinking; OpenAI keeps ``reasoningEncryptedContent``."""
    if not isinstance(meta, dict):
        return Withheld.NO
    keys = [
        key.lower()
        for entry in meta.values()
        if isinstance(entry, dict)
        for key, value in entry.items()
        if value not in (None, "", {}, [])
    ]
    if any("redacted" in key for key in keys):
        return Withheld.REDACTED
    if any("signature" in key or "encrypted" in key for key in keys):
        return Withheld.OMITTED
    return Withheld.NO


def _strict_json(text: str, *, fld: str, at: str) -> Any:
    """json.loads refusing NaN and Infinity as JavaScript does (the browser never sends them)
    and numbers beyond a double (see ``js_loads``): ``compact()`` would write them back as
    invalid JSON."""
    try:
        return strict_loads(text)
    except ValueError as exc:
        raise FormatError(f"not valid JSON: {exc}", field=fld, at=at, code="not_json") from None


def _refuse_constants(text: str, *, fld: str) -> None:
    if maybe_not_finite(text):  # cheap: only then parse again, strictly
        _strict_json(text, fld=fld, at="$")


class AiSdkUi(Format):
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
        body, history, last = self._request(request)
        # useChat continues the last message when it is the assistant's (module docstring).
        continued = last if last is not None and last[1]["role"] == "assistant" else None
        params = Params()
        params.request_settings = {k: v for k, v in body.items() if k != "messages"}
        model = body.get("model")
        params.requested_model = model if isinstance(model, str) else None
        if response is not None:
            output, value = self._response(response)
        else:
            assert stream is not None
            base = json.loads(continued[0]) if continued is not None else None
            output, value = self._stream(stream, base, params, cancelled=cancelled)
        message_id = value.get("id")
        params.response_id = message_id if isinstance(message_id, str) else None
        params.usage = message_usage(value.get("metadata"))
        before = tool_call_ids(continued[1] if continued is not None else None)
        params.server_tool_counts = server_tool_counts(value, before)
        supersedes = continued is not None and (
            stream is not None or message_id == continued[1].get("id")
        )
        return ParsedExchange(
            history=history, output=[output], params=params, output_supersedes_last=supersedes
        )

    def message_blocks(self, raw: str) -> tuple[Block, ...]:
        """The blocks of one stored UIMessage."""
        return self._request('{"messages":[' + raw + "]}")[1][0].blocks

    def reasoning(self, message: Any) -> Iterator[Trace]:
        """``reasoning`` parts; an empty one whose ``providerMetadata`` carries a redaction
        marker is "redacted by provider", one carrying only a signature or encrypted content is
        "omitted by provider"."""
        parts = message.get("parts") if isinstance(message, dict) else None
        if not isinstance(parts, list):
            return
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "text":
                yield from inline_traces(part.get("text"), INLINE, TraceKind.REASONING_PART)
            if not isinstance(part, dict) or part.get("type") != "reasoning":
                continue
            text = part.get("text")
            if isinstance(text, str) and text:
                yield Trace(TraceKind.REASONING_PART, text)
                continue
            withheld = _withheld_kind(part.get("providerMetadata"))
            if withheld is not Withheld.NO:
                yield Trace(TraceKind.REASONING_PART, withheld=withheld)

    def _request(
        self, text: str
    ) -> tuple[dict[str, Any], list[Message], tuple[str, dict[str, Any]] | None]:
        members = object_member_spans(text, field="request")
        _refuse_constants(text, fld="request")
        span = members.get("messages")
        if span is None:
            raise FormatError(
                "missing 'messages' (the UIMessage array)",
                field="request",
                at="$.messages",
                code="missing",
            )
        want(span.value, list, "messages, an array of UIMessages", fld="request", at="$.messages")
        elements = element_spans(span, field="request", at="$.messages")
        history = []
        last: tuple[str, dict[str, Any]] | None = None
        for i, element in enumerate(elements):
            at = f"$.messages[{i}]"
            msg, role = check_message(element.value, fld="request", at=at)
            blocks = message_blocks(msg, fld="request", at=at)
            history.append(Message(role=role, raw=element.raw, blocks=blocks))
            last = (element.raw, msg)
        body = {key: member.value for key, member in members.items()}
        return body, history, last

    def _response(self, text: Any) -> tuple[Message, dict[str, Any]]:
        if not isinstance(text, str):
            raise FormatError("expected the response body as a string", field="response")
        value = loads(text, field="response")
        _refuse_constants(text, fld="response")
        msg, role = check_message(value, fld="response", at="$")
        if role != "assistant":
            raise FormatError(
                f"expected the assistant message, got role {role!r}",
                field="response",
                at="$.role",
                code="invalid_role",
            )
        blocks = message_blocks(msg, fld="response", at="$")
        # The response text is the message object: only the whitespace around it is cut.
        return Message(role="assistant", raw=text.strip(_JSON_WS), blocks=blocks), msg

    def _stream(
        self, text: Any, base: dict[str, Any] | None, params: Params, *, cancelled: bool = False
    ) -> tuple[Message, dict[str, Any]]:
        if not isinstance(text, str):
            raise FormatError("expected the stream as a string", field="stream")
        acc = Accumulator(base)
        count = 0
        try:
            for event in iter_events(text):
                count = event.index + 1
                if event.data == "[DONE]":
                    # The end of the stream, but not of reading: parseJsonEventStream skips it
                    # and the browser reads on, so a chunk after it is in the browser's message.
                    acc.done = True
                    continue
                try:
                    chunk = strict_loads(event.data)
                except ValueError as exc:
                    if acc.done or (event.unterminated and cancelled):
                        # after [DONE], a chunk that is not JSON fails the browser's stream
                        # there; or the client stopped reading inside this event
                        break
                    if event.unterminated:
                        raise FormatError(
                            f"the stream ends inside event {event.index}",
                            field="stream",
                            at=f"$[{event.index}]",
                            code="truncated_stream",
                        ) from None
                    raise FormatError(
                        f"event {event.index}: data is not valid JSON: {exc}",
                        field="stream",
                        at=f"$[{event.index}].data",
                        code="not_json",
                    ) from None
                acc.feed(event.index, chunk)
        except Stop:
            pass  # an error chunk: the browser stops reading there
        if acc.stream_error is None and not (acc.finished or acc.done or cancelled):
            raise FormatError(
                f"the stream ends after {count} events without a finish chunk or [DONE]",
                field="stream",
                at=f"$[{count}]",
                code="truncated_stream",
            )
        params.stop_reason = acc.finish_reason
        params.stream_error = acc.stream_error
        params.unknown_chunks = sorted(acc.unknown)
        finish = PROFILE.finish(acc.finish_reason or "")  # the one finish table (profile.py)
        params.truncated = acc.stream_error is not None or finish is Finish.TRUNCATED
        params.refusal = finish is Finish.REFUSED
        value, streamed = acc.result()
        raw = compact(value)
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            raise FormatError(
                "the stream carries a lone surrogate (\\ud800-\\udfff) that UTF-8 cannot hold",
                field="stream",
                code="invalid_unicode",
            ) from None
        blocks = message_blocks(value, fld="stream", at="$", streamed=streamed)
        return Message(role="assistant", raw=raw, blocks=blocks), value
