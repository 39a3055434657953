"""A ConverseStream answer: its eventstream frames (``eventstream.py``) accumulated into one
Converse message, as the AWS SDKs' users build it (no AWS SDK accumulates a ConverseStream
itself; this is the form the official agent SDK, strands-agents, and the AI SDK's provider
send back).

Events: ``messageStart`` {role}; ``contentBlockStart`` {contentBlockIndex, start: {toolUse:
{toolUseId, name, type?}} | {toolResult: {toolUseId, type?, status?}} | {image: {format}}};
``contentBlockDelta`` {contentBlockIndex, delta: {text} | {toolUse: {input}} | {toolResult:
[{text}|{json}]} | {reasoningContent: {text}|{signature}|{redactedContent}} | {citation: {...}}
| {image: {...}}}; ``contentBlockStop``; ``messageStop`` {stopReason}; ``metadata`` {usage,
metrics, trace} (before or after ``messageStop``). Every event may carry the padding member
``p``, never read. A text or reasoning block has no start event: its first delta opens it. A
delta that does not fit the block its index opened (text on a ``toolUse``) changes nothing.

The blocks, by index: text ``{"text"}`` (with citation deltas: ``{"citationsContent":
{"content": [{"text"}], "citations": [...]}}``); reasoning ``{"reasoningContent":
{"reasoningText": {"text", "signature"}}}`` or ``{"reasoningContent": {"redactedContent"}}``;
``{"toolUse": {toolUseId, name, type?, input}}`` (input parsed once the block ends; cut off:
``{}`` in the message, the partial text in the Block, ``truncated``); ``{"toolResult":
{toolUseId, type?, status?, content}}`` (text pieces in a row joined); any other block kept as
its start and deltas gave it (hidden).

An exception frame (``throttlingException``, ``modelStreamErrorException``...) or an error frame
ends the stream: what arrived is kept, ``stream_error`` names it (an error finish). A stream
that ends without ``messageStop`` or an exception is refused (``truncated_stream``) unless the
client cancelled it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ...blocks import Message, Params
from ..base import (
    FormatError,
    byte_at,
    compact_checked,
    expect,
    has_surrogate,
    join_pieces,
    optional,
    required,
    strict_loads,
    take_answer,
)
from .content import apply_stop_reason, apply_trace, apply_usage, block
from .eventstream import read_frames
from .profile import NOT_A_TYPE

FIELD = "stream_base64"
# delta member -> the block it belongs to
DELTA_BLOCK = {
    "text": "text",
    "citation": "text",
    "reasoningContent": "reasoningContent",
    "toolUse": "toolUse",
    "toolResult": "toolResult",
}


def member(obj: dict[str, Any]) -> str:
    """The union member of a start or a delta ("" for none)."""
    return next((str(k) for k in obj if k not in NOT_A_TYPE), "")


class _Block:
    __slots__ = ("at", "citations", "json", "kind", "pieces", "redacted", "signature", "start")

    def __init__(self, kind: str, start: dict[str, Any], at: str) -> None:
        self.kind = kind
        self.start = {k: v for k, v in start.items() if k != "p"}
        self.at = at
        self.pieces: list[Any] = []  # text, reasoning text, tool result items, other deltas
        self.signature: str | None = None
        self.redacted: list[str] = []
        self.json: list[str] = []
        self.citations: list[Any] = []


class _Stream:
    def __init__(self) -> None:
        self.out = Params()
        self.blocks: dict[int, _Block] = {}
        self.cut: dict[int, str] = {}
        self.done = False  # messageStop seen

    def event(self, name: str, data: dict[str, Any], at: str) -> None:
        content = ("contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop")
        if self.done and name in content:
            raise FormatError(f"{name} after messageStop", field=FIELD, at=at, code="after_stop")
        if name == "contentBlockStart":
            index = required(data, "contentBlockIndex", int, field=FIELD, at=at)
            start = required(data, "start", dict, field=FIELD, at=at)
            kind = member(start)
            if index in self.blocks:
                raise FormatError(
                    f"contentBlockStart for index {index}, which is already open",
                    field=FIELD,
                    at=f"{at}.contentBlockIndex",
                    code="duplicate_index",
                )
            value = expect(start.get(kind, {}), dict, field=FIELD, at=f"{at}.start.{kind}")
            # An empty start ({"start": {}}, before a text block) names no type: the first
            # delta does.
            self.blocks[index] = _Block(kind, value, f"{at}.start")
        elif name == "contentBlockDelta":
            self._delta(data, at)
        elif name == "messageStop":
            apply_stop_reason(optional(data, "stopReason", str, field=FIELD, at=at), self.out)
            self.done = True
        elif name == "metadata":
            usage = optional(data, "usage", dict, field=FIELD, at=at)
            if usage is not None:
                apply_usage(usage, self.out, field=FIELD, at=f"{at}.usage")
            apply_trace(data, self.out)
        # messageStart, contentBlockStop and events newer than this code: nothing to keep.

    def _delta(self, data: dict[str, Any], at: str) -> None:
        index = required(data, "contentBlockIndex", int, field=FIELD, at=at)
        delta = required(data, "delta", dict, field=FIELD, at=at)
        kind = member(delta)
        value = delta.get(kind)
        at = f"{at}.delta.{kind}"
        wanted = DELTA_BLOCK.get(kind, kind)
        open_block = self.blocks.get(index)
        if open_block is None:
            open_block = self.blocks[index] = _Block(wanted, {}, at)
        if not open_block.kind and kind:
            open_block.kind = wanted
        if open_block.kind != wanted or not kind:
            return  # does not fit the block its index opened: nothing changes
        if kind == "text":
            open_block.pieces.append(expect(value, str, field=FIELD, at=at))
        elif kind == "citation":
            open_block.citations.append(
                {k: v for k, v in expect(value, dict, field=FIELD, at=at).items() if k != "p"}
            )
        elif kind == "reasoningContent":
            body = expect(value, dict, field=FIELD, at=at)
            if "text" in body:
                open_block.pieces.append(required(body, "text", str, field=FIELD, at=at))
            if "signature" in body:
                open_block.signature = required(body, "signature", str, field=FIELD, at=at)
            if "redactedContent" in body:
                open_block.redacted.append(
                    required(body, "redactedContent", str, field=FIELD, at=at)
                )
        elif kind == "toolUse":
            body = expect(value, dict, field=FIELD, at=at)
            open_block.json.append(required(body, "input", str, field=FIELD, at=at))
        elif kind == "toolResult":
            items = expect(value, list, field=FIELD, at=at)
            open_block.pieces.extend(i for i in items if isinstance(i, dict))
        else:
            open_block.pieces.append(value)

    # -- the message --

    def built(self, index: int, b: _Block) -> dict[str, Any]:
        if b.kind == "text":
            text = join_pieces(b.pieces)
            if b.citations:
                return {"citationsContent": {"content": [{"text": text}], "citations": b.citations}}
            return {"text": text}
        if b.kind == "reasoningContent":
            if b.redacted:
                return {"reasoningContent": {"redactedContent": _joined_base64(b.redacted)}}
            body: dict[str, Any] = {"text": join_pieces(b.pieces)}
            if b.signature is not None:
                body["signature"] = b.signature
            return {"reasoningContent": {"reasoningText": body}}
        if b.kind == "toolUse":
            return {"toolUse": {**b.start, "input": self._input(index, b)}}
        if b.kind == "toolResult":
            return {"toolResult": {**b.start, "content": _result_items(b.pieces)}}
        merged = dict(b.start)
        for piece in b.pieces:
            if isinstance(piece, dict):
                merged.update({k: v for k, v in piece.items() if k != "p"})
        return {b.kind: merged}

    def _input(self, index: int, b: _Block) -> Any:
        partial = join_pieces(b.json)
        if not partial.strip():
            return {}
        try:
            value = strict_loads(partial)
        except json.JSONDecodeError:
            self.cut[index] = partial  # cut off (maxTokens): {} stored, the text in the Block
            self.out.truncated = True
            return {}
        except ValueError as exc:  # NaN, 1e400, an integer longer than int() reads
            raise FormatError(
                f"tool input of block {index}: {exc}; stored JSON cannot hold it",
                field=FIELD,
                at=b.at,
                code="not_json",
            ) from None
        except RecursionError:
            raise FormatError(
                f"tool input of block {index} nested too deep",
                field=FIELD,
                at=b.at,
                code="too_deep",
            ) from None
        if has_surrogate(json.dumps(value, ensure_ascii=False)):
            raise FormatError(
                f"tool input of block {index} holds a lone UTF-16 surrogate",
                field=FIELD,
                at=b.at,
                code="bad_unicode",
            )
        return value

    def message(self) -> Message:
        # A block opened by an empty start and never given a delta has no type: nothing of it.
        order = [i for i in sorted(self.blocks) if self.blocks[i].kind]
        content = [self.built(i, self.blocks[i]) for i in order]
        raw = compact_checked(
            {"role": "assistant", "content": content},
            field=FIELD,
            at="$",
            unicode_code="bad_unicode",
        )
        blocks = tuple(
            block(value, field=FIELD, at=self.blocks[i].at, cut_input=self.cut.get(i))
            for i, value in zip(order, content, strict=True)
        )
        return Message(role="assistant", raw=raw, blocks=blocks)


def _joined_base64(pieces: list[str]) -> str:
    """Redacted reasoning sent in more than one delta: the bytes joined, base64 again."""
    if len(pieces) == 1:
        return pieces[0]
    try:
        return base64.b64encode(b"".join(base64.b64decode(p) for p in pieces)).decode()
    except (binascii.Error, ValueError):
        return "".join(pieces)


def _result_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A streamed tool result's items: text pieces in a row are one text item."""
    out: list[dict[str, Any]] = []
    for item in items:
        item = {k: v for k, v in item.items() if k != "p"}
        if list(item) == ["text"] and out and list(out[-1]) == ["text"]:
            out[-1] = {"text": str(out[-1]["text"]) + str(item["text"])}
        else:
            out.append(item)
    return out


def parse_stream(data: bytes, params: Params, *, cancelled: bool = False) -> list[Message]:
    frames, used = read_frames(data, field=FIELD, partial=cancelled)
    state = _Stream()
    ended = False
    for frame in frames:
        at = byte_at(frame.offset)
        event = frame.data(field=FIELD)
        if frame.kind != "event":
            state.out.stream_error = frame.name
            state.out.truncated = True
            ended = True
            break  # what follows an exception is not trusted
        payload = expect(event[frame.name], dict, field=FIELD, at=at)
        state.event(frame.name, payload, f"{at}.{frame.name}")
    if not (state.done or ended or cancelled):
        raise FormatError(
            f"the stream ended at byte {used} without messageStop",
            field=FIELD,
            at=byte_at(used),
            code="truncated_stream",
        )
    take_answer(params, state.out)
    if not state.blocks and (ended or cancelled) and state.out.stop_reason is None:
        return []
    return [state.message()]
