"""OpenAI Chat Completions (``openai.chat``), with the reasoning fields of compatible providers:
DeepSeek's ``reasoning_content`` and OpenRouter's ``reasoning``.

- History: one Message per element of the request's ``messages``, raw = its exact source text.
- Output (response body): ONE Message, raw = the exact source text of ``choices[0].message``.
- Output (stream): the ``delta`` of choice 0 of every ``chat.completion.chunk`` accumulated into
  one message dict (keys in the order the stream first gave them a value), serialised once with
  ``compact()``. The stream ends with ``data: [DONE]`` or a chunk carrying a ``finish_reason``.

Blocks of one message, in this order: ``reasoning_content`` / ``reasoning`` (NEVER, no content),
``content`` (VISIBLE; one block per text part of a list; image, audio and file parts UNKNOWN; a
``<think>...</think>`` span at the start of a text is a NEVER ``think`` block before it: the
profile's ``INLINE``),
``refusal`` (VISIBLE), one ``tool_calls`` block per call (AUDIT). A ``tool`` message is one AUDIT
block ``tool`` (call id and output).

How to extend:
- a new reasoning field of some provider: add it to ``REASONING_KEYS`` of ``profile.py`` (NEVER
  in its ``BLOCK_TYPES``, read by ``OpenAIChat.reasoning``); a string delta of it is
  concatenated like ``content``.
- a new delta key: string values are concatenated, arrays extended, objects merged key by key,
  other values replaced (``_merge``); give it its own branch in ``_Accumulator.delta`` only if
  that is wrong for it.

Where this differs from the ``openai`` SDK's ``ChatCompletionStreamState`` on purpose (pinned by
tests/conversations/formats/differential): an ``id`` or ``type`` resent in every chunk is kept
once (the SDK concatenates ids), a tool name resent with its call's id is kept once, a
``reasoning_details`` entry's ``format`` and ``id`` resent with every piece are kept whole, only
choice 0 is read (the SDK files choices by arrival when they come out of order), and a null in a
delta creates no key.

One piece: the request reader, the response reader and the stream accumulator read the same
block shapes and must agree on every one of them; the module is the format, reviewed and
extended as one file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ...blocks import Block, BlockClass, Message, Params, ParsedExchange, Usage, classify
from ..base import (
    FormatError,
    element_spans,
    expect,
    join_pieces,
    object_member_spans,
)
from ..base import body_members as _members
from ..base import compact_checked as _serialise
from ..base import optional as _opt
from ..base import required as _req
from ..base import tool_arguments as _arguments
from ..live import inline_traces, split_inline
from ..profile import Endpoint, Finish
from ..registry import Format
from ..sse import Event, iter_events
from ..traces import Trace, TraceKind, Withheld
from .profile import FORMAT, INLINE, PROFILE, THINKING_PART, thinking_texts
from .profile import REASONING_KEYS as _REASONING_KEYS

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_STRING_DELTAS = frozenset({"content", "refusal", *_REASONING_KEYS})


# --- small typed readers ------------------------------------------------------------------------


# --- message -> blocks --------------------------------------------------------------------------


def _text_blocks(text: str) -> list[Block]:
    """A text of ``content``: a ``<think>`` span at its start is its own NEVER block (the
    profile's ``INLINE``), the rest the VISIBLE ``content``. An empty text (DeepSeek sends ""
    beside tool_calls) shows nothing: no block."""
    span, visible = split_inline(text, INLINE)
    blocks = [] if span is None else [Block(INLINE.never_type, BlockClass.NEVER)]
    if visible:
        blocks.append(Block("content", BlockClass.VISIBLE, text=visible))
    return blocks


def _content_blocks(content: Any, *, field: str, at: str) -> list[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return _text_blocks(content)
    if not isinstance(content, list):
        expect(content, (str, list), field=field, at=at)  # raises: says what came instead
    blocks = []
    for j, part in enumerate(content):
        pat = f"{at}[{j}]"
        expect(part, dict, field=field, at=pat)
        kind = _req(part, "type", str, field=field, at=pat)
        if kind == "text":
            blocks.extend(_text_blocks(_req(part, "text", str, field=field, at=pat)))
        elif kind == "refusal":
            text = _req(part, "refusal", str, field=field, at=pat)
            blocks.append(Block("refusal", BlockClass.VISIBLE, text=text))
        else:
            # image_url, input_audio, file...: kept in raw only. A part named like a NEVER type
            # stays NEVER; nothing else here is shown.
            cls = classify(FORMAT, kind)
            blocks.append(Block(kind, cls if cls is BlockClass.NEVER else BlockClass.UNKNOWN))
    return blocks


def _tool_call_block(call: Any, *, field: str, at: str) -> Block:
    expect(call, dict, field=field, at=at)
    call_id = _opt(call, "id", str, field=field, at=at)
    _opt(call, "type", str, field=field, at=at)
    name = tool_input = None
    function = _opt(call, "function", dict, field=field, at=at)
    custom = _opt(call, "custom", dict, field=field, at=at)
    if function is not None:
        name = _opt(function, "name", str, field=field, at=f"{at}.function")
        arguments = _opt(function, "arguments", str, field=field, at=f"{at}.function")
        tool_input = None if arguments is None else _arguments(arguments)
    elif custom is not None:  # custom tools take free text, not JSON
        name = _opt(custom, "name", str, field=field, at=f"{at}.custom")
        tool_input = _opt(custom, "input", str, field=field, at=f"{at}.custom")
    return Block("tool_calls", BlockClass.AUDIT, tool_name=name, call_id=call_id, input=tool_input)


def _blocks(message: dict[str, Any], role: str, *, field: str, at: str) -> tuple[Block, ...]:
    blocks: list[Block] = [
        Block(key, BlockClass.NEVER) for key in _REASONING_KEYS if message.get(key) is not None
    ]
    if role in ("tool", "function"):
        if role == "tool":
            call_id = _req(message, "tool_call_id", str, field=field, at=at)
            name = None
        else:  # the deprecated function-calling result: named, no call id
            call_id = None
            name = _opt(message, "name", str, field=field, at=at)
        output = _req(message, "content", (str, list), field=field, at=at)
        blocks.append(
            Block("tool", BlockClass.AUDIT, tool_name=name, call_id=call_id, output=output)
        )
        return tuple(blocks)
    blocks += _content_blocks(message.get("content"), field=field, at=f"{at}.content")
    refusal = _opt(message, "refusal", str, field=field, at=at)
    if refusal is not None:
        blocks.append(Block("refusal", BlockClass.VISIBLE, text=refusal))
    tool_calls = _opt(message, "tool_calls", list, field=field, at=at)
    for k, call in enumerate(tool_calls or ()):
        blocks.append(_tool_call_block(call, field=field, at=f"{at}.tool_calls[{k}]"))
    legacy = _opt(message, "function_call", dict, field=field, at=at)
    if legacy is not None:  # deprecated single function call, before tool_calls
        blocks.append(_tool_call_block({"function": legacy}, field=field, at=at))
    return tuple(blocks)


def _message(value: Any, raw: str, *, field: str, at: str) -> Message:
    expect(value, dict, field=field, at=at)
    role = _req(value, "role", str, field=field, at=at)
    if role not in _ROLES:
        raise FormatError(
            f"expected role system, developer, user, assistant or tool, got {role!r}",
            field=field,
            at=f"{at}.role",
            code="wrong_value",
        )
    return Message(role=role, raw=raw, blocks=_blocks(value, role, field=field, at=at))


# --- request ------------------------------------------------------------------------------------


def _parse_request(text: Any) -> tuple[list[Message], Params]:
    field = "request"
    members = _members(text, field=field)
    body = {k: s.value for k, s in members.items()}
    params = Params()
    params.request_settings = {k: v for k, v in body.items() if k != "messages"}
    # Azure OpenAI names the deployment in the URL and takes no model in the body (absent or
    # null): the model is then the endpoint's (``OpenAIChat.read``).
    params.requested_model = _opt(body, "model", str, field=field, at="$")
    # max_tokens is the older name; max_completion_tokens counts reasoning tokens too.
    params.max_tokens = _opt(body, "max_completion_tokens", int, field=field, at="$")
    if params.max_tokens is None:
        params.max_tokens = _opt(body, "max_tokens", int, field=field, at="$")
    params.effort = _opt(body, "reasoning_effort", str, field=field, at="$")
    reasoning = _opt(body, "reasoning", dict, field=field, at="$")  # OpenRouter
    if reasoning is not None:
        params.effort = params.effort or _opt(
            reasoning, "effort", str, field=field, at="$.reasoning"
        )
        params.budget_tokens = _opt(reasoning, "max_tokens", int, field=field, at="$.reasoning")
    thinking = _opt(body, "thinking", dict, field=field, at="$")  # DeepSeek
    if thinking is not None:
        params.thinking = _opt(thinking, "type", str, field=field, at="$.thinking")
    _opt(body, "stream", bool, field=field, at="$")

    _req(body, "messages", list, field=field, at="$")
    spans = element_spans(members["messages"], field=field, at="$.messages")
    history = [
        _message(s.value, s.raw, field=field, at=f"$.messages[{i}]") for i, s in enumerate(spans)
    ]
    return history, params


# --- response -----------------------------------------------------------------------------------


def _usage(usage: dict[str, Any], *, field: str, at: str) -> Usage:
    prompt = _opt(usage, "prompt_tokens_details", dict, field=field, at=at) or {}
    completion = _opt(usage, "completion_tokens_details", dict, field=field, at=at) or {}
    cached = _opt(prompt, "cached_tokens", int, field=field, at=f"{at}.prompt_tokens_details")
    if cached is None:  # DeepSeek's own name for it
        cached = _opt(usage, "prompt_cache_hit_tokens", int, field=field, at=at)
    return Usage(
        # prompt_tokens includes the cached ones (unlike Anthropic's input_tokens).
        input_tokens=_opt(usage, "prompt_tokens", int, field=field, at=at),
        cache_read_tokens=cached,
        output_tokens=_opt(usage, "completion_tokens", int, field=field, at=at),
        reasoning_tokens=_opt(
            completion, "reasoning_tokens", int, field=field, at=f"{at}.completion_tokens_details"
        ),
    )


def _finish(params: Params, finish_reason: str | None, message: Message) -> None:
    params.stop_reason = finish_reason
    kind = PROFILE.finish(finish_reason or "")  # the one finish table (profile.py)
    params.truncated = params.truncated or kind is Finish.TRUNCATED
    params.refusal = kind is Finish.REFUSED or any(b.type == "refusal" for b in message.blocks)


def _provider_error(body: dict[str, Any], *, field: str, at: str) -> None:
    error = body.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        raise FormatError(
            f"the response carries an error ({code}: {message}), not a completion",
            field=field,
            at=f"{at}.error",
            code="provider_error",
        )


def _parse_response(text: Any, params: Params) -> list[Message]:
    field = "response"
    members = _members(text, field=field)
    body = {k: s.value for k, s in members.items()}
    _provider_error(body, field=field, at="$")
    choices = _req(body, "choices", list, field=field, at="$")
    if not choices:
        raise FormatError(
            "expected at least one choice, got an empty array",
            field=field,
            at="$.choices",
            code="empty",
        )
    choice = expect(choices[0], dict, field=field, at="$.choices[0]")
    finish_reason = _opt(choice, "finish_reason", str, field=field, at="$.choices[0]")
    params.response_model = _opt(body, "model", str, field=field, at="$")
    params.response_id = _opt(body, "id", str, field=field, at="$")
    usage = _opt(body, "usage", dict, field=field, at="$")
    if usage is not None:
        params.usage = _usage(usage, field=field, at="$.usage")
    if "message" not in choice and PROFILE.finish(finish_reason or "") is Finish.REFUSED:
        # Azure OpenAI's content filter answers 200 with a choice that has a refusing finish
        # reason (``content_filter``) and no message: the model said nothing the customer saw.
        # The exchange is stored with that finish (a refusal) and no answer. Any other finish
        # without a message is no answer at all: refused below (``missing``).
        params.stop_reason = finish_reason
        params.refusal = True
        return []
    value = _req(choice, "message", dict, field=field, at="$.choices[0]")
    # The exact bytes of choices[0].message, three levels down: no re-serialisation.
    first = element_spans(members["choices"], field=field, at="$.choices")[0]
    raw = object_member_spans(first.raw, field=field)["message"].raw
    at = "$.choices[0].message"
    role = _opt(value, "role", str, field=field, at=at) or "assistant"
    message = Message(role=role, raw=raw, blocks=_blocks(value, role, field=field, at=at))
    _finish(params, finish_reason, message)
    return [message]


# --- stream -------------------------------------------------------------------------------------


class _Pieces(list[str]):
    """A string still being streamed: its deltas, joined once at the end (adding each delta to
    a str would copy the whole text every time)."""


def _indexed(value: list[Any]) -> bool:
    """An array whose entries say where they go (``index``), as the SDK's ``accumulate_delta``
    tells them apart: ``reasoning_details`` (OpenRouter), ``executed_tools`` (Groq)."""
    return any(isinstance(entry, dict) and "index" in entry for entry in value)


# Members of an indexed entry that name or describe it and that a provider resends whole in
# every piece (OpenRouter sends a ``reasoning_details`` entry's ``format``, "anthropic-claude-v1",
# and its ``id`` with each piece): kept as the provider sends them, not concatenated.
_WHOLE_ENTRY_MEMBERS = frozenset({"index", "type", "format", "id"})


# Members of a delta that a provider resends whole with every chunk (Groq's gpt-oss deltas say
# ``"channel": "analysis"`` in each): kept as sent, not concatenated (the SDK makes them
# ``analysisanalysis...``; docs/formats.md).
_WHOLE_DELTA_KEYS = frozenset({"channel"})


def _merge_entries(acc: list[Any], value: list[Any]) -> None:
    """Array entries merged by their ``index``, as the SDK does: a piece with an index already
    seen continues that entry (its text, then its signature, are one entry), a new index is a
    new entry in the order indexes first arrive. The members of ``_WHOLE_ENTRY_MEMBERS`` are
    replaced (the SDK replaces ``index`` and ``type`` only: it concatenates a ``format`` resent
    with every piece into ``anthropic-claude-v1anthropic-claude-v1...``, a value the provider
    never sent; docs/formats.md), every other field merged by ``_merge`` (a text or a signature
    in pieces is joined; Groq's ``arguments``, resent whole, comes out repeated as the SDK hands
    it to the backend)."""
    for entry in value:
        if not isinstance(entry, dict) or not isinstance(entry.get("index"), int):
            acc.append(entry)  # the SDK raises here: kept as sent
            continue
        target = next(
            (e for e in acc if isinstance(e, dict) and e.get("index") == entry["index"]), None
        )
        if target is None:
            target = {}
            acc.append(target)
        for k, v in entry.items():
            if k in _WHOLE_ENTRY_MEMBERS and v is not None:
                target[k] = v
            else:
                _merge(target, k, v)


def _merge(acc: dict[str, Any], key: str, value: Any) -> None:
    """A delta value: strings concatenate, arrays extend (entries with an ``index`` merge by
    it), objects merge key by key by these same rules (``audio`` arrives as ``{id,
    transcript}``, then ``{data}``, ``{transcript}``..., ``{expires_at}``: one object, as the
    SDK's ``accumulate_delta`` builds it), anything else replaces; null adds nothing (and so
    does not create the key). An ``id`` inside an object names it and never grows: the first
    one stays (servers that resend it in every chunk)."""
    if value is None:
        return
    before = acc.get(key)
    if isinstance(value, str):
        if isinstance(before, _Pieces):
            before.append(value)
        else:
            acc[key] = _Pieces([value])
    elif isinstance(value, list) and (before is None or isinstance(before, list)):
        if not isinstance(before, list) or isinstance(before, _Pieces):
            before = acc[key] = []
        if _indexed(value):
            _merge_entries(before, value)
        else:
            before.extend(value)
    elif isinstance(value, dict) and isinstance(before, dict):
        for k, v in value.items():
            if k == "id" and before.get(k) is not None:
                continue
            _merge(before, k, v)
    elif isinstance(value, dict):
        merged: dict[str, Any] = {}
        acc[key] = merged
        for k, v in value.items():
            _merge(merged, k, v)
    else:
        acc[key] = value


def _join(obj: Any) -> None:
    """Every streamed string of ``obj`` (its objects and arrays, at any depth) made a str."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if isinstance(value, _Pieces):
                obj[key] = join_pieces(value)
            elif isinstance(value, dict | list):
                _join(value)
    elif isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict | list) and not isinstance(item, _Pieces):
                _join(item)


def _chunked(message: dict[str, Any]) -> bool:
    """The message's ``content`` is an array of chunks (not a string being streamed)."""
    content = message.get("content")
    return isinstance(content, list) and not isinstance(content, _Pieces)


class _Accumulator:
    """Choice 0 of a chat.completion.chunk stream, folded into one message dict."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.calls: dict[int, dict[str, Any]] = {}  # tool calls by their "index"
        self.model: str | None = None
        self.id: str | None = None
        self.usage: tuple[dict[str, Any], str] | None = None
        self.finish_reason: str | None = None
        self.done = False  # [DONE] or a finish_reason seen
        self.error: str | None = None

    def join(self) -> None:
        """Turn every streamed string into a str (the message, its calls, their functions)."""
        _join(self.message)

    def chunk(self, data: dict[str, Any], at: str) -> None:
        field = "stream"
        error = data.get("error")
        if error is not None:
            # {"error": {"type"|"code", "message"}}: keep what arrived, note the error.
            kinds = [error.get("type"), error.get("code")] if isinstance(error, dict) else []
            self.error = next(
                (str(k) for k in kinds if isinstance(k, str | int) and not isinstance(k, bool)),
                "error",
            )
            return
        self.model = self.model or _opt(data, "model", str, field=field, at=at)
        self.id = self.id or _opt(data, "id", str, field=field, at=at)
        usage = _opt(data, "usage", dict, field=field, at=at)
        if usage is not None:
            self.usage = (usage, f"{at}.usage")
        choices = _opt(data, "choices", list, field=field, at=at) or []
        for k, choice in enumerate(choices):
            cat = f"{at}.choices[{k}]"
            expect(choice, dict, field=field, at=cat)
            index = _opt(choice, "index", int, field=field, at=cat)
            if (k if index is None else index) != 0:
                continue  # n > 1: only the first choice is the conversation's answer
            delta = _opt(choice, "delta", dict, field=field, at=cat)
            if delta is not None:
                self.delta(delta, f"{cat}.delta")
            finish = _opt(choice, "finish_reason", str, field=field, at=cat)
            if finish is not None:
                self.finish_reason = finish
                self.done = True

    def delta(self, delta: dict[str, Any], at: str) -> None:
        field = "stream"
        for key, value in delta.items():
            if key == "role":
                role = _opt(delta, key, str, field=field, at=at)
                if role is not None:
                    self.message.setdefault("role", role)
            elif key in _WHOLE_DELTA_KEYS and isinstance(value, str):
                self.message[key] = value  # resent whole with every delta: the provider's
            elif key == "content" and (isinstance(value, list) or _chunked(self.message)):
                self.chunks(value, f"{at}.content")
            elif key in _STRING_DELTAS:
                _merge(self.message, key, _opt(delta, key, str, field=field, at=at))
            elif key == "tool_calls":
                calls = _opt(delta, key, list, field=field, at=at)
                for k, call in enumerate(calls or ()):
                    self.tool_call(call, k, f"{at}.tool_calls[{k}]")
            elif key == "function_call":  # deprecated single call: same rules as a tool call
                function = _opt(delta, key, dict, field=field, at=at)
                if function is not None:
                    self.function(self.message.setdefault(key, {}), function, f"{at}.{key}")
            else:
                _merge(self.message, key, value)

    def chunks(self, value: Any, at: str) -> None:
        """A ``content`` delta that is an array of chunks (Mistral: ``{"type": "thinking",
        "thinking": [{"type": "text", "text": ...}]}`` while a reasoning model thinks, then text
        chunks or plain strings), folded into the message's ``content`` as Mistral's own
        non-streamed answer holds it: one chunk per run of a type, texts joined (the text
        streamed before, if any, its first chunk). A null adds nothing."""
        if value is None:
            return
        if not isinstance(value, str):
            expect(value, list, field="stream", at=at)
        if not _chunked(self.message):
            before = self.message.get("content")
            before = join_pieces(before) if isinstance(before, _Pieces) else before
            self.message["content"] = []
            if isinstance(before, str) and before:
                self.message["content"].append({"type": "text", "text": _Pieces([before])})
        content: list[Any] = self.message["content"]
        for j, chunk in enumerate([value] if isinstance(value, str) else value):
            if isinstance(chunk, str):
                chunk = {"type": "text", "text": chunk}
            expect(chunk, dict, field="stream", at=f"{at}[{j}]")
            kind = chunk.get("type")
            last = content[-1] if content else None
            if isinstance(last, dict) and last.get("type") == kind and kind in ("text", "thinking"):
                for k, v in chunk.items():
                    if k == "thinking" and isinstance(v, list):
                        self.chunks_into(last, v, f"{at}[{j}].thinking")
                    elif k != "type":
                        _merge(last, k, v)
                continue
            entry: dict[str, Any] = {}
            content.append(entry)
            for k, v in chunk.items():
                if k == "thinking" and isinstance(v, list):
                    entry[k] = []
                    self.chunks_into(entry, v, f"{at}[{j}].thinking")
                elif k == "type":
                    entry[k] = v
                else:
                    _merge(entry, k, v)

    def chunks_into(self, target: dict[str, Any], value: list[Any], at: str) -> None:
        """The inner text chunks of a thinking chunk, joined into one run of text."""
        inner = target.setdefault("thinking", [])
        for j, part in enumerate(value):
            expect(part, dict, field="stream", at=f"{at}[{j}]")
            last = inner[-1] if inner else None
            if isinstance(last, dict) and last.get("type") == part.get("type") == "text":
                _merge(last, "text", part.get("text"))
                continue
            entry: dict[str, Any] = {}
            inner.append(entry)
            for k, v in part.items():
                if k == "type":
                    entry[k] = v
                else:
                    _merge(entry, k, v)

    def tool_call(self, call: Any, position: int, at: str) -> None:
        field = "stream"
        expect(call, dict, field=field, at=at)
        index = _opt(call, "index", int, field=field, at=at)
        index = position if index is None else index  # some compatible servers omit it
        acc = self.calls.get(index)
        if acc is None:
            acc = self.calls[index] = {}
            self.message.setdefault("tool_calls", []).append(acc)
        # A chunk that repeats the call's id resends the call whole (some servers do, in every
        # chunk): its name is the name again. Without the id, a name continues the one before
        # (servers that split it, as the SDK's accumulate_delta joins it).
        resent = acc.get("id") is not None and call.get("id") == acc["id"]
        for key in call:
            if key == "index":
                continue  # the stream's addressing, not part of the message
            if key in ("function", "custom"):
                part = _opt(call, key, dict, field=field, at=at)
                if part is not None:
                    self.function(acc.setdefault(key, {}), part, f"{at}.{key}", resent=resent)
            elif key in ("id", "type"):
                value = _opt(call, key, str, field=field, at=at)
                if value is not None:
                    acc.setdefault(key, value)  # some servers repeat them in every chunk
            else:
                _merge(acc, key, call[key])

    def function(
        self, acc: dict[str, Any], part: dict[str, Any], at: str, *, resent: bool = False
    ) -> None:
        for key in part:
            value = _opt(part, key, str, field="stream", at=at)
            if value is None:
                continue
            if key in ("arguments", "input") or (key == "name" and not resent):
                _merge(acc, key, value)
            else:
                acc.setdefault(key, value)  # a resent name, or a field that comes whole


def _event_data(event: Event) -> Any:
    try:
        return event.json()
    except FormatError:
        if event.unterminated:
            raise FormatError(
                f"the stream was cut off inside event {event.index}",
                field="stream",
                at=f"$[{event.index}]",
                code="truncated_stream",
            ) from None
        raise


def _parse_stream(text: Any, params: Params, *, cancelled: bool = False) -> list[Message]:
    field = "stream"
    if not isinstance(text, str):
        raise FormatError(
            f"expected SSE text, got {type(text).__name__}", field=field, code="wrong_type"
        )
    acc = _Accumulator()
    count = 0
    for event in iter_events(text):
        count += 1
        if event.data.strip() == "[DONE]":
            acc.done = True
            break
        at = f"$[{event.index}].data"
        if event.event == "error":
            # An error event (or a server's ``error:`` line) ends the stream: the message is
            # what arrived, the exchange records the error (its type or code when it says one).
            try:
                value = json.loads(event.data)
            except ValueError:
                value = None
            detail = value.get("error", value) if isinstance(value, dict) else None
            acc.chunk({"error": detail if isinstance(detail, dict) else {}}, at)
            break
        try:
            data = expect(_event_data(event), dict, field=field, at=at)
        except FormatError as exc:
            if exc.code == "truncated_stream" and (acc.done or cancelled):
                break  # the answer was whole; only a trailing chunk (usage) was cut off
            raise
        acc.chunk(data, at)
        if acc.error is not None:
            break
    if not acc.done and acc.error is None and not cancelled:
        raise FormatError(
            f"the stream ended after {count} events without a finish_reason or data: [DONE]",
            field=field,
            at=f"$[{count - 1}]" if count else "$",
            code="truncated_stream",
        )
    acc.join()
    role = acc.message.get("role")
    role = role if isinstance(role, str) else "assistant"
    raw = _serialise(acc.message, field=field, at="$")
    message = Message(role=role, raw=raw, blocks=_blocks(acc.message, role, field=field, at="$"))

    params.response_model = acc.model
    params.response_id = acc.id
    if acc.usage is not None:
        params.usage = _usage(acc.usage[0], field=field, at=acc.usage[1])
    if acc.error is not None:
        params.stream_error = acc.error
        params.truncated = True
    _finish(params, acc.finish_reason, message)
    return [message]


class OpenAIChat(Format):
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
        history, params = _parse_request(request)
        if params.requested_model is None and (endpoint is None or not endpoint.model):
            raise FormatError(
                "the request names no model ('model' missing or null); one that names none (an "
                "Azure OpenAI deployment) needs the endpoint it was sent to, which names the "
                "deployment (/openai/deployments/{deployment}/chat/completions)",
                field="request",
                at="$.model",
                code="missing",
            )
        if response is not None:
            output = _parse_response(response, params)
        else:
            output = _parse_stream(stream, params, cancelled=cancelled)
        return ParsedExchange(history=history, output=output, params=params)

    def message_blocks(self, raw: str) -> tuple[Block, ...]:
        """The blocks of one stored message (``choices[0].message`` is a valid request message)."""
        return _parse_request('{"model":"-","messages":[' + raw + "]}")[0][0].blocks

    def reasoning(self, message: Any) -> Iterator[Trace]:
        """``reasoning_content`` (DeepSeek), ``reasoning`` (OpenRouter), a ``<think>`` span at
        the start of ``content`` (a server without a reasoning parser) and OpenRouter's
        ``reasoning_details`` (summary and text entries; an encrypted entry is "redacted by
        provider")."""
        if not isinstance(message, dict):
            return
        for key in _REASONING_KEYS:
            text = message.get(key)
            if isinstance(text, str) and text:
                yield Trace(TraceKind.REASONING_CONTENT, text)
        yield from inline_traces(message.get("content"), INLINE, TraceKind.REASONING_CONTENT)
        content = message.get("content")
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and part.get("type") == THINKING_PART:
                text = "".join(thinking_texts(part))
                if text:
                    yield Trace(TraceKind.REASONING_CONTENT, text)
        details = message.get("reasoning_details")
        if not isinstance(details, list):
            return
        for entry in details:
            if not isinstance(entry, dict):
                continue
            kind = entry.get("type")
            if kind == "reasoning.summary" and isinstance(entry.get("summary"), str):
                yield Trace(TraceKind.SUMMARY, entry["summary"])
            elif kind == "reasoning.text" and isinstance(entry.get("text"), str):
                yield Trace(TraceKind.REASONING_CONTENT, entry["text"])
            elif kind == "reasoning.encrypted":
                yield Trace(TraceKind.REASONING_CONTENT, withheld=Withheld.REDACTED)
