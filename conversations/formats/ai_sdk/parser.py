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
  ``JSON.stringify`` drops it. ``_UNDEF`` plays ``undefined`` here and is dropped at
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
AUDIT or VISIBLE needs fields, a branch in ``_part_block``. A new chunk type is a method of
``_Accumulator`` (with its field checks) and a line in ``_HANDLERS``; follow what
``processUIMessageStream`` does for it.

One piece: the readers of the request and the response and the stream accumulator (which
follows ``processUIMessageStream`` step by step, partial tool input included) share the part
readers and must agree on every part shape; the module is the format, reviewed against the
SDK's source as one file.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...blocks import Block, BlockClass, Message, Params, ParsedExchange, Usage, classify
from ..base import (
    FormatError,
    NotFinite,
    compact,
    element_spans,
    finite_float,
    join_pieces,
    loads,
    maybe_not_finite,
    object_member_spans,
    opt_int,
    strict_loads,
)
from ..live import inline_traces, split_inline
from ..profile import Endpoint, Finish
from ..registry import Format
from ..sse import iter_events
from ..traces import Trace, TraceKind, Withheld
from .profile import FORMAT, INLINE, PROFILE

_ROLES = ("system", "user", "assistant")
_JSON_WS = " \t\n\r"
# Keys of providerMetadata entries that mean "the deliberation is withheld, only this token is
# kept" (Anthropic signature / redactedData, Google thoughtSignature, OpenAI encrypted content).
_WITHHELD_MARKERS = ("signature", "redact", "encrypted")


class _Undefined:
    """JavaScript's ``undefined``: a key holding it exists (keeps its place) but is not
    serialised."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"


_UNDEF: Any = _Undefined()


def _nullish(value: Any) -> bool:
    return value is None or value is _UNDEF


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )


def _want(value: Any, kind: type, what: str, *, fld: str, at: str) -> Any:
    if kind is bool:
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, kind) and not isinstance(value, bool)
    if not ok:
        raise FormatError(
            f"expected {what}, got {_json_type(value)}", field=fld, at=at, code="wrong_type"
        )
    return value


def _required(obj: dict[str, Any], key: str, kind: type, what: str, *, fld: str, at: str) -> Any:
    if key not in obj:
        raise FormatError(f"missing {key!r} ({what})", field=fld, at=f"{at}.{key}", code="missing")
    return _want(obj[key], kind, what, fld=fld, at=f"{at}.{key}")


def _optional(obj: dict[str, Any], key: str, kind: type, what: str, *, fld: str, at: str) -> Any:
    """The value, or ``_UNDEF`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return _UNDEF
    return _want(value, kind, what, fld=fld, at=f"{at}.{key}")


# ---------------------------------------------------------------------------------------------
# Parts -> Blocks


def _withheld(part: dict[str, Any]) -> bool:
    if part.get("text") != "":
        return False
    meta = part.get("providerMetadata")
    if not isinstance(meta, dict):
        return False
    for entry in meta.values():
        if not isinstance(entry, dict):
            continue
        for key, value in entry.items():
            if value not in (None, "", {}, []) and any(m in key.lower() for m in _WITHHELD_MARKERS):
                return True
    return False


def _part_block(
    part: Any, *, fld: str, at: str, streamed_input: str | None = None
) -> Block | tuple[Block, ...] | None:
    part = _want(part, dict, "a part object", fld=fld, at=at)
    ptype = _required(part, "type", str, "the part type, a string", fld=fld, at=at)
    if ptype == "step-start":
        return None  # structural: a step boundary (see the module docstring)
    cls = classify(FORMAT, ptype)
    if cls is BlockClass.VISIBLE:
        text = _required(part, "text", str, "the text, a string", fld=fld, at=at)
        span, visible = split_inline(text, INLINE)
        if span is not None:  # <think>...</think> at the start (the profile's INLINE)
            think = Block(type=INLINE.never_type, cls=BlockClass.NEVER)
            return (think, Block(type=ptype, cls=cls, text=visible)) if visible else (think,)
        return Block(type=ptype, cls=cls, text=text)
    if cls is BlockClass.NEVER:
        _required(part, "text", str, "the reasoning text, a string", fld=fld, at=at)
        return Block(type=ptype, cls=cls, redacted=_withheld(part))
    if cls is BlockClass.AUDIT:
        if ptype == "dynamic-tool":
            name = _required(part, "toolName", str, "the tool name, a string", fld=fld, at=at)
        else:
            name = ptype[len("tool-") :]
        call_id = _required(part, "toolCallId", str, "the tool call id, a string", fld=fld, at=at)
        state = _required(part, "state", str, "the tool state, a string", fld=fld, at=at)
        if streamed_input is not None:
            tool_input: Any = streamed_input  # cut off mid-stream: the raw text received
        else:
            tool_input = part["input"] if "input" in part else part.get("rawInput")
        output = part.get("output")
        if state == "output-error" and output is None:
            output = part.get("errorText")
        return Block(
            type=ptype,
            cls=cls,
            tool_name=name,
            call_id=call_id,
            input=tool_input,
            output=output,
            is_error=state == "output-error",
            status=state,
        )
    return Block(type=ptype, cls=BlockClass.UNKNOWN)


def _message_blocks(
    msg: dict[str, Any], *, fld: str, at: str, streamed: dict[int, str] | None = None
) -> tuple[Block, ...]:
    parts = _required(msg, "parts", list, "the parts, an array", fld=fld, at=at)
    blocks: list[Block] = []
    for j, part in enumerate(parts):
        block = _part_block(
            part,
            fld=fld,
            at=f"{at}.parts[{j}]",
            streamed_input=streamed.get(j) if streamed else None,
        )
        if isinstance(block, tuple):
            blocks.extend(block)
        elif block is not None:
            blocks.append(block)
    return tuple(blocks)


def _check_message(msg: Any, *, fld: str, at: str) -> tuple[dict[str, Any], str]:
    msg = _want(msg, dict, "a UIMessage object", fld=fld, at=at)
    if "id" in msg:
        _want(msg["id"], str, "the message id, a string", fld=fld, at=f"{at}.id")
    role = _required(msg, "role", str, "the role, a string", fld=fld, at=at)
    if role not in _ROLES:
        raise FormatError(
            f"expected role system, user or assistant, got {role!r}",
            field=fld,
            at=f"{at}.role",
            code="invalid_role",
        )
    return msg, role


# ---------------------------------------------------------------------------------------------
# Params


def _usage(metadata: Any) -> Usage:
    """An AI SDK LanguageModelUsage the backend put in the message metadata (v5 flat fields, v6
    ``inputTokenDetails``/``outputTokenDetails``). Nothing is inferred when it is absent."""
    usage = Usage()
    if not isinstance(metadata, dict):
        return usage
    found = metadata.get("totalUsage", metadata.get("usage"))
    if not isinstance(found, dict):
        return usage
    in_details = found.get("inputTokenDetails")
    in_details = in_details if isinstance(in_details, dict) else {}
    out_details = found.get("outputTokenDetails")
    out_details = out_details if isinstance(out_details, dict) else {}
    usage.input_tokens = opt_int(found.get("inputTokens"))
    usage.output_tokens = opt_int(found.get("outputTokens"))
    cache_read = opt_int(in_details.get("cacheReadTokens"))
    usage.cache_read_tokens = (
        cache_read if cache_read is not None else opt_int(found.get("cachedInputTokens"))
    )
    usage.cache_write_tokens = opt_int(in_details.get("cacheWriteTokens"))
    reasoning = opt_int(out_details.get("reasoningTokens"))
    usage.reasoning_tokens = (
        reasoning if reasoning is not None else opt_int(found.get("reasoningTokens"))
    )
    return usage


def _tool_call_ids(msg: dict[str, Any] | None) -> set[str]:
    if msg is None:
        return set()
    return {
        p["toolCallId"]
        for p in msg.get("parts", ())
        if isinstance(p, dict) and _is_tool(p) and isinstance(p.get("toolCallId"), str)
    }


def _server_tool_counts(msg: dict[str, Any], before: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in msg["parts"]:
        if _is_tool(p) and p.get("providerExecuted") is True and p.get("toolCallId") not in before:
            name = p.get("toolName") if p["type"] == "dynamic-tool" else p["type"][5:]
            if isinstance(name, str):
                counts[name] = counts.get(name, 0) + 1
    return counts


def _is_tool(part: dict[str, Any]) -> bool:
    ptype = part.get("type")
    return isinstance(ptype, str) and (ptype.startswith("tool-") or ptype == "dynamic-tool")


# ---------------------------------------------------------------------------------------------
# fix-json / parse-partial-json, ported from vercel/ai packages/ai/src/util/fix-json.ts


def _fix_json(text: str) -> str:
    stack = ["ROOT"]
    last_valid = -1
    literal_start = 0
    unicode_digits = 0

    def value_start(ch: str, i: int, swap: str) -> None:
        nonlocal last_valid, literal_start
        if ch == '"':
            last_valid = i
            stack.pop()
            stack.append(swap)
            stack.append("STRING")
        elif ch in "ftn":
            last_valid = i
            literal_start = i
            stack.pop()
            stack.append(swap)
            stack.append("LITERAL")
        elif ch == "-":
            stack.pop()
            stack.append(swap)
            stack.append("NUMBER")
        elif ch in "0123456789":
            last_valid = i
            stack.pop()
            stack.append(swap)
            stack.append("NUMBER")
        elif ch == "{":
            last_valid = i
            stack.pop()
            stack.append(swap)
            stack.append("OBJECT_START")
        elif ch == "[":
            last_valid = i
            stack.pop()
            stack.append(swap)
            stack.append("ARRAY_START")

    def after_object_value(ch: str, i: int) -> None:
        nonlocal last_valid
        if ch == ",":
            stack.pop()
            stack.append("OBJECT_AFTER_COMMA")
        elif ch == "}":
            last_valid = i
            stack.pop()

    def after_array_value(ch: str, i: int) -> None:
        nonlocal last_valid
        if ch == ",":
            stack.pop()
            stack.append("ARRAY_AFTER_COMMA")
        elif ch == "]":
            last_valid = i
            stack.pop()

    for i, ch in enumerate(text):
        state = stack[-1]
        if state == "ROOT":
            value_start(ch, i, "FINISH")
        elif state == "OBJECT_START":
            if ch == '"':
                stack.pop()
                stack.append("OBJECT_KEY")
            elif ch == "}":
                last_valid = i
                stack.pop()
        elif state == "OBJECT_AFTER_COMMA":
            if ch == '"':
                stack.pop()
                stack.append("OBJECT_KEY")
        elif state == "OBJECT_KEY":
            if ch == '"':
                stack.pop()
                stack.append("OBJECT_AFTER_KEY")
        elif state == "OBJECT_AFTER_KEY":
            if ch == ":":
                stack.pop()
                stack.append("OBJECT_BEFORE_VALUE")
        elif state == "OBJECT_BEFORE_VALUE":
            value_start(ch, i, "OBJECT_AFTER_VALUE")
        elif state == "OBJECT_AFTER_VALUE":
            after_object_value(ch, i)
        elif state == "STRING":
            if ch == '"':
                stack.pop()
                last_valid = i
            elif ch == "\\":
                stack.append("STRING_ESCAPE")
            else:
                last_valid = i
        elif state == "ARRAY_START":
            if ch == "]":
                last_valid = i
                stack.pop()
            else:
                last_valid = i
                value_start(ch, i, "ARRAY_AFTER_VALUE")
        elif state == "ARRAY_AFTER_VALUE":
            if ch == ",":
                stack.pop()
                stack.append("ARRAY_AFTER_COMMA")
            elif ch == "]":
                last_valid = i
                stack.pop()
            else:
                last_valid = i
        elif state == "ARRAY_AFTER_COMMA":
            value_start(ch, i, "ARRAY_AFTER_VALUE")
        elif state == "STRING_ESCAPE":
            stack.pop()
            if ch == "u":
                unicode_digits = 0
                stack.append("STRING_UNICODE_ESCAPE")
            else:
                last_valid = i
        elif state == "STRING_UNICODE_ESCAPE":
            if ch in "0123456789abcdefABCDEF":
                unicode_digits += 1
                if unicode_digits == 4:
                    stack.pop()
                    last_valid = i
        elif state == "NUMBER":
            if ch in "0123456789":
                last_valid = i
            elif ch in "eE-.":
                pass
            elif ch == ",":
                stack.pop()
                if stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
                if stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
            elif ch == "}":
                stack.pop()
                if stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
            elif ch == "]":
                stack.pop()
                if stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
            else:
                stack.pop()
        elif state == "LITERAL":
            partial = text[literal_start : i + 1]
            if not any(lit.startswith(partial) for lit in ("false", "true", "null")):
                stack.pop()
                if stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
                elif stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
            else:
                last_valid = i

    out = [text[: last_valid + 1]]
    for state in reversed(stack):
        if state == "STRING":
            out.append('"')
        elif state.startswith("OBJECT_"):
            out.append("}")
        elif state.startswith("ARRAY_"):
            out.append("]")
        elif state == "LITERAL":
            partial = text[literal_start:]
            for lit in ("true", "false", "null"):
                if lit.startswith(partial):
                    out.append(lit[len(partial) :])
                    break
    return "".join(out)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JavaScript's JSON.parse refuses NaN and Infinity


def _js_loads(text: str) -> Any:
    """``JSON.parse``: NaN and Infinity are not JSON (ValueError). A number beyond a double's
    range (``1e400``) is JSON to JavaScript, which reads it as Infinity and writes it back as
    ``null``; this code refuses it instead (``NotFinite``): a stored message never holds a
    number other than the one received."""
    return json.loads(text, parse_constant=_no_constants, parse_float=finite_float)


def _parse_partial_json(text: str) -> Any:
    """``parsePartialJson(text).value``: the JSON, else the repaired JSON, else undefined."""
    for candidate in (text, _fix_json(text)):
        try:
            return _js_loads(candidate)
        except NotFinite:
            raise
        except ValueError:
            continue
    return _UNDEF


# ---------------------------------------------------------------------------------------------
# Stream accumulation


@dataclass
class _PartialCall:
    """``state.partialToolCalls[toolCallId]``: a tool input still streaming."""

    tool_name: Any  # a string, but a continued message's part may hold anything
    dynamic: bool
    title: Any
    input_encoding: Any
    tool_metadata: Any
    deltas: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _PartialInput:
    """The first ``count`` deltas of a streaming tool input, evaluated once at the end (the SDK
    re-evaluates on every delta; only the last value set on a part can be observed): as text
    (``rawInput``, or the input of an ``inputEncoding: "text"`` tool) or through
    ``parsePartialJson``. ``at`` is the chunk that set it, for an input JSON cannot hold."""

    deltas: list[str]
    count: int
    as_text: bool
    at: str

    def value(self) -> Any:
        text = join_pieces(self.deltas[: self.count])
        if self.as_text:
            return text
        try:
            return _parse_partial_json(text)
        except NotFinite as exc:
            raise FormatError(
                f"the tool input streamed up to this chunk holds {exc}; stored JSON cannot hold it",
                field="stream",
                at=self.at,
                code="not_json",
            ) from None


def _merge_objects(base: Any, overrides: Any) -> Any:
    """``mergeObjects`` (vercel/ai packages/ai/src/util/merge-objects.ts)."""
    if not (isinstance(base, dict) and isinstance(overrides, dict)):
        return overrides  # see "Deviation" in the module docstring
    result = dict(base)
    for key, value in overrides.items():
        if key in ("__proto__", "constructor", "prototype"):
            continue
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            result[key] = _merge_objects(base[key], value)
        else:
            result[key] = value
    return result


class _Stop(Exception):
    """The browser stops reading here (an ``error`` chunk or ``[DONE]``)."""


def _get(chunk: dict[str, Any], key: str) -> Any:
    """``chunk.<key>``: the value, ``None`` for a JSON null, ``_UNDEF`` when absent."""
    return chunk.get(key, _UNDEF)


class _ById:
    """Part positions by tool call id, in the order the parts were pushed (they only ever are),
    so the SDK's ``getCurrentStepParts().find(...)`` and its backward search of the whole message
    cost a lookup instead of a scan."""

    def __init__(self) -> None:
        self.positions: dict[str, list[int]] = {}

    def add(self, call_id: str, position: int) -> None:
        self.positions.setdefault(call_id, []).append(position)

    def first_after(self, call_id: str, start: int) -> int | None:
        found = self.positions.get(call_id)
        if not found:
            return None
        i = bisect.bisect_right(found, start)
        return found[i] if i < len(found) else None

    def last(self, call_id: str) -> int | None:
        found = self.positions.get(call_id)
        return found[-1] if found else None


_OUTPUT_STATES = frozenset({"output-available", "output-error"})


class _Accumulator:
    """``createStreamingUIMessageState`` + ``processUIMessageStream`` of ai 6.0 (see
    docs/formats.md for the exact version), as ``useChat`` runs them: chunk by chunk, the same
    keys set in the same order, JavaScript's ``undefined`` played by ``_UNDEF``."""

    def __init__(self, base: dict[str, Any] | None) -> None:
        if base is None:
            base = {"id": _UNDEF, "metadata": _UNDEF, "role": "assistant", "parts": []}
        self.message = base
        self.parts: list[dict[str, Any]] = base["parts"]
        self.active_text: dict[str, dict[str, Any]] = {}
        self.active_reasoning: dict[str, dict[str, Any]] = {}
        self.text_deltas: dict[int, tuple[dict[str, Any], list[str]]] = {}
        self.partial_calls: dict[str, _PartialCall] = {}
        self.finish_reason: str | None = None
        self.finished = False
        self.done = False
        self.stream_error: str | None = None
        self.unknown: set[str] = set()  # chunk types this code does not know (ignored)
        self.static = _ById()  # tool-<name> parts
        self.dynamic = _ById()  # dynamic-tool parts
        self.tools = _ById()  # both
        self.data_by_key: dict[tuple[str, str], dict[str, Any]] = {}
        self.step_start = -1  # position of the last step-start part
        self.unwritten_steps = 0  # step-start parts pushed since the SDK last wrote the message
        self.written = False  # whether any chunk wrote the message out
        for position, part in enumerate(self.parts):
            self._index(part, position)
        self._resume_partial_calls()
        self.i = 0

    # -- bookkeeping

    def _index(self, part: Any, position: int) -> None:
        ptype = part.get("type") if isinstance(part, dict) else None
        if not isinstance(ptype, str):
            return
        if ptype == "step-start":
            self.step_start = position
        call_id = part.get("toolCallId")
        if isinstance(call_id, str):
            if ptype.startswith("tool-"):
                self.static.add(call_id, position)
                self.tools.add(call_id, position)
            elif ptype == "dynamic-tool":
                self.dynamic.add(call_id, position)
                self.tools.add(call_id, position)
        pid = part.get("id")
        if ptype.startswith("data-") and isinstance(pid, str):
            self.data_by_key.setdefault((ptype, pid), part)

    def _resume_partial_calls(self) -> None:
        """A continued message's tool inputs still streaming in its last step take more deltas
        (``createStreamingUIMessageState``)."""
        for part in self.parts[self.step_start + 1 :]:
            if not (isinstance(part, dict) and _is_tool(part)):
                continue
            call_id = part.get("toolCallId")
            if part.get("state") != "input-streaming" or not isinstance(call_id, str):
                continue
            raw = part.get("rawInput")
            dynamic = part["type"] == "dynamic-tool"
            self.partial_calls[call_id] = _PartialCall(
                tool_name=part.get("toolName") if dynamic else part["type"][5:],
                dynamic=dynamic,
                title=part.get("title", _UNDEF),
                input_encoding=part.get("inputEncoding", _UNDEF),
                tool_metadata=part.get("toolMetadata", _UNDEF),
                deltas=[raw if isinstance(raw, str) else ""],
            )

    def _push(self, part: dict[str, Any]) -> None:
        self.parts.append(part)
        self._index(part, len(self.parts) - 1)

    def _at(self, key: str | None = None) -> str:
        return f"$[{self.i}]" if key is None else f"$[{self.i}].{key}"

    def _req(self, chunk: dict[str, Any], key: str, kind: type, what: str) -> Any:
        return _required(chunk, key, kind, what, fld="stream", at=self._at())

    def _opt(self, chunk: dict[str, Any], key: str, kind: type, what: str) -> Any:
        """The value; ``_UNDEF`` when absent, ``None`` for a JSON null (as a JS chunk has it)."""
        if chunk.get(key) is None:
            return chunk.get(key, _UNDEF)
        return _want(chunk[key], kind, what, fld="stream", at=self._at(key))

    def _id(self, chunk: dict[str, Any]) -> str:
        return self._req(chunk, "id", str, "the part id, a string")

    def _call_id(self, chunk: dict[str, Any]) -> str:
        return self._req(chunk, "toolCallId", str, "the tool call id, a string")

    def _unknown_id(self, kind: str, key: str, value: str, started_by: str) -> FormatError:
        return FormatError(
            f"event {self.i}: {kind} for {key} {value!r}, which no {started_by} chunk opened "
            f"(or which was already closed)",
            field="stream",
            at=self._at(key),
            code="unknown_id",
        )

    def _in_step(self, table: _ById, call_id: str) -> dict[str, Any] | None:
        """``getCurrentStepParts().find(...)`` over the parts of ``table``."""
        position = table.first_after(call_id, self.step_start)
        return None if position is None else self.parts[position]

    def _tool_invocation(self, call_id: str) -> dict[str, Any]:
        """``getToolInvocation``: in the current step, else the last in the whole message."""
        part = self._in_step(self.tools, call_id)
        if part is None:
            position = self.tools.last(call_id)
            if position is None:
                raise self._unknown_id("tool update", "toolCallId", call_id, "tool-input")
            part = self.parts[position]
        return part

    # -- the SDK's updateToolPart / updateDynamicToolPart

    def _update(
        self,
        dynamic: bool,
        *,
        tool_name: Any,
        call_id: str,
        state: str,
        input: Any = _UNDEF,
        output: Any = _UNDEF,
        raw_input: Any = _UNDEF,
        error_text: Any = _UNDEF,
        input_encoding: Any = _UNDEF,
        provider_executed: Any = _UNDEF,
        preliminary: Any = _UNDEF,
        provider_metadata: Any = _UNDEF,
        title: Any = _UNDEF,
        tool_metadata: Any = _UNDEF,
        existing: dict[str, Any] | None = None,
    ) -> None:
        part = existing or self._in_step(self.dynamic if dynamic else self.static, call_id)
        metadata_key = (
            "resultProviderMetadata" if state in _OUTPUT_STATES else "callProviderMetadata"
        )
        if part is not None:
            part["state"] = state
            if dynamic:
                part["toolName"] = tool_name
            else:
                part["type"] = f"tool-{tool_name}"
            part["input"] = input
            part["output"] = output
            part["errorText"] = error_text
            part["rawInput"] = raw_input
            if not _nullish(input_encoding):
                part["inputEncoding"] = input_encoding
            else:
                part.pop("inputEncoding", None)
            part["preliminary"] = preliminary
            if title is not _UNDEF:
                part["title"] = title
            if tool_metadata is not _UNDEF:
                part["toolMetadata"] = tool_metadata
            if _nullish(provider_executed):
                provider_executed = part.get("providerExecuted", _UNDEF)
            part["providerExecuted"] = provider_executed
            if not _nullish(provider_metadata):
                part[metadata_key] = provider_metadata
            return
        new: dict[str, Any]
        if dynamic:
            new = {
                "type": "dynamic-tool",
                "toolName": tool_name,
                "toolCallId": call_id,
                "state": state,
                "input": input,
            }
            if not _nullish(input_encoding):
                new["inputEncoding"] = input_encoding
            new.update(output=output, errorText=error_text, preliminary=preliminary)
            new.update(providerExecuted=provider_executed, title=title)
            if tool_metadata is not _UNDEF:
                new["toolMetadata"] = tool_metadata
        else:
            new = {"type": f"tool-{tool_name}", "toolCallId": call_id, "state": state}
            new["title"] = title
            if tool_metadata is not _UNDEF:
                new["toolMetadata"] = tool_metadata
            new["input"] = input
            if not _nullish(input_encoding):
                new["inputEncoding"] = input_encoding
            new.update(output=output, rawInput=raw_input, errorText=error_text)
            new.update(providerExecuted=provider_executed, preliminary=preliminary)
        if not _nullish(provider_metadata):
            new[metadata_key] = provider_metadata
        self._push(new)

    def _update_metadata(self, metadata: Any) -> None:
        if _nullish(metadata):
            return
        current = self.message.get("metadata", _UNDEF)
        self.message["metadata"] = (
            metadata if _nullish(current) else _merge_objects(current, metadata)
        )

    # -- chunks

    def feed(self, index: int, chunk: Any) -> None:
        self.i = index
        chunk = _want(chunk, dict, "a UI message chunk object", fld="stream", at=self._at())
        ctype = self._req(chunk, "type", str, "the chunk type, a string")
        handler = _HANDLERS.get(ctype)
        if handler is not None:
            handler(self, chunk)
        elif ctype.startswith("data-"):
            self._on_data(chunk)
        else:
            # A chunk type this code does not know: ignored, as processUIMessageStream's default
            # branch does; the exchange says so (docs/formats.md: why not refuse it).
            self.unknown.add(ctype)
            return
        if _writes(ctype, chunk):
            self.unwritten_steps = 0
            self.written = True

    def _on_text_start(self, chunk: dict[str, Any]) -> None:
        pid = self._id(chunk)
        part = {"type": "text", "text": "", "providerMetadata": _get(chunk, "providerMetadata")}
        part["state"] = "streaming"
        self._start_block(pid, part, self.active_text)

    def _on_reasoning_start(self, chunk: dict[str, Any]) -> None:
        pid = self._id(chunk)
        part = {"type": "reasoning", "id": pid, "text": ""}
        part.update(providerMetadata=_get(chunk, "providerMetadata"), state="streaming")
        self._start_block(pid, part, self.active_reasoning)

    def _start_block(
        self, pid: str, part: dict[str, Any], active: dict[str, dict[str, Any]]
    ) -> None:
        active[pid] = part
        self.text_deltas[id(part)] = (part, [])
        self._push(part)

    def _on_text_delta(self, chunk: dict[str, Any]) -> None:
        self._delta("text", chunk, self.active_text)

    def _on_reasoning_delta(self, chunk: dict[str, Any]) -> None:
        self._delta("reasoning", chunk, self.active_reasoning)

    def _delta(self, kind: str, chunk: dict[str, Any], active: dict[str, dict[str, Any]]) -> None:
        pid = self._id(chunk)
        delta = self._req(chunk, "delta", str, "the delta, a string")
        part = active.get(pid)
        if part is None:
            raise self._unknown_id(f"{kind}-delta", "id", pid, f"{kind}-start")
        self.text_deltas[id(part)][1].append(delta)
        self._provider_metadata(chunk, part)

    def _on_text_end(self, chunk: dict[str, Any]) -> None:
        self._end("text", chunk, self.active_text)

    def _on_reasoning_end(self, chunk: dict[str, Any]) -> None:
        self._end("reasoning", chunk, self.active_reasoning)

    def _end(self, kind: str, chunk: dict[str, Any], active: dict[str, dict[str, Any]]) -> None:
        pid = self._id(chunk)
        part = active.pop(pid, None)
        if part is None:
            raise self._unknown_id(f"{kind}-end", "id", pid, f"{kind}-start")
        if kind == "text":
            part["state"] = "done"
            self._provider_metadata(chunk, part)
        else:
            self._provider_metadata(chunk, part)
            part["state"] = "done"

    @staticmethod
    def _provider_metadata(chunk: dict[str, Any], part: dict[str, Any]) -> None:
        value = chunk.get("providerMetadata")
        if value is None:
            value = part.get("providerMetadata", _UNDEF)
        part["providerMetadata"] = value

    def _on_file(self, chunk: dict[str, Any]) -> None:
        url = self._req(chunk, "url", str, "the file URL, a string")
        media_type = self._req(chunk, "mediaType", str, "the media type, a string")
        part = {"type": "file", "mediaType": media_type, "url": url}
        if chunk.get("providerMetadata") is not None:
            part["providerMetadata"] = chunk["providerMetadata"]
        self._push(part)

    def _on_source_url(self, chunk: dict[str, Any]) -> None:
        source_id = self._req(chunk, "sourceId", str, "the source id, a string")
        url = self._req(chunk, "url", str, "the source URL, a string")
        title = self._opt(chunk, "title", str, "the title, a string")
        part = {"type": "source-url", "sourceId": source_id, "url": url, "title": title}
        part["providerMetadata"] = _get(chunk, "providerMetadata")
        self._push(part)

    def _on_source_document(self, chunk: dict[str, Any]) -> None:
        source_id = self._req(chunk, "sourceId", str, "the source id, a string")
        media_type = self._req(chunk, "mediaType", str, "the media type, a string")
        title = self._req(chunk, "title", str, "the title, a string")
        filename = self._opt(chunk, "filename", str, "the file name, a string")
        part = {"type": "source-document", "sourceId": source_id, "mediaType": media_type}
        part.update(title=title, filename=filename)
        part["providerMetadata"] = _get(chunk, "providerMetadata")
        self._push(part)

    def _tool_fields(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """The fields a tool chunk passes on unchanged (checked as the chunk schema types them)."""
        return {
            "provider_executed": self._opt(chunk, "providerExecuted", bool, "a boolean"),
            "provider_metadata": _get(chunk, "providerMetadata"),
            "tool_metadata": _get(chunk, "toolMetadata"),
        }

    def _is_dynamic(self, chunk: dict[str, Any]) -> bool:
        return self._opt(chunk, "dynamic", bool, "dynamic, a boolean") is True

    def _on_tool_input_start(self, chunk: dict[str, Any]) -> None:
        call_id = self._call_id(chunk)
        name = self._req(chunk, "toolName", str, "the tool name, a string")
        dynamic = self._is_dynamic(chunk)
        title = self._opt(chunk, "title", str, "the title, a string")
        encoding = self._opt(chunk, "inputEncoding", str, "the input encoding, a string")
        fields = self._tool_fields(chunk)
        self.partial_calls[call_id] = _PartialCall(
            tool_name=name,
            dynamic=dynamic,
            title=title,
            input_encoding=encoding,
            tool_metadata=fields["tool_metadata"],
        )
        self._update(
            dynamic,
            tool_name=name,
            call_id=call_id,
            state="input-streaming",
            input_encoding=encoding,
            title=title,
            **fields,
        )

    def _on_tool_input_delta(self, chunk: dict[str, Any]) -> None:
        call_id = self._call_id(chunk)
        delta = self._req(chunk, "inputTextDelta", str, "the input text delta, a string")
        call = self.partial_calls.get(call_id)
        if call is None:
            raise self._unknown_id("tool-input-delta", "toolCallId", call_id, "tool-input-start")
        call.deltas.append(delta)
        count = len(call.deltas)
        self._update(
            call.dynamic,
            tool_name=call.tool_name,
            call_id=call_id,
            state="input-streaming",
            input_encoding=call.input_encoding,
            input=_PartialInput(call.deltas, count, call.input_encoding == "text", self._at()),
            raw_input=_PartialInput(call.deltas, count, True, self._at()),
            title=call.title,
            tool_metadata=call.tool_metadata,
        )

    def _on_tool_input_available(self, chunk: dict[str, Any]) -> None:
        call_id = self._call_id(chunk)
        name = self._req(chunk, "toolName", str, "the tool name, a string")
        self._update(
            self._is_dynamic(chunk),
            tool_name=name,
            call_id=call_id,
            state="input-available",
            input=_get(chunk, "input"),
            title=self._opt(chunk, "title", str, "the title, a string"),
            **self._tool_fields(chunk),
        )

    def _on_tool_input_error(self, chunk: dict[str, Any]) -> None:
        call_id = self._call_id(chunk)
        name = self._req(chunk, "toolName", str, "the tool name, a string")
        error_text = self._req(chunk, "errorText", str, "the error text, a string")
        existing = self._in_step(self.tools, call_id)
        dynamic = (
            existing["type"] == "dynamic-tool" if existing is not None else self._is_dynamic(chunk)
        )
        fields = self._tool_fields(chunk)
        if dynamic:
            fields["input"] = _get(chunk, "input")
        else:
            fields["raw_input"] = _get(chunk, "input")
        self._update(
            dynamic,
            tool_name=name,
            call_id=call_id,
            state="output-error",
            error_text=error_text,
            **fields,
        )

    def _on_tool_approval_request(self, chunk: dict[str, Any]) -> None:
        call_id = self._call_id(chunk)
        approval: dict[str, Any] = {
            "id": self._req(chunk, "approvalId", str, "the approval id, a string")
        }
        if chunk.get("approvalDescriptor") is not None:
            approval["descriptor"] = chunk["approvalDescriptor"]
        if "inputSchemaInput" in chunk:
            approval["inputSchemaInput"] = chunk["inputSchemaInput"]
        signature = self._opt(chunk, "signature", str, "the signature, a string")
        if not _nullish(signature):
            approval["signature"] = signature
        part = self._tool_invocation(call_id)
        part["state"] = "approval-requested"
        part["approval"] = approval

    def _on_tool_output_denied(self, chunk: dict[str, Any]) -> None:
        self._tool_invocation(self._call_id(chunk))["state"] = "output-denied"

    def _output_update(self, chunk: dict[str, Any], state: str, **fields: Any) -> None:
        call_id = self._call_id(chunk)
        executed = self._opt(chunk, "providerExecuted", bool, "providerExecuted, a boolean")
        part = self._tool_invocation(call_id)
        dynamic = part["type"] == "dynamic-tool"
        tool_metadata = _get(chunk, "toolMetadata")
        if _nullish(tool_metadata):
            tool_metadata = part.get("toolMetadata", _UNDEF)
        self._update(
            dynamic,
            tool_name=part.get("toolName", _UNDEF) if dynamic else part["type"][5:],
            call_id=call_id,
            state=state,
            input=part.get("input", _UNDEF),
            provider_executed=executed,
            provider_metadata=_get(chunk, "providerMetadata"),
            title=part.get("title", _UNDEF),
            tool_metadata=tool_metadata,
            existing=part,
            **fields,
        )

    def _on_tool_output_available(self, chunk: dict[str, Any]) -> None:
        preliminary = self._opt(chunk, "preliminary", bool, "preliminary, a boolean")
        self._output_update(
            chunk, "output-available", output=_get(chunk, "output"), preliminary=preliminary
        )

    def _on_tool_output_error(self, chunk: dict[str, Any]) -> None:
        error_text = self._req(chunk, "errorText", str, "the error text, a string")
        call_id = self._call_id(chunk)
        part = self._tool_invocation(call_id)
        fields: dict[str, Any] = {"error_text": error_text}
        if part["type"] != "dynamic-tool":
            fields["raw_input"] = part.get("rawInput", _UNDEF)
        self._output_update(chunk, "output-error", **fields)

    def _on_start_step(self, chunk: dict[str, Any]) -> None:
        self._push({"type": "step-start"})
        self.unwritten_steps += 1

    def _on_finish_step(self, chunk: dict[str, Any]) -> None:
        self.active_text = {}
        self.active_reasoning = {}

    def _on_start(self, chunk: dict[str, Any]) -> None:
        # useChat's processUIMessageStream does not reset on a new message id (only a resumed
        # stream does; readUIMessageStream always does): the id is set, the message kept.
        message_id = self._opt(chunk, "messageId", str, "the message id, a string")
        if not _nullish(message_id):
            self.message["id"] = message_id
        self._update_metadata(_get(chunk, "messageMetadata"))

    def _on_finish(self, chunk: dict[str, Any]) -> None:
        reason = self._opt(chunk, "finishReason", str, "the finish reason, a string")
        if not _nullish(reason):
            self.finish_reason = reason
        self._update_metadata(_get(chunk, "messageMetadata"))
        self.finished = True

    def _on_message_metadata(self, chunk: dict[str, Any]) -> None:
        self._update_metadata(_get(chunk, "messageMetadata"))

    def _on_error(self, chunk: dict[str, Any]) -> None:
        self.stream_error = "error"
        raise _Stop

    def _on_abort(self, chunk: dict[str, Any]) -> None:
        self.stream_error = self.stream_error or "abort"

    def _on_data(self, chunk: dict[str, Any]) -> None:
        data_id = self._opt(chunk, "id", str, "the data part id, a string")
        if chunk.get("transient") not in (None, False, 0, ""):
            return  # transient data parts are not added to the message (SDK)
        if not _nullish(data_id):
            existing = self.data_by_key.get((chunk["type"], data_id))
            if existing is not None:
                existing["data"] = _get(chunk, "data")
                return
        self._push(chunk)

    # -- the end

    def result(self) -> tuple[dict[str, Any], dict[int, str]]:
        """The message as ``JSON.stringify`` would write it, and the raw text of each tool
        input still streaming (by part index)."""
        for part, deltas in self.text_deltas.values():
            if deltas:
                part["text"] = join_pieces([part["text"], *deltas])
        if self.unwritten_steps and self.written:
            # Step-start parts no later chunk wrote out: processUIMessageStream pushes them
            # without a write, so neither readUIMessageStream nor useChat's messages (what the
            # browser sends back) hold them. (A stream that never wrote at all is kept as it
            # left the state: no browser message exists to follow.)
            del self.parts[-self.unwritten_steps :]
        streamed: dict[int, str] = {}
        parts = []
        for j, part in enumerate(self.parts):
            for key in ("input", "rawInput"):
                value = part.get(key)
                if isinstance(value, _PartialInput):
                    part[key] = value.value()
                    if key == "rawInput" and part.get("state") == "input-streaming":
                        streamed[j] = part[key]
            parts.append({k: v for k, v in part.items() if v is not _UNDEF})
        message = {k: v for k, v in self.message.items() if v is not _UNDEF}
        message["parts"] = parts
        return message, streamed


# Chunks after which processUIMessageStream does not write the message out (so a step-start
# pushed before them stays unwritten); finish, message-metadata and start write only with
# metadata (or, for start, a message id), a data part only when it is not transient.
_SILENT = frozenset({"start-step", "finish-step", "error", "abort"})


def _writes(ctype: str, chunk: dict[str, Any]) -> bool:
    if ctype in _SILENT:
        return False
    if ctype in ("finish", "message-metadata"):
        return chunk.get("messageMetadata") is not None
    if ctype == "start":
        return chunk.get("messageId") is not None or chunk.get("messageMetadata") is not None
    if ctype.startswith("data-"):
        return chunk.get("transient") is not True  # a transient part goes to onData only
    return True


# Chunk type -> handler. A new chunk type is one method above and one line here.
_HANDLERS = {
    "text-start": _Accumulator._on_text_start,
    "text-delta": _Accumulator._on_text_delta,
    "text-end": _Accumulator._on_text_end,
    "reasoning-start": _Accumulator._on_reasoning_start,
    "reasoning-delta": _Accumulator._on_reasoning_delta,
    "reasoning-end": _Accumulator._on_reasoning_end,
    "file": _Accumulator._on_file,
    "source-url": _Accumulator._on_source_url,
    "source-document": _Accumulator._on_source_document,
    "tool-input-start": _Accumulator._on_tool_input_start,
    "tool-input-delta": _Accumulator._on_tool_input_delta,
    "tool-input-available": _Accumulator._on_tool_input_available,
    "tool-input-error": _Accumulator._on_tool_input_error,
    "tool-approval-request": _Accumulator._on_tool_approval_request,
    "tool-output-denied": _Accumulator._on_tool_output_denied,
    "tool-output-available": _Accumulator._on_tool_output_available,
    "tool-output-error": _Accumulator._on_tool_output_error,
    "start-step": _Accumulator._on_start_step,
    "finish-step": _Accumulator._on_finish_step,
    "start": _Accumulator._on_start,
    "finish": _Accumulator._on_finish,
    "message-metadata": _Accumulator._on_message_metadata,
    "error": _Accumulator._on_error,
    "abort": _Accumulator._on_abort,
}


# ---------------------------------------------------------------------------------------------
# The format


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
    and numbers beyond a double (see ``_js_loads``): ``compact()`` would write them back as
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
        params.usage = _usage(value.get("metadata"))
        before = _tool_call_ids(continued[1] if continued is not None else None)
        params.server_tool_counts = _server_tool_counts(value, before)
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
        _want(span.value, list, "messages, an array of UIMessages", fld="request", at="$.messages")
        elements = element_spans(span, field="request", at="$.messages")
        history = []
        last: tuple[str, dict[str, Any]] | None = None
        for i, element in enumerate(elements):
            at = f"$.messages[{i}]"
            msg, role = _check_message(element.value, fld="request", at=at)
            blocks = _message_blocks(msg, fld="request", at=at)
            history.append(Message(role=role, raw=element.raw, blocks=blocks))
            last = (element.raw, msg)
        body = {key: member.value for key, member in members.items()}
        return body, history, last

    def _response(self, text: Any) -> tuple[Message, dict[str, Any]]:
        if not isinstance(text, str):
            raise FormatError("expected the response body as a string", field="response")
        value = loads(text, field="response")
        _refuse_constants(text, fld="response")
        msg, role = _check_message(value, fld="response", at="$")
        if role != "assistant":
            raise FormatError(
                f"expected the assistant message, got role {role!r}",
                field="response",
                at="$.role",
                code="invalid_role",
            )
        blocks = _message_blocks(msg, fld="response", at="$")
        # The response text is the message object: only the whitespace around it is cut.
        return Message(role="assistant", raw=text.strip(_JSON_WS), blocks=blocks), msg

    def _stream(
        self, text: Any, base: dict[str, Any] | None, params: Params, *, cancelled: bool = False
    ) -> tuple[Message, dict[str, Any]]:
        if not isinstance(text, str):
            raise FormatError("expected the stream as a string", field="stream")
        acc = _Accumulator(base)
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
        except _Stop:
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
        blocks = _message_blocks(value, fld="stream", at="$", streamed=streamed)
        return Message(role="assistant", raw=raw, blocks=blocks), value
