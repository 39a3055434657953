"""OpenAI Responses API (``openai.responses``): request input items, response output items and
the typed SSE stream.

- History: one Message per element of the request's ``input`` array, raw = the element's exact
  source text. A string ``input`` is one user Message whose raw is the exact JSON string literal.
- Output (response body): one Message per item of ``output``, raw = the item's exact source text.
- Output (stream): the items are rebuilt from the events and each is serialised once with
  ``compact()``: an item is the terminal response's item of the same identity (what the SDK
  returns), else its ``response.output_item.done`` item, else its ``added`` item plus the deltas.
  Params come from the terminal event's response.

Blocks: a ``message`` item's blocks are its content parts; any other item is one block of its own
type: ``reasoning`` is NEVER (``redacted`` when the provider sent only ``encrypted_content``),
``function_call``/``function_call_output`` and every other ``*_call``/``*_call_output`` are AUDIT,
and a type nobody classified (``item_reference``, ``compaction``...) is UNKNOWN with no content.

How to extend:
- a new item type: classify its name in ``BLOCK_TYPES`` of ``profile.py``. A new
  ``*_call`` is AUDIT already; give it a branch in ``_item_blocks`` only if the generic reading
  (tool name from the type, input from ``action``) is wrong for it.
- a new stream event: add ``"response.<name>": _Stream.<method>`` to ``_Stream.HANDLERS``. Events
  not in that table are ignored, so a new provider event never breaks ingest.

One piece: the request reader, the response reader and the stream accumulator read the same
block shapes and must agree on every one of them; the module is the format, reviewed and
extended as one file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ...blocks import Block, BlockClass, Message, Params, ParsedExchange, Usage, classify
from ..base import (
    FormatError,
    element_spans,
    expect,
    join_pieces,
    json_type,
)
from ..base import body_members as _members
from ..base import compact_checked as _serialise
from ..base import optional as _opt
from ..base import required as _req
from ..base import tool_arguments as _arguments
from ..profile import Endpoint, Finish
from ..registry import Format
from ..sse import Event, iter_events
from ..traces import Trace, TraceKind, Withheld
from .profile import CLIENT_CALLS, FORMAT, PROFILE

_MESSAGE_ROLES = frozenset({"user", "system", "developer", "assistant"})
_TERMINAL = frozenset({"response.completed", "response.incomplete"})


# --- small typed readers ------------------------------------------------------------------------


# --- items -> blocks ----------------------------------------------------------------------------


def _part_block(part: Any, *, field: str, at: str) -> Block:
    """One content part of a message item."""
    expect(part, dict, field=field, at=at)
    kind = _req(part, "type", str, field=field, at=at)
    cls = classify(FORMAT, kind)
    if cls is BlockClass.VISIBLE:
        key = "refusal" if kind == "refusal" else "text"
        return Block(kind, cls, text=_req(part, key, str, field=field, at=at))
    if cls is BlockClass.NEVER:
        return Block(kind, cls)
    # Images, files, audio, and anything AUDIT-named that has no business inside a message:
    # kept in raw, never rendered.
    return Block(kind, BlockClass.UNKNOWN)


def _message_blocks(item: dict[str, Any], *, field: str, at: str) -> tuple[str, tuple[Block, ...]]:
    role = _req(item, "role", str, field=field, at=at)
    if role not in _MESSAGE_ROLES:
        raise FormatError(
            f"expected role user, system, developer or assistant, got {role!r}",
            field=field,
            at=f"{at}.role",
            code="wrong_value",
        )
    content = _req(item, "content", (str, list), field=field, at=at)
    if isinstance(content, str):
        # The API reads a string as one input_text part (output_text for the assistant).
        kind = "output_text" if role == "assistant" else "input_text"
        return role, (Block(kind, BlockClass.VISIBLE, text=content),)
    blocks = tuple(
        _part_block(part, field=field, at=f"{at}.content[{j}]") for j, part in enumerate(content)
    )
    return role, blocks


def _reasoning_block(item: dict[str, Any], kind: str) -> Block:
    # Withheld by the provider: only the encrypted blob came, no summary and no raw content.
    encrypted = item.get("encrypted_content")
    redacted = (
        isinstance(encrypted, str)
        and encrypted != ""
        and not item.get("summary")
        and not item.get("content")
    )
    return Block(kind, BlockClass.NEVER, redacted=redacted)


def _call_block(item: dict[str, Any], kind: str, *, field: str, at: str) -> Block:
    """A ``*_call`` item other than function_call (web_search_call, mcp_call...)."""
    status = _opt(item, "status", str, field=field, at=at)
    name = _opt(item, "name", str, field=field, at=at)  # mcp_call, custom_tool_call
    call_id = _opt(item, "call_id", str, field=field, at=at) or _opt(
        item, "id", str, field=field, at=at
    )
    if "action" in item:
        tool_input = item["action"]
    elif isinstance(item.get("arguments"), str):
        tool_input = _arguments(item["arguments"])
    else:
        tool_input = item.get("input")
    return Block(
        kind,
        BlockClass.AUDIT,
        tool_name=name or kind.removesuffix("_call"),
        call_id=call_id,
        input=tool_input,
        output=item.get("output"),
        status=status,
    )


def _item_blocks(item: Any, *, field: str, at: str) -> tuple[str, tuple[Block, ...]]:
    """The role and blocks of one input or output item."""
    expect(item, dict, field=field, at=at)
    if "type" not in item and "role" not in item:
        raise FormatError(
            "expected an item with a 'type' (or a message with a 'role'), found neither",
            field=field,
            at=f"{at}.type",
            code="missing",
        )
    kind = item.get("type", "message")
    expect(kind, str, field=field, at=f"{at}.type")
    if kind == "message":
        return _message_blocks(item, field=field, at=at)
    cls = classify(FORMAT, kind)
    if cls is BlockClass.NEVER:
        return "assistant", (_reasoning_block(item, kind),)
    if kind == "function_call":
        arguments = _req(item, "arguments", str, field=field, at=at)
        block = Block(
            kind,
            BlockClass.AUDIT,
            tool_name=_req(item, "name", str, field=field, at=at),
            call_id=_req(item, "call_id", str, field=field, at=at),
            input=_arguments(arguments),
            status=_opt(item, "status", str, field=field, at=at),
        )
        return "assistant", (block,)
    if cls is BlockClass.AUDIT and kind.endswith("_call_output"):
        if kind == "function_call_output":
            call_id = _req(item, "call_id", str, field=field, at=at)
            _req(item, "output", (str, list), field=field, at=at)
            tool_name = None  # only the matching function_call names the tool
        else:
            call_id = _opt(item, "call_id", str, field=field, at=at)
            tool_name = kind.removesuffix("_call_output")
        block = Block(
            kind,
            BlockClass.AUDIT,
            tool_name=tool_name,
            call_id=call_id,
            output=item.get("output"),
            status=_opt(item, "status", str, field=field, at=at),
        )
        return "tool", (block,)
    if cls is BlockClass.AUDIT and kind.endswith("_call"):
        return "assistant", (_call_block(item, kind, field=field, at=at),)
    # item_reference, compaction, new types: fail closed.
    role = item.get("role")
    return (role if isinstance(role, str) else "assistant"), (Block(kind, BlockClass.UNKNOWN),)


def _message(item: Any, raw: str, *, field: str, at: str) -> Message:
    role, blocks = _item_blocks(item, field=field, at=at)
    return Message(role=role, raw=raw, blocks=blocks)


# --- request ------------------------------------------------------------------------------------


def _parse_request(text: Any) -> tuple[list[Message], Params, bool]:
    field = "request"
    members = _members(text, field=field)
    body = {k: s.value for k, s in members.items()}
    params = Params()
    params.request_settings = {k: v for k, v in body.items() if k != "input"}
    params.requested_model = _opt(body, "model", str, field=field, at="$")
    params.max_tokens = _opt(body, "max_output_tokens", int, field=field, at="$")
    reasoning = _opt(body, "reasoning", dict, field=field, at="$")
    if reasoning is not None:
        params.effort = _opt(reasoning, "effort", str, field=field, at="$.reasoning")
        # Params has no summary slot: the requested summary mode ("auto", "concise",
        # "detailed") is the closest thing this API has to a thinking type.
        params.thinking = _opt(reasoning, "summary", str, field=field, at="$.reasoning")
    previous = _opt(body, "previous_response_id", str, field=field, at="$")
    params.previous_response_id = previous
    _opt(body, "include", list, field=field, at="$")

    # A request may name a stored prompt (``prompt``: its id, version and variables) and send
    # no ``input``: the history is then the prompt's, kept server-side (the request's settings
    # keep the reference), and the request sends none.
    prompt = _opt(body, "prompt", dict, field=field, at="$")
    source = (
        _opt(body, "input", (str, list), field=field, at="$")
        if prompt is not None
        else _req(body, "input", (str, list), field=field, at="$")
    )
    if source is None:
        history = []
    elif isinstance(source, str):
        block = Block("input_text", BlockClass.VISIBLE, text=source)
        history = [Message(role="user", raw=members["input"].raw, blocks=(block,))]
    else:
        spans = element_spans(members["input"], field=field, at="$.input")
        history = [
            _message(s.value, s.raw, field=field, at=f"$.input[{i}]") for i, s in enumerate(spans)
        ]
    return history, params, previous is None


# --- response -----------------------------------------------------------------------------------


def _check_response(body: dict[str, Any], *, field: str, at: str) -> None:
    error = body.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        raise FormatError(
            f"the response carries an error ({code}: {message}), not a result",
            field=field,
            at=f"{at}.error",
            code="provider_error",
        )
    kind = body.get("object")
    if kind != "response":
        raise FormatError(
            f'expected "object": "response", got {json.dumps(kind)[:80]}',
            field=field,
            at=f"{at}.object",
            code="missing" if "object" not in body else "wrong_value",
        )


def _fill_params(
    params: Params,
    body: dict[str, Any],
    items: list[Any],
    messages: list[Message],
    *,
    field: str,
    at: str,
) -> None:
    """Params read from a response object (a body, or a stream's terminal/skeleton response)."""
    params.response_model = _opt(body, "model", str, field=field, at=at)
    params.response_id = _opt(body, "id", str, field=field, at=at)
    status = _opt(body, "status", str, field=field, at=at)
    details = _opt(body, "incomplete_details", dict, field=field, at=at)
    reason = None
    if details is not None:
        reason = _opt(details, "reason", str, field=field, at=f"{at}.incomplete_details")
    params.stop_reason = reason if status == "incomplete" and reason else status
    # The one finish table (profile.py): max_output_tokens truncated, content_filter refused.
    finish = PROFILE.finish(params.stop_reason or "")
    params.truncated = finish is Finish.TRUNCATED

    usage = _opt(body, "usage", dict, field=field, at=at)
    if usage is not None:
        uat = f"{at}.usage"
        inp = _opt(usage, "input_tokens_details", dict, field=field, at=uat) or {}
        out = _opt(usage, "output_tokens_details", dict, field=field, at=uat) or {}
        params.usage = Usage(
            input_tokens=_opt(usage, "input_tokens", int, field=field, at=uat),
            cache_read_tokens=_opt(
                inp, "cached_tokens", int, field=field, at=f"{uat}.input_tokens_details"
            ),
            output_tokens=_opt(usage, "output_tokens", int, field=field, at=uat),
            reasoning_tokens=_opt(
                out, "reasoning_tokens", int, field=field, at=f"{uat}.output_tokens_details"
            ),
        )

    counts: dict[str, int] = {}
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if isinstance(kind, str) and kind.endswith("_call") and kind not in CLIENT_CALLS:
            # a server tool (web search, code interpreter...): the client runs none of these
            counts[kind] = counts.get(kind, 0) + 1
    params.server_tool_counts = counts
    params.refusal = finish is Finish.REFUSED or any(
        b.type == "refusal" for m in messages for b in m.blocks
    )


def _parse_response(text: Any, params: Params) -> list[Message]:
    field = "response"
    members = _members(text, field=field)
    body = {k: s.value for k, s in members.items()}
    _check_response(body, field=field, at="$")
    _req(body, "output", list, field=field, at="$")
    spans = element_spans(members["output"], field=field, at="$.output")
    output = [
        _message(s.value, s.raw, field=field, at=f"$.output[{i}]") for i, s in enumerate(spans)
    ]
    _fill_params(params, body, [s.value for s in spans], output, field=field, at="$")
    return output


# --- stream -------------------------------------------------------------------------------------


def _event_data(event: Event) -> Any:
    if event.data.strip() == "[DONE]":  # not sent by OpenAI; some proxies add it
        return None
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


class _Pieces(list[str]):
    """A string still being streamed: its deltas, joined once at the end (adding each delta to
    a str would copy the whole text every time)."""


def _joined(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with its streamed strings joined: a field of the item, or a field of one of its
    parts (content, summary), which is as deep as deltas go."""
    for key, value in item.items():
        if isinstance(value, _Pieces):
            item[key] = join_pieces(value)
        elif isinstance(value, list):
            for part in value:
                if isinstance(part, dict):
                    for k, v in part.items():
                        if isinstance(v, _Pieces):
                            part[k] = join_pieces(v)
    return item


# Items a stream names by their call id alone (their ``id`` may differ between events).
_CALL_ID_ITEMS = frozenset({"function_call", "custom_tool_call", "shell_call", "shell_call_output"})


def _identity(item: Any) -> tuple[Any, Any, Any]:
    """Which output item this is, as the SDK's ``ResponseStreamState`` matches an item of the
    stream with one of the terminal response's output."""
    if not isinstance(item, dict):
        return (object(), None, None)
    kind, item_id, call_id = (_name(item.get(k)) for k in ("type", "id", "call_id"))
    return (kind, None, call_id) if kind in _CALL_ID_ITEMS else (kind, item_id, call_id)


def _name(value: Any) -> Any:
    """A string as itself; anything else matches nothing (a fresh object)."""
    return value if value is None or isinstance(value, str) else object()


class _Stream:
    """Rebuilds the output items of one Responses stream, event by event."""

    def __init__(self) -> None:
        self.items: dict[int, dict[str, Any]] = {}  # by output_index
        self.item_at: dict[int, str] = {}  # the event path each item was last taken from
        self.done: set[int] = set()
        # The done form of an item the terminal response gives in another form.
        self.alternates: dict[int, dict[str, Any]] = {}
        self.skeleton: tuple[dict[str, Any], str] | None = None  # response.created/in_progress
        self.final: tuple[dict[str, Any], str] | None = None  # the terminal event's response
        self.failed: tuple[dict[str, Any], str] | None = None  # response.failed's response
        self.error: str | None = None

    # Where an event's fields are; every handler reads from ``data`` at ``at``.

    def _response(self, data: dict[str, Any], at: str) -> tuple[dict[str, Any], str]:
        return _req(data, "response", dict, field="stream", at=at), f"{at}.response"

    def _index(self, data: dict[str, Any], key: str, at: str) -> int:
        value: int = _req(data, key, int, field="stream", at=at)
        if value < 0:
            raise FormatError(
                f"expected {key} >= 0, got {value}",
                field="stream",
                at=f"{at}.{key}",
                code="wrong_value",
            )
        return value

    def _open_item(self, data: dict[str, Any], at: str) -> dict[str, Any] | None:
        """The item a delta event adds to: None when it was never added or is already done."""
        index = self._index(data, "output_index", at)
        return None if index in self.done else self.items.get(index)

    def _slot(
        self,
        item: dict[str, Any],
        key: str,
        data: dict[str, Any],
        index_key: str,
        at: str,
        default: dict[str, Any],
    ) -> dict[str, Any]:
        """The part at ``data[index_key]`` of ``item[key]``, created from ``default`` if new."""
        index = self._index(data, index_key, at)
        parts = item.setdefault(key, [])
        if not isinstance(parts, list):
            raise FormatError(
                f"expected the item's {key!r} to be an array, got {json_type(parts)}",
                field="stream",
                at=f"{at}.{index_key}",
                code="wrong_type",
            )
        if index > len(parts):
            raise FormatError(
                f"{index_key} {index} skips ahead: the item has {len(parts)} {key} parts",
                field="stream",
                at=f"{at}.{index_key}",
                code="out_of_order",
            )
        if index == len(parts):
            parts.append(dict(default))
        elif not isinstance(parts[index], dict):
            parts[index] = dict(default)
        part: dict[str, Any] = parts[index]
        return part

    def _append(self, part: dict[str, Any], key: str, data: dict[str, Any], at: str) -> None:
        delta = _req(data, "delta", str, field="stream", at=at)
        before = part.get(key)
        if isinstance(before, _Pieces):
            before.append(delta)
        else:
            part[key] = _Pieces([before if isinstance(before, str) else "", delta])

    # Handlers.

    def skeleton_event(self, data: dict[str, Any], at: str) -> None:
        self.skeleton = self._response(data, at)

    def item_added(self, data: dict[str, Any], at: str) -> None:
        index = self._index(data, "output_index", at)
        item = _opt(data, "item", dict, field="stream", at=at)
        if item is None:
            return  # announced without its item (as the SDK, wait for done / the terminal)
        _req(item, "type", str, field="stream", at=f"{at}.item")
        if index not in self.done:
            self.items[index] = item
            self.item_at[index] = f"{at}.item"

    def item_done(self, data: dict[str, Any], at: str) -> None:
        # The done item is whole (and its encrypted_content is the final one): it replaces
        # whatever was accumulated, keys in the order it gives them.
        index = self._index(data, "output_index", at)
        item = _req(data, "item", dict, field="stream", at=at)
        _req(item, "type", str, field="stream", at=f"{at}.item")
        self.items[index] = item
        self.item_at[index] = f"{at}.item"
        self.done.add(index)

    def content_part(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            part = _req(data, "part", dict, field="stream", at=at)
            slot = self._slot(item, "content", data, "content_index", at, part)
            slot.clear()
            slot.update(part)

    def summary_part(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            part = _req(data, "part", dict, field="stream", at=at)
            slot = self._slot(item, "summary", data, "summary_index", at, part)
            slot.clear()
            slot.update(part)

    def text_delta(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            part = self._slot(
                item, "content", data, "content_index", at, {"type": "output_text", "text": ""}
            )
            self._append(part, "text", data, at)

    def text_done(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            part = self._slot(
                item, "content", data, "content_index", at, {"type": "output_text", "text": ""}
            )
            part["text"] = _req(data, "text", str, field="stream", at=at)

    def refusal_delta(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            part = self._slot(
                item, "content", data, "content_index", at, {"type": "refusal", "refusal": ""}
            )
            self._append(part, "refusal", data, at)

    def annotation(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            part = self._slot(
                item, "content", data, "content_index", at, {"type": "output_text", "text": ""}
            )
            annotations = part.setdefault("annotations", [])
            if isinstance(annotations, list):
                annotations.append(_req(data, "annotation", dict, field="stream", at=at))

    def refusal_done(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            default = {"type": "refusal", "refusal": ""}
            part = self._slot(item, "content", data, "content_index", at, default)
            part["refusal"] = _req(data, "refusal", str, field="stream", at=at)

    def arguments_delta(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            self._append(item, "arguments", data, at)

    def arguments_done(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            item["arguments"] = _req(data, "arguments", str, field="stream", at=at)

    def summary_delta(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            part = self._slot(
                item, "summary", data, "summary_index", at, {"type": "summary_text", "text": ""}
            )
            self._append(part, "text", data, at)

    def summary_done(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            default = {"type": "summary_text", "text": ""}
            part = self._slot(item, "summary", data, "summary_index", at, default)
            part["text"] = _req(data, "text", str, field="stream", at=at)

    def reasoning_text_delta(self, data: dict[str, Any], at: str) -> None:
        item = self._open_item(data, at)
        if item is not None:
            part = self._slot(
                item, "content", data, "content_index", at, {"type": "reasoning_text", "text": ""}
            )
            self._append(part, "text", data, at)

    def terminal(self, data: dict[str, Any], at: str) -> None:
        self.final = self._response(data, at)

    def response_failed(self, data: dict[str, Any], at: str) -> None:
        response, rat = self._response(data, at)
        self.failed = (response, rat)
        error = response.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        self.error = code if isinstance(code, str) and code else "response.failed"

    def error_event(self, data: dict[str, Any], at: str) -> None:
        # {"type":"error","code":...,"message":...} or, newer, {"type":"error","error":{...}}.
        nested = data.get("error")
        candidates = [data.get("code")]
        if isinstance(nested, dict):
            candidates += [nested.get("type"), nested.get("code")]
        self.error = next((c for c in candidates if isinstance(c, str) and c), "error")

    HANDLERS: dict[str, Callable[[_Stream, dict[str, Any], str], None]] = {
        "response.created": skeleton_event,
        "response.in_progress": skeleton_event,
        "response.output_item.added": item_added,
        "response.output_item.done": item_done,
        "response.content_part.added": content_part,
        "response.content_part.done": content_part,
        "response.output_text.delta": text_delta,
        "response.output_text.done": text_done,
        "response.output_text.annotation.added": annotation,
        "response.refusal.delta": refusal_delta,
        "response.refusal.done": refusal_done,
        "response.function_call_arguments.delta": arguments_delta,
        "response.function_call_arguments.done": arguments_done,
        "response.reasoning_summary_part.added": summary_part,
        "response.reasoning_summary_part.done": summary_part,
        "response.reasoning_summary_text.delta": summary_delta,
        "response.reasoning_summary_text.done": summary_done,
        "response.reasoning_text.delta": reasoning_text_delta,
        "response.completed": terminal,
        "response.incomplete": terminal,
        "response.failed": response_failed,
        "error": error_event,
        # response.web_search_call.{in_progress,searching,completed} and the other *.done events
        # repeat what output_item.done carries whole: nothing to accumulate.
    }

    def feed(self, text: str, *, cancelled: bool = False) -> int:
        """Consume events up to the terminal (or error) event; the number of events read. A
        cancelled stream ends where the client stopped: an event cut off there is not read."""
        count = 0
        for event in iter_events(text):
            count += 1
            try:
                data = _event_data(event)
            except FormatError as exc:
                if cancelled and exc.code == "truncated_stream":
                    break  # the client stopped reading inside this event
                raise
            if data is None:
                continue
            at = f"$[{event.index}].data"
            expect(data, dict, field="stream", at=at)
            kind = _req(data, "type", str, field="stream", at=at)
            handler = self.HANDLERS.get(kind)
            if handler is not None:
                handler(self, data, at)
            if self.final is not None or self.error is not None:
                break  # what follows a terminal event is not part of this response
        return count


def _finish_from_terminal(state: _Stream, body: dict[str, Any], body_at: str) -> None:
    """Every item is the terminal response's item of the same identity (type and id, or call
    id), as the SDK hands it to the backend (``response.output`` of ``response.completed``):
    OpenAI serialises an item again for that event, so its ``encrypted_content`` (reasoning,
    compaction) or ``fingerprint`` (program) differs from ``output_item.done``'s, both valid,
    and an item that never got its ``done`` still says ``in_progress`` as announced. An item
    whose done form differs keeps that form as an alternate (``Message.alternates``): a history
    that sends either back is unmodified. With no such item in the terminal response, an item
    stays as its events built it."""
    output = body.get("output")
    if not state.items or not isinstance(output, list):
        return
    final: dict[tuple[Any, Any, Any], tuple[int, dict[str, Any]]] = {}
    for i, item in enumerate(output):
        if isinstance(item, dict) and isinstance(item.get("type"), str):
            final.setdefault(_identity(item), (i, item))
    for k in sorted(state.items):
        found = final.get(_identity(state.items[k]))
        if found is None:
            continue
        i, item = found
        if k in state.done and _joined(state.items[k]) != item:
            state.alternates[k] = state.items[k]
        state.items[k] = item
        state.item_at[k] = f"{body_at}.output[{i}]"


def _parse_stream(text: Any, params: Params, *, cancelled: bool = False) -> list[Message]:
    field = "stream"
    if not isinstance(text, str):
        raise FormatError(
            f"expected SSE text, got {type(text).__name__}", field=field, code="wrong_type"
        )
    state = _Stream()
    count = state.feed(text, cancelled=cancelled)
    if state.final is None and state.error is None and not cancelled:
        raise FormatError(
            f"the stream ended after {count} events without response.completed, "
            "response.incomplete, response.failed or an error event",
            field=field,
            at=f"$[{count - 1}]" if count else "$",
            code="truncated_stream",
        )
    if state.final is not None:
        body, body_at = state.final
        _check_response(body, field=field, at=body_at)
    else:
        body, body_at = state.failed or state.skeleton or ({}, "$")

    if state.final is not None:
        _finish_from_terminal(state, body, body_at)
    items = [_joined(state.items[k]) for k in sorted(state.items)]
    where = [state.item_at[k] for k in sorted(state.items)]
    if not items and state.final is not None:
        # Nothing streamed item by item: the terminal response is all there is.
        final_output = _opt(body, "output", list, field=field, at=body_at) or []
        items = list(final_output)
        where = [f"{body_at}.output[{i}]" for i in range(len(items))]
    output = [
        _message(item, _serialise(item, field=field, at=at), field=field, at=at)
        for item, at in zip(items, where, strict=True)
    ]
    for n, k in enumerate(sorted(state.items) if state.items else ()):
        done = state.alternates.get(k)
        if done is not None:
            alternate = _serialise(done, field=field, at=where[n])
            output[n] = replace(output[n], alternates=(alternate,))
    _fill_params(params, body, items, output, field=field, at=body_at)
    if state.error is not None:
        params.stream_error = state.error
        params.truncated = True
    if state.failed is None and state.final is None:
        params.stop_reason = None  # the skeleton's "in_progress" is no stop reason
    return output


class OpenAIResponses(Format):
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
        history, params, full = _parse_request(request)
        if response is not None:
            output = _parse_response(response, params)
        else:
            output = _parse_stream(stream, params, cancelled=cancelled)
        return ParsedExchange(history=history, output=output, params=params, history_is_full=full)

    def message_blocks(self, raw: str) -> tuple[Block, ...]:
        """The blocks of one stored item (an output item is a valid input item; a string input
        was stored as its JSON string literal)."""
        text = (
            '{"input":' + raw + "}" if raw.lstrip().startswith('"') else '{"input":[' + raw + "]}"
        )
        return _parse_request(text)[0][0].blocks

    def reasoning(self, message: Any) -> Iterator[Trace]:
        """A ``reasoning`` item: each ``summary_text`` part, each ``reasoning_text`` content
        part; an item with neither is MISSING (the review may fetch its summary from the
        provider, whose response items are read the same way)."""
        if not isinstance(message, dict) or message.get("type") != "reasoning":
            return
        raw_id = message.get("id")
        item_id = raw_id if isinstance(raw_id, str) else ""
        found = False
        for text in _part_texts(message.get("summary"), "summary_text"):
            found = True
            yield Trace(TraceKind.SUMMARY, text, item_id=item_id)
        for text in _part_texts(message.get("content"), "reasoning_text"):
            found = True
            yield Trace(TraceKind.REASONING_TEXT, text, item_id=item_id)
        if not found:
            yield Trace(TraceKind.SUMMARY, withheld=Withheld.MISSING, item_id=item_id)


def _part_texts(parts: Any, part_type: str) -> Iterator[str]:
    if not isinstance(parts, list):
        return
    for part in parts:
        if isinstance(part, dict) and part.get("type") == part_type:
            text = part.get("text")
            if isinstance(text, str) and text:
                yield text
