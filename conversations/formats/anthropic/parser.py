"""Anthropic Messages API (``anthropic.messages``): the request, a JSON response or an SSE stream.

What a parse produces (DESIGN sections 1 and 5):

- history: one Message per element of the request's ``messages``, ``raw`` = the element's exact
  source text. A string ``content`` is one VISIBLE ``text`` block.
- output: one assistant Message. For a JSON response its ``raw`` is
  ``{"role":"assistant","content":`` + the exact source text of the response's ``content`` array
  + ``}`` (nothing re-serialised, so thinking blocks and signatures replay untouched). For a stream,
  the accumulated ``{"role":"assistant","content":[...]}`` is serialised once with ``compact()``,
  every block keeping its keys in the order the stream gave them.
- params: requested model, thinking type and budget, effort, max tokens (request); model snapshot,
  id, stop reason, usage and server tool counts (response or stream).

Streams: ``message_start`` opens the message (a second one mid-stream means the provider spliced a
new generation in, and accumulation starts over from it); ``content_block_start`` opens a block by
index (some blocks arrive whole there: ``redacted_thinking``, ``*_tool_result``); deltas extend the
block their index names (a delta never says its block's type, so the start is the only source of
it); ``message_delta`` carries the stop reason and cumulative usage; ``message_stop`` ends the
stream. A mid-stream ``error`` event keeps what arrived and sets ``stream_error``; a stream that
ends without either is refused with ``truncated_stream``. ``ping`` and unknown events are ignored.

Tool input streamed by ``input_json_delta`` is parsed when its block stops (or when the message
ends, for a block the token limit cut off before its stop). Input that is not valid JSON was cut
off: the accumulated message keeps the input from the block's start event, the Block carries the
partial string, and ``params.truncated`` is set. Input that parses but could not be stored as
JSON again (a lone ``\\ud800`` escape; NaN, or a number such as ``1e400`` beyond a double) is
refused at the block's start event. ``compaction_delta`` gives a ``compaction`` block its
``content`` and ``encrypted_content`` (both replaced, as the SDK's beta accumulator does).

Text pieces are joined with ``join_pieces``: a UTF-16 surrogate pair whose halves came in two
deltas is one character again. Lone surrogates are refused where they would be stored: in the
accumulated message and in the message's id, model and stop reason (elsewhere in an event they
are read past, as the SDKs do).

How to extend:

- a new block type: classify it in ``BLOCK_TYPES`` of ``profile.py``. An AUDIT type
  whose name ends in ``tool_use`` is read as a call (``name``, ``id``, ``input``, and it may receive
  ``input_json_delta``); any other AUDIT type as a result (``tool_use_id``, ``content``,
  ``is_error``). NEVER and unknown types need nothing here: they carry no content.
- a new delta that extends a string field of a block: add a row to ``_STRING_DELTAS``. Delta types
  not listed there (nor ``input_json_delta``/``citations_delta``) are ignored.
- a new stream event: add a method to ``_Stream`` and a row to ``_Stream.HANDLERS``. Events not
  listed are ignored.

One piece: the request reader, the response reader and the stream accumulator read the same
block shapes and must agree on every one of them; the module is the format, reviewed and
extended as one file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...blocks import Block, BlockClass, Message, Params, ParsedExchange, classify
from ..base import (
    FormatError,
    array_element_spans,
    compact,
    compact_checked,
    element_spans,
    expect,
    has_surrogate,
    join_pieces,
    object_member_spans,
    opt_int,
    opt_str,
    optional,
    strict_loads,
    take_answer,
)
from ..profile import Endpoint, Finish
from ..registry import Format
from ..sse import Event, iter_events
from ..traces import Trace, TraceKind, Withheld
from .profile import FORMAT, PROFILE

_ROLES = ("user", "assistant", "system")

# delta type -> (field in the delta, key in the block, block types it may extend, append?).
# Text and thinking grow piece by piece; a signature arrives whole and replaces the start's "".
_STRING_DELTAS: dict[str, tuple[str, str, frozenset[str], bool]] = {
    "text_delta": ("text", "text", frozenset({"text"}), True),
    "thinking_delta": ("thinking", "thinking", frozenset({"thinking"}), True),
    "signature_delta": ("signature", "signature", frozenset({"thinking"}), False),
}
# delta type -> the block keys it sets, each to the delta's value (null when the delta has none):
# the beta SDK's accumulator assigns them whole, a delta being the block's complete state.
_REPLACING_DELTAS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "compaction_delta": (frozenset({"compaction"}), ("content", "encrypted_content")),
}


# --- small typed accessors -------------------------------------------------------------------


def _need(
    obj: dict[str, Any], key: str, kind: type | tuple[type, ...], *, field: str, at: str
) -> Any:
    """``obj[key]``, which must be present and of type ``kind``."""
    if key not in obj:
        raise FormatError(f"missing {key!r}", field=field, at=f"{at}.{key}", code="missing")
    return expect(obj[key], kind, field=field, at=f"{at}.{key}")


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def _check_unicode(text: str, *, field: str) -> None:
    """Refuse text that cannot be stored as UTF-8: a lone surrogate, raw or as a JSON escape.

    ``json.loads`` accepts ``"\\ud800"``; the decoded string then breaks the first UTF-8 encoder
    it meets (the database, a streamed message's ``compact()`` bytes), far from here."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FormatError(
            f"not valid Unicode: a lone surrogate at character {exc.start}",
            field=field,
            code="bad_unicode",
        ) from None
    if "\\ud" not in text and "\\uD" not in text:
        return  # the common case: no surrogate escape at all
    high_end = -1  # where the low half must start, after a high-surrogate escape
    for m in _ESCAPE.finditer(text):
        code = int(m.group(1), 16) if m.group(1) else -1
        if high_end >= 0:
            if m.start() == high_end and 0xDC00 <= code <= 0xDFFF:
                high_end = -1
                continue
            break
        if 0xD800 <= code <= 0xDBFF:
            high_end = m.end()
        elif 0xDC00 <= code <= 0xDFFF:
            high_end = m.start()
            break
    else:
        if high_end < 0:
            return
    raise FormatError(
        f"not valid Unicode: a lone surrogate escape near character {high_end}",
        field=field,
        code="bad_unicode",
    )


def _holds_surrogate(value: Any) -> bool:
    try:
        return has_surrogate(compact(value))
    except RecursionError:
        return False  # the message's own serialisation refuses it (too_deep)


def _stored_str(obj: dict[str, Any], key: str, *, field: str, at: str) -> str | None:
    """A string kept outside the message (id, model, stop reason): a lone surrogate in it is
    refused here, as the message's own strings are (request and response bodies are checked
    whole before parsing; a stream cannot be, see ``AnthropicMessages.parse``)."""
    value: str | None = optional(obj, key, str, field=field, at=at)
    if value is not None and has_surrogate(value):
        raise FormatError(
            "not valid Unicode: a lone surrogate (an unpaired \\ud800-\\udfff escape)",
            field=field,
            at=f"{at}.{key}",
            code="bad_unicode",
        )
    return value


# --- blocks ----------------------------------------------------------------------------------


def _block(value: Any, *, field: str, at: str, cut_input: str | None = None) -> Block:
    """One content block, typed and classified. ``cut_input`` replaces the input of a tool call
    whose streamed JSON was cut off."""
    block = expect(value, dict, field=field, at=at)
    btype: str = _need(block, "type", str, field=field, at=at)
    cls = classify(FORMAT, btype)
    if cls is BlockClass.VISIBLE:
        return Block(btype, cls, text=_need(block, "text", str, field=field, at=at))
    if cls is BlockClass.NEVER:
        return Block(btype, cls, redacted=_withheld(block, btype, field=field, at=at))
    if cls is BlockClass.AUDIT:
        if btype.endswith("tool_use"):  # tool_use, server_tool_use, mcp_tool_use
            return Block(
                btype,
                cls,
                tool_name=_need(block, "name", str, field=field, at=at),
                call_id=_need(block, "id", str, field=field, at=at),
                input=block.get("input") if cut_input is None else cut_input,
            )
        content = block.get("content")
        flag = optional(block, "is_error", bool, field=field, at=at)
        return Block(
            btype,
            cls,
            call_id=_need(block, "tool_use_id", str, field=field, at=at),
            output=content,
            is_error=flag if flag is not None else _is_error_content(content),
        )
    return Block(btype, cls)  # UNKNOWN (image, document, compaction...): no content at all


def _withheld(block: dict[str, Any], btype: str, *, field: str, at: str) -> bool:
    """Whether the provider withheld this deliberation: always for ``redacted_thinking``; for a
    ``thinking`` block whose text is empty but which carries a signature ("omitted" display)."""
    if btype == "redacted_thinking":
        return True
    if btype == "thinking":
        thinking = optional(block, "thinking", str, field=field, at=at)
        signature = optional(block, "signature", str, field=field, at=at)
        return not thinking and bool(signature)
    return False


def _is_error_content(content: Any) -> bool:
    """Server tool results report failure in their content: ``{"type": "..._error", ...}``."""
    kind = content.get("type") if isinstance(content, dict) else None
    return isinstance(kind, str) and kind.endswith("_error")


# --- request ---------------------------------------------------------------------------------


def _parse_request(request: str, params: Params) -> list[Message]:
    field = "request"
    members = object_member_spans(request, field=field)
    body = {key: span.value for key, span in members.items()}
    params.request_settings = {k: v for k, v in body.items() if k != "messages"}
    params.requested_model = optional(body, "model", str, field=field, at="$")
    params.max_tokens = optional(body, "max_tokens", int, field=field, at="$")
    thinking = optional(body, "thinking", dict, field=field, at="$")
    if thinking is not None:
        params.thinking = optional(thinking, "type", str, field=field, at="$.thinking")
        params.budget_tokens = optional(
            thinking, "budget_tokens", int, field=field, at="$.thinking"
        )
    output_config = optional(body, "output_config", dict, field=field, at="$")
    if output_config is not None:
        params.effort = optional(output_config, "effort", str, field=field, at="$.output_config")

    _need(body, "messages", list, field=field, at="$")
    history = []
    spans = element_spans(members["messages"], field=field, at="$.messages")
    for i, span in enumerate(spans):
        at = f"$.messages[{i}]"
        message = expect(span.value, dict, field=field, at=at)
        role = _need(message, "role", str, field=field, at=at)
        if role not in _ROLES:
            raise FormatError(
                f"expected role 'user', 'assistant' or 'system', got {role!r}",
                field=field,
                at=f"{at}.role",
                code="bad_value",
            )
        if role == "system":
            # A system message between turns (the SDK's BetaSystemMessageParam: text,
            # tool_addition / tool_removal blocks, or only an output_config): kept as a history
            # message with the role, its text shown as a Chat system message's is.
            content = optional(message, "content", (str, list), field=field, at=at) or []
        else:
            content = _need(message, "content", (str, list), field=field, at=at)
        if isinstance(content, str):
            blocks: tuple[Block, ...] = (Block("text", classify(FORMAT, "text"), text=content),)
        else:
            blocks = tuple(
                _block(item, field=field, at=f"{at}.content[{j}]") for j, item in enumerate(content)
            )
        history.append(Message(role=role, raw=span.raw, blocks=blocks))
    return history


# --- response fields shared by JSON responses and streams ------------------------------------


def _apply_stop_reason(reason: str | None, out: Params) -> None:
    if reason is None:
        return
    out.stop_reason = reason
    kind = PROFILE.finish(reason)  # the one finish table (profile.py)
    out.refusal = kind is Finish.REFUSED
    if kind is Finish.TRUNCATED:
        out.truncated = True


def _apply_usage(usage: dict[str, Any], out: Params, *, field: str, at: str) -> None:
    """Copy the usage fields present (stream usage is cumulative: the latest value wins)."""
    columns = (
        ("input_tokens", "input_tokens"),
        ("cache_read_input_tokens", "cache_read_tokens"),
        ("cache_creation_input_tokens", "cache_write_tokens"),
        ("output_tokens", "output_tokens"),
    )
    for key, attr in columns:
        value = optional(usage, key, int, field=field, at=at)
        if value is not None:
            setattr(out.usage, attr, value)
    details = optional(usage, "output_tokens_details", dict, field=field, at=at)
    if details is not None:
        thinking = optional(
            details, "thinking_tokens", int, field=field, at=f"{at}.output_tokens_details"
        )
        if thinking is not None:
            out.usage.reasoning_tokens = thinking
    server = optional(usage, "server_tool_use", dict, field=field, at=at)
    if server is not None:
        for key, value in server.items():
            count = opt_int(value)
            if count is None:
                continue  # not a count: a shape newer than this code, nothing to tally
            # "web_search_requests" -> "web_search"; a zero count says no more than absence.
            name = key.removesuffix("_requests")
            if count:
                out.server_tool_counts[name] = count
            else:
                out.server_tool_counts.pop(name, None)


def _apply_transformations(container: dict[str, Any], out: Params) -> None:
    """The provider's verdict on the history, ``input_transformations`` (preserved thinking):
    each entry's ``type`` (``thinking_dropped``, ``thinking_mismatch_allowed``), ``path``
    (``messages.{i}.content.{j}``) and ``reason``; never content. A shape this code does not
    know is read past (the verdict is informative, the message stands without it)."""
    entries = container.get("input_transformations")
    if not isinstance(entries, list):
        return
    kept = []
    for entry in entries[:100]:
        if isinstance(entry, dict) and isinstance(entry.get("type"), str):
            kept.append(
                {
                    k: entry[k][:100]
                    for k in ("type", "path", "reason")
                    if isinstance(entry.get(k), str)
                }
            )
    out.input_transformations = kept


def _apply_message_fields(message: dict[str, Any], out: Params, *, field: str, at: str) -> None:
    """The fields of a response message object (or a stream's ``message_start`` skeleton)."""
    kind = optional(message, "type", str, field=field, at=at)
    if kind is not None and kind != "message":
        raise FormatError(
            f"expected type 'message', got {kind!r}", field=field, at=f"{at}.type", code="bad_value"
        )
    role = optional(message, "role", str, field=field, at=at)
    if role is not None and role != "assistant":
        raise FormatError(
            f"expected role 'assistant', got {role!r}",
            field=field,
            at=f"{at}.role",
            code="bad_value",
        )
    out.response_model = _stored_str(message, "model", field=field, at=at)
    out.response_id = _stored_str(message, "id", field=field, at=at)
    _apply_stop_reason(_stored_str(message, "stop_reason", field=field, at=at), out)
    usage = optional(message, "usage", dict, field=field, at=at)
    if usage is not None:
        _apply_usage(usage, out, field=field, at=f"{at}.usage")
    _apply_transformations(message, out)


def _served_model(blocks: Iterable[Any], model: str | None) -> str | None:
    """The model that served the message: a ``fallback`` block says the request moved from one
    model to another (``{"type": "fallback", "from": {"model"}, "to": {"model"}}``) while the
    message's ``model`` still names the first; the last fallback's ``to.model`` served it."""
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "fallback":
            to = block.get("to")
            served = to.get("model") if isinstance(to, dict) else None
            if isinstance(served, str) and served and not has_surrogate(served):
                model = served
    return model


# --- JSON response ---------------------------------------------------------------------------


def _parse_response(response: str, params: Params) -> Message:
    field = "response"
    members = object_member_spans(response, field=field)
    body = {key: span.value for key, span in members.items()}
    if body.get("type") == "error":
        error = body.get("error")
        error = error if isinstance(error, dict) else {}
        raise FormatError(
            "the response is a provider error, not a message: "
            f"{opt_str(error.get('type')) or 'unknown'}: {opt_str(error.get('message')) or ''}",
            field=field,
            at="$.type",
            code="provider_error",
        )
    _apply_message_fields(body, params, field=field, at="$")
    content = _need(body, "content", list, field=field, at="$")
    params.response_model = _served_model(content, params.response_model)
    content_raw = members["content"].raw
    spans = array_element_spans(content_raw, field=field, at="$.content")
    blocks = tuple(
        _block(span.value, field=field, at=f"$.content[{i}]") for i, span in enumerate(spans)
    )
    # DESIGN section 5: the assistant turn is the response's content array, byte for byte.
    raw = '{"role":"assistant","content":' + content_raw + "}"
    return Message(role="assistant", raw=raw, blocks=blocks)


# --- SSE stream ------------------------------------------------------------------------------


class _Stream:
    """Accumulates one streamed message. ``message_start`` (even a second one) calls ``reset``."""

    FIELD = "stream"

    out: Params  # the response side; the request side is filled by _parse_request
    blocks: dict[int, dict[str, Any]]
    origin: dict[int, str]  # index -> path of the value the block started from
    pieces: dict[tuple[int, str], list[str]]  # (index, key) -> string pieces, joined at the end
    partial_json: dict[int, list[str]]
    cut_inputs: dict[int, str]  # index -> tool input JSON that was cut off
    stopped: set[int]

    def __init__(self) -> None:
        self.started = False
        self.done = False  # message_stop or error seen
        self.reset()

    def reset(self) -> None:
        self.out = Params()
        self.blocks = {}
        self.origin = {}
        self.pieces = {}
        self.partial_json = {}
        self.cut_inputs = {}
        self.stopped = set()

    # -- events --

    def message_start(self, data: dict[str, Any], at: str) -> None:
        message = _need(data, "message", dict, field=self.FIELD, at=at)
        self.reset()
        self.started = True
        at = f"{at}.message"
        _apply_message_fields(message, self.out, field=self.FIELD, at=at)
        content = optional(message, "content", list, field=self.FIELD, at=at) or []
        for i, block in enumerate(content):
            self._open(i, block, f"{at}.content[{i}]")

    def content_block_start(self, data: dict[str, Any], at: str) -> None:
        index = self._index(data, at)
        if index in self.blocks:
            raise FormatError(
                f"content_block_start for index {index}, which is already open",
                field=self.FIELD,
                at=f"{at}.index",
                code="duplicate_index",
            )
        block = _need(data, "content_block", dict, field=self.FIELD, at=at)
        self._open(index, block, f"{at}.content_block")

    def content_block_delta(self, data: dict[str, Any], at: str) -> None:
        index = self._open_index(data, at, "content_block_delta")
        block = self.blocks[index]
        delta = _need(data, "delta", dict, field=self.FIELD, at=at)
        at = f"{at}.delta"
        dtype = _need(delta, "type", str, field=self.FIELD, at=at)
        if dtype in _STRING_DELTAS:
            source, key, targets, append = _STRING_DELTAS[dtype]
            piece = _need(delta, source, str, field=self.FIELD, at=at)
            if not self._fits(block, targets):
                return
            if append:
                self._append(index, key, piece)
            else:
                self.pieces.pop((index, key), None)
                block[key] = piece
        elif dtype == "input_json_delta":
            piece = _need(delta, "partial_json", str, field=self.FIELD, at=at)
            if self._fits(block, None):
                self.partial_json.setdefault(index, []).append(piece)
        elif dtype in _REPLACING_DELTAS:
            targets, keys = _REPLACING_DELTAS[dtype]
            if self._fits(block, targets):
                for key in keys:
                    block[key] = delta.get(key)
        elif dtype == "citations_delta":
            citation = _need(delta, "citation", dict, field=self.FIELD, at=at)
            if not self._fits(block, frozenset({"text"})):
                return
            citations = block.get("citations")
            if citations is None:
                block["citations"] = [citation]
            elif isinstance(citations, list):
                citations.append(citation)
            else:
                expect(citations, list, field=self.FIELD, at=f"{self.origin[index]}.citations")
        # Other delta types are new to this code: the block keeps what it had.

    def content_block_stop(self, data: dict[str, Any], at: str) -> None:
        index = self._open_index(data, at, "content_block_stop")
        self._finish(index)
        self.stopped.add(index)

    def message_delta(self, data: dict[str, Any], at: str) -> None:
        delta = optional(data, "delta", dict, field=self.FIELD, at=at)
        if delta is not None:
            reason = _stored_str(delta, "stop_reason", field=self.FIELD, at=f"{at}.delta")
            _apply_stop_reason(reason, self.out)
        usage = optional(data, "usage", dict, field=self.FIELD, at=at)
        if usage is not None:
            _apply_usage(usage, self.out, field=self.FIELD, at=f"{at}.usage")
        _apply_transformations(data, self.out)
        if delta is not None:
            _apply_transformations(delta, self.out)
        # context_management (applied edits) describes the request side: nothing to keep.

    def message_stop(self, data: dict[str, Any], at: str) -> None:
        self.done = True

    def error(self, data: dict[str, Any], at: str) -> None:
        # The provider gave up mid-stream: keep what arrived. A malformed error payload still
        # ends the stream; refusing the whole exchange over it would lose what did arrive.
        error = data.get("error")
        kind = opt_str(error.get("type")) if isinstance(error, dict) else None
        self.out.stream_error = kind or "error"
        self.out.truncated = True
        self.done = True

    def ping(self, data: dict[str, Any], at: str) -> None:
        pass

    HANDLERS: dict[str, Callable[[_Stream, dict[str, Any], str], None]] = {
        "message_start": message_start,
        "content_block_start": content_block_start,
        "content_block_delta": content_block_delta,
        "content_block_stop": content_block_stop,
        "message_delta": message_delta,
        "message_stop": message_stop,
        "error": error,
        "ping": ping,
    }
    # Events that may come before message_start.
    BEFORE_START = frozenset({"message_start", "error", "ping"})

    # -- helpers --

    def _index(self, data: dict[str, Any], at: str) -> int:
        return int(_need(data, "index", int, field=self.FIELD, at=at))

    def _open_index(self, data: dict[str, Any], at: str, event: str) -> int:
        index = self._index(data, at)
        if index not in self.blocks:
            raise FormatError(
                f"{event} for index {index}, which no content_block_start opened",
                field=self.FIELD,
                at=f"{at}.index",
                code="unknown_index",
            )
        if index in self.stopped:
            raise FormatError(
                f"{event} for index {index}, which content_block_stop already closed",
                field=self.FIELD,
                at=f"{at}.index",
                code="block_stopped",
            )
        return index

    def _open(self, index: int, block: Any, at: str) -> None:
        block = expect(block, dict, field=self.FIELD, at=at)
        _need(block, "type", str, field=self.FIELD, at=at)
        self.blocks[index] = block
        self.origin[index] = at

    @staticmethod
    def _fits(block: dict[str, Any], targets: frozenset[str] | None) -> bool:
        """A delta never names its block's type: one that does not fit the type the start gave
        (a ``text_delta`` on a ``tool_use`` block) changes nothing, as the SDK's
        ``accumulate_event`` ignores it (docs/formats.md)."""
        btype = block["type"]
        return bool(btype.endswith("tool_use") if targets is None else btype in targets)

    def _append(self, index: int, key: str, piece: str) -> None:
        # Pieces are joined once, at the block's end: repeated str += would be quadratic.
        pieces = self.pieces.get((index, key))
        if pieces is None:
            block = self.blocks[index]
            first = block.get(key)
            if first is not None:
                expect(first, str, field=self.FIELD, at=f"{self.origin[index]}.{key}")
            block[key] = ""  # fixes the key's place in the block now, as the stream gave it
            pieces = self.pieces[(index, key)] = [first or ""]
        pieces.append(piece)

    def _finish(self, index: int) -> None:
        block = self.blocks[index]
        for (i, key), pieces in list(self.pieces.items()):
            if i == index:
                block[key] = join_pieces(pieces)
                del self.pieces[(i, key)]
        partial = join_pieces(self.partial_json.pop(index, ()))
        if not partial.strip():
            return  # no input streamed: the start's input ({} for a tool without arguments)
        try:
            block["input"] = strict_loads(partial)
        except json.JSONDecodeError:
            # Cut off (max_tokens): the message keeps the start's input, the Block the string.
            self.cut_inputs[index] = partial
            self.out.truncated = True
            return
        except ValueError as exc:  # NaN, 1e400, an integer longer than int() reads
            raise FormatError(
                f"tool input of block {index}: {exc}; stored JSON cannot hold it",
                field=self.FIELD,
                at=self.origin[index],
                code="not_json",
            ) from None
        except RecursionError:
            raise FormatError(
                f"tool input of block {index} nested too deep",
                field=self.FIELD,
                at=self.origin[index],
                code="too_deep",
            ) from None
        if ("\\u" in partial or has_surrogate(partial)) and _holds_surrogate(block["input"]):
            raise FormatError(
                f"tool input of block {index} holds a lone UTF-16 surrogate (an unpaired "
                "\\ud800-\\udfff escape), which stored text cannot hold",
                field=self.FIELD,
                at=self.origin[index],
                code="bad_unicode",
            )

    def message(self) -> Message:
        for index in sorted(self.blocks):
            if index not in self.stopped:
                self._finish(index)  # open when the stream ended (max_tokens, error)
        order = sorted(self.blocks)
        accumulated = {"role": "assistant", "content": [self.blocks[i] for i in order]}
        raw = compact_checked(accumulated, field=self.FIELD, at="$", unicode_code="bad_unicode")
        blocks = tuple(
            _block(
                self.blocks[i],
                field=self.FIELD,
                at=self.origin[i],
                cut_input=self.cut_inputs.get(i),
            )
            for i in order
        )
        return Message(role="assistant", raw=raw, blocks=blocks)


def _event_data(event: Event) -> dict[str, Any]:
    try:
        data = event.json()
    except FormatError as exc:
        if event.unterminated and exc.code == "not_json":
            raise FormatError(
                f"the stream was cut off inside event {event.index}",
                field="stream",
                at=f"$[{event.index}]",
                code="truncated_stream",
            ) from None
        raise
    payload: dict[str, Any] = expect(data, dict, field="stream", at=f"$[{event.index}].data")
    return payload


def _parse_stream(stream: str, params: Params, *, cancelled: bool = False) -> list[Message]:
    state = _Stream()
    count = 0
    for event in iter_events(stream):
        count = event.index + 1
        if event.event != "message" and event.event not in _Stream.HANDLERS:
            continue  # a named event this code does not know: ignored unread
        if state.done and event.unterminated:
            continue  # cut off after message_stop: nothing of the message was lost
        at = f"$[{event.index}].data"
        try:
            data = _event_data(event)
        except FormatError as exc:
            if cancelled and exc.code == "truncated_stream":
                break  # the client stopped reading inside this event: it never arrived
            raise
        kind = _need(data, "type", str, field="stream", at=at)
        handler = _Stream.HANDLERS.get(kind)
        if handler is None or kind == "ping":
            continue
        if state.done:
            raise FormatError(
                f"{kind} after the end of the message",
                field="stream",
                at=f"{at}.type",
                code="after_stop",
            )
        if not state.started and kind not in _Stream.BEFORE_START:
            raise FormatError(
                f"{kind} before message_start",
                field="stream",
                at=f"{at}.type",
                code="out_of_order",
            )
        handler(state, data, at)
        if kind == "error":
            break  # stop here: what arrived is kept, what follows is not trusted
    if not state.done and not cancelled:
        raise FormatError(
            f"the stream ended after {count} events without message_stop",
            field="stream",
            at=f"$[{count}]",
            code="truncated_stream",
        )
    take_answer(params, state.out)
    params.response_model = _served_model(state.blocks.values(), state.out.response_model)
    # An error before message_start leaves no message at all.
    return [state.message()] if state.started else []


# --- the format ------------------------------------------------------------------------------


class AnthropicMessages(Format):
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
        _check_unicode(request, field="request")
        params = Params()
        history = _parse_request(request, params)
        if response is not None:
            _check_unicode(response, field="response")
            output = [_parse_response(response, params)]
        else:
            assert stream is not None
            # Not _check_unicode(stream): a pair split across two deltas is two lone escapes in
            # the text, and one character once joined. The stored strings are checked instead.
            output = _parse_stream(stream, params, cancelled=cancelled)
        return ParsedExchange(history=history, output=output, params=params)

    def message_blocks(self, raw: str) -> tuple[Block, ...]:
        """The blocks of one stored message (an assistant turn is a valid request message)."""
        return _parse_request('{"messages":[' + raw + "]}", Params())[0].blocks

    def reasoning(self, message: Any) -> Iterator[Trace]:
        """``thinking`` blocks (their text: a summary on Claude 4 models, the full thinking on
        Claude 3.7); an empty ``thinking`` with a signature is "omitted by provider";
        ``redacted_thinking`` is "redacted by provider" (its ``data`` is encrypted, never
        read)."""
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return  # a string content: plain text, no reasoning
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "redacted_thinking":
                yield Trace(TraceKind.THINKING, withheld=Withheld.REDACTED)
            elif kind == "thinking":
                text = block.get("thinking")
                if isinstance(text, str) and text:
                    yield Trace(TraceKind.THINKING, text)
                elif block.get("signature"):
                    yield Trace(TraceKind.THINKING, withheld=Withheld.OMITTED)
