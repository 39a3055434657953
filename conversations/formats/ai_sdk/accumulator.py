"""The stream accumulator: ``createStreamingUIMessageState`` + ``processUIMessageStream`` of ai 6.0,
chunk by chunk (the rules are in ``parser.py``'s docstring and docs/formats.md).

One piece: every handler mutates the one message state the SDK keeps (parts, the active text and
reasoning ids, the partial tool calls, the step boundary), and the module is reviewed handler by
handler against the SDK's single ``switch``; split, the state would be shared across modules.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from ..base import (
    FormatError,
    NotFinite,
    join_pieces,
)
from .js import UNDEF, nullish, parse_partial_json, required, want
from .parts import is_tool


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
            return parse_partial_json(text)
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


class Stop(Exception):
    """The browser stops reading here (an ``error`` chunk or ``[DONE]``)."""


def _get(chunk: dict[str, Any], key: str) -> Any:
    """``chunk.<key>``: the value, ``None`` for a JSON null, ``UNDEF`` when absent."""
    return chunk.get(key, UNDEF)


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


class Accumulator:
    """``createStreamingUIMessageState`` + ``processUIMessageStream`` of ai 6.0 (see
    docs/formats.md for the exact version), as ``useChat`` runs them: chunk by chunk, the same
    keys set in the same order, JavaScript's ``undefined`` played by ``UNDEF``."""

    def __init__(self, base: dict[str, Any] | None) -> None:
        if base is None:
            base = {"id": UNDEF, "metadata": UNDEF, "role": "assistant", "parts": []}
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
            if not (isinstance(part, dict) and is_tool(part)):
                continue
            call_id = part.get("toolCallId")
            if part.get("state") != "input-streaming" or not isinstance(call_id, str):
                continue
            raw = part.get("rawInput")
            dynamic = part["type"] == "dynamic-tool"
            self.partial_calls[call_id] = _PartialCall(
                tool_name=part.get("toolName") if dynamic else part["type"][5:],
                dynamic=dynamic,
                title=part.get("title", UNDEF),
                input_encoding=part.get("inputEncoding", UNDEF),
                tool_metadata=part.get("toolMetadata", UNDEF),
                deltas=[raw if isinstance(raw, str) else ""],
            )

    def _push(self, part: dict[str, Any]) -> None:
        self.parts.append(part)
        self._index(part, len(self.parts) - 1)

    def _at(self, key: str | None = None) -> str:
        return f"$[{self.i}]" if key is None else f"$[{self.i}].{key}"

    def _req(self, chunk: dict[str, Any], key: str, kind: type, what: str) -> Any:
        return required(chunk, key, kind, what, fld="stream", at=self._at())

    def _opt(self, chunk: dict[str, Any], key: str, kind: type, what: str) -> Any:
        """The value; ``UNDEF`` when absent, ``None`` for a JSON null (as a JS chunk has it)."""
        if chunk.get(key) is None:
            return chunk.get(key, UNDEF)
        return want(chunk[key], kind, what, fld="stream", at=self._at(key))

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
        input: Any = UNDEF,
        output: Any = UNDEF,
        raw_input: Any = UNDEF,
        error_text: Any = UNDEF,
        input_encoding: Any = UNDEF,
        provider_executed: Any = UNDEF,
        preliminary: Any = UNDEF,
        provider_metadata: Any = UNDEF,
        title: Any = UNDEF,
        tool_metadata: Any = UNDEF,
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
            if not nullish(input_encoding):
                part["inputEncoding"] = input_encoding
            else:
                part.pop("inputEncoding", None)
            part["preliminary"] = preliminary
            if title is not UNDEF:
                part["title"] = title
            if tool_metadata is not UNDEF:
                part["toolMetadata"] = tool_metadata
            if nullish(provider_executed):
                provider_executed = part.get("providerExecuted", UNDEF)
            part["providerExecuted"] = provider_executed
            if not nullish(provider_metadata):
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
            if not nullish(input_encoding):
                new["inputEncoding"] = input_encoding
            new.update(output=output, errorText=error_text, preliminary=preliminary)
            new.update(providerExecuted=provider_executed, title=title)
            if tool_metadata is not UNDEF:
                new["toolMetadata"] = tool_metadata
        else:
            new = {"type": f"tool-{tool_name}", "toolCallId": call_id, "state": state}
            new["title"] = title
            if tool_metadata is not UNDEF:
                new["toolMetadata"] = tool_metadata
            new["input"] = input
            if not nullish(input_encoding):
                new["inputEncoding"] = input_encoding
            new.update(output=output, rawInput=raw_input, errorText=error_text)
            new.update(providerExecuted=provider_executed, preliminary=preliminary)
        if not nullish(provider_metadata):
            new[metadata_key] = provider_metadata
        self._push(new)

    def _update_metadata(self, metadata: Any) -> None:
        if nullish(metadata):
            return
        current = self.message.get("metadata", UNDEF)
        self.message["metadata"] = (
            metadata if nullish(current) else _merge_objects(current, metadata)
        )

    # -- chunks

    def feed(self, index: int, chunk: Any) -> None:
        self.i = index
        chunk = want(chunk, dict, "a UI message chunk object", fld="stream", at=self._at())
        ctype = self._req(chunk, "type", str, "the chunk type, a string")
        handler = HANDLERS.get(ctype)
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
            value = part.get("providerMetadata", UNDEF)
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
        if not nullish(signature):
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
        if nullish(tool_metadata):
            tool_metadata = part.get("toolMetadata", UNDEF)
        self._update(
            dynamic,
            tool_name=part.get("toolName", UNDEF) if dynamic else part["type"][5:],
            call_id=call_id,
            state=state,
            input=part.get("input", UNDEF),
            provider_executed=executed,
            provider_metadata=_get(chunk, "providerMetadata"),
            title=part.get("title", UNDEF),
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
            fields["raw_input"] = part.get("rawInput", UNDEF)
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
        if not nullish(message_id):
            self.message["id"] = message_id
        self._update_metadata(_get(chunk, "messageMetadata"))

    def _on_finish(self, chunk: dict[str, Any]) -> None:
        reason = self._opt(chunk, "finishReason", str, "the finish reason, a string")
        if not nullish(reason):
            self.finish_reason = reason
        self._update_metadata(_get(chunk, "messageMetadata"))
        self.finished = True

    def _on_message_metadata(self, chunk: dict[str, Any]) -> None:
        self._update_metadata(_get(chunk, "messageMetadata"))

    def _on_error(self, chunk: dict[str, Any]) -> None:
        self.stream_error = "error"
        raise Stop

    def _on_abort(self, chunk: dict[str, Any]) -> None:
        self.stream_error = self.stream_error or "abort"

    def _on_data(self, chunk: dict[str, Any]) -> None:
        data_id = self._opt(chunk, "id", str, "the data part id, a string")
        if chunk.get("transient") not in (None, False, 0, ""):
            return  # transient data parts are not added to the message (SDK)
        if not nullish(data_id):
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
            parts.append({k: v for k, v in part.items() if v is not UNDEF})
        message = {k: v for k, v in self.message.items() if v is not UNDEF}
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
HANDLERS = {
    "text-start": Accumulator._on_text_start,
    "text-delta": Accumulator._on_text_delta,
    "text-end": Accumulator._on_text_end,
    "reasoning-start": Accumulator._on_reasoning_start,
    "reasoning-delta": Accumulator._on_reasoning_delta,
    "reasoning-end": Accumulator._on_reasoning_end,
    "file": Accumulator._on_file,
    "source-url": Accumulator._on_source_url,
    "source-document": Accumulator._on_source_document,
    "tool-input-start": Accumulator._on_tool_input_start,
    "tool-input-delta": Accumulator._on_tool_input_delta,
    "tool-input-available": Accumulator._on_tool_input_available,
    "tool-input-error": Accumulator._on_tool_input_error,
    "tool-approval-request": Accumulator._on_tool_approval_request,
    "tool-output-denied": Accumulator._on_tool_output_denied,
    "tool-output-available": Accumulator._on_tool_output_available,
    "tool-output-error": Accumulator._on_tool_output_error,
    "start-step": Accumulator._on_start_step,
    "finish-step": Accumulator._on_finish_step,
    "start": Accumulator._on_start,
    "finish": Accumulator._on_finish,
    "message-metadata": Accumulator._on_message_metadata,
    "error": Accumulator._on_error,
    "abort": Accumulator._on_abort,
}


# ---------------------------------------------------------------------------------------------
