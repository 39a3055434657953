"""The inbound filter: raw SSE text of a provider stream in, visible events out (DESIGN section 10).

One filter per format, fed chunks of raw SSE text cut anywhere (mid-event, mid-line). Each keeps
the map the stored accumulator keeps: which block an index (an output index, a part id, a
choice's key) opened, and of which type; the type comes from the event that opens the block,
never from a delta's shape, and its class from ``blocks.classify``, the one classification the
stored formats declare. The event names and delta tables are the format modules' own
(``anthropic._STRING_DELTAS``, ``openai_responses._Stream.HANDLERS``,
``openai_chat._STRING_DELTAS``, ``ai_sdk._HANDLERS``), so a delta the stored accumulator would
not put in a block's text is not published either. The SSE framing is ``formats/sse.py``'s: the
complete events of the text so far go through ``iter_events``, the rest waits.

Events (plain dicts, JSON):

- ``{"type": "text", "block": key, "text": ...}``: visible text, redacted, held back
  (``holdback.py``) so a finding cut across deltas is never published in part;
- ``{"type": "thinking", "state": "started" | "progress" | "stopped", "block": key,
  "seconds": s, "tokens": n}``: the model deliberates; only its duration and a token estimate
  (characters / 4) leave, never a character of it;
- ``{"type": "tool", "state": "started", "block": key, "name": ...}`` and
  ``{"type": "tool", "state": "result", "block": key, "status": "ok" | "error" | "denied"}``;
- ``{"type": "reset"}``: the provider spliced a new generation in (a second ``message_start``):
  what was shown of this exchange is void;
- ``{"type": "finished", "reason": ...}``, ``{"type": "error", "code": ...}``.

The state is a JSON value in two parts: ``public`` (types, classes, counts, times: what
``live/state.py`` may keep in Redis as it is) and ``secret`` (the SSE text not yet framed, the
visible text held back: kept only encrypted). Thinking text is in neither once its event is read:
only its length is counted.

To add a format: a subclass of ``Filter`` with ``format`` and ``event(data)`` reading one event's
JSON, registered in ``FILTERS``; its tests run every recorded stream of the format
(``tests/live/test_filters.py``) and ``static/console/stream-filter.js`` gets the same rules.

Pure: no Django, no Redis.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from ..blocks import BlockClass, classify
from ..formats import ai_sdk, anthropic, openai_chat, openai_responses
from ..formats.sse import iter_events
from . import holdback

Event = dict[str, Any]

# A blank line ends an SSE event; a CR at the very end may be the first half of a CRLF.
_EVENT_END = re.compile(r"(?:\r\n|\r(?!$)|\n)(?:\r\n|\r(?!$)|\n)")
# Thinking progress is published each time the estimate grows by this many tokens.
PROGRESS_TOKENS = 50


def _tokens(chars: int) -> int:
    return (chars + 3) // 4


class Filter:
    format: ClassVar[str]

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.public: dict[str, Any] = state.get("public") or {
            "blocks": {},  # key -> {"type", "cls", "chars", "t0", "done", "name"?}
            "order": 0,  # counter for keys a format does not give
            "finished": False,
            "reason": None,
            "first_text": None,  # seconds from the first chunk to the first visible text
            "thinking_seconds": 0.0,
            "t0": None,
        }
        self.secret: dict[str, Any] = state.get("secret") or {"tail": "", "pending": {}}
        self._now = 0.0
        self._out: list[Event] = []

    def state(self) -> dict[str, Any]:
        return {"public": self.public, "secret": self.secret}

    # -- input --

    def feed(self, chunk: str, *, now: float) -> list[Event]:
        """The visible events of the raw SSE text ``chunk`` (which continues the text before)."""
        self._now = now
        self._out = []
        if self.public["t0"] is None:
            self.public["t0"] = now
        text = self.secret["tail"] + chunk
        end = 0
        for m in _EVENT_END.finditer(text):
            end = m.end()
        self.secret["tail"] = text[end:]
        if end:
            for sse in iter_events(text[:end]):
                if self.public["finished"]:
                    break
                self._data(sse.data)
        return self._out

    def close(self, *, now: float) -> list[Event]:
        """The end of the stream (the exchange arrived, or it went idle): what was held leaves,
        open thinking stops, the tail (an event cut off) is dropped unread."""
        self._now = now
        self._out = []
        if self.secret["tail"].strip() and not self.public["finished"]:
            for sse in iter_events(self.secret["tail"]):
                self._data(sse.data)  # a last event without its blank line
        self.secret["tail"] = ""
        self._end_all()
        return self._out

    def _data(self, data: str) -> None:
        if data.strip() == "[DONE]":
            self._finish(self.public["reason"] or "stop")
            return
        try:
            value = json.loads(data)
        except ValueError:
            return  # not JSON: the stored exchange will say why; nothing to show
        if isinstance(value, dict):
            self.event(value)

    def event(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- what the formats call --

    def _key(self) -> str:
        self.public["order"] += 1
        return f"k{self.public['order']}"

    def open(self, key: str, btype: str, *, name: str | None = None) -> None:
        blocks = self.public["blocks"]
        if key in blocks and not blocks[key]["done"]:
            return
        cls = classify(self.format, btype)
        blocks[key] = {"type": btype, "cls": cls.value, "chars": 0, "t0": self._now, "done": False}
        if cls is BlockClass.NEVER or cls is BlockClass.UNKNOWN:
            if cls is BlockClass.NEVER:
                self._emit(type="thinking", state="started", block=key, seconds=0.0, tokens=0)
        elif cls is BlockClass.AUDIT:
            blocks[key]["name"] = name
            self._emit(type="tool", state="started", block=key, name=name or btype)

    def cls(self, key: str) -> BlockClass | None:
        block = self.public["blocks"].get(key)
        return None if block is None or block["done"] else BlockClass(block["cls"])

    def text(self, key: str, piece: str) -> None:
        """A piece of the text of block ``key``: published only if the block is VISIBLE."""
        if self.cls(key) is not BlockClass.VISIBLE or not piece:
            return
        pending = self.secret["pending"]
        published, pending[key] = holdback.hold(pending.get(key, ""), piece)
        self._publish(key, published)

    def count(self, key: str, piece: str) -> None:
        """A piece of the text of a NEVER block: counted, and forgotten."""
        block = self.public["blocks"].get(key)
        if block is None or block["done"] or block["cls"] != BlockClass.NEVER.value:
            return
        before = _tokens(block["chars"]) // PROGRESS_TOKENS
        block["chars"] += len(piece)
        if _tokens(block["chars"]) // PROGRESS_TOKENS > before:
            self._emit(
                type="thinking",
                state="progress",
                block=key,
                seconds=self._seconds(block),
                tokens=_tokens(block["chars"]),
            )

    def end(self, key: str, *, status: str | None = None) -> None:
        block = self.public["blocks"].get(key)
        if block is None or block["done"]:
            return
        block["done"] = True
        cls = BlockClass(block["cls"])
        if cls is BlockClass.VISIBLE:
            self._publish(key, holdback.flush(self.secret["pending"].pop(key, "")))
        elif cls is BlockClass.NEVER:
            seconds = self._seconds(block)
            self.public["thinking_seconds"] = round(self.public["thinking_seconds"] + seconds, 3)
            self._emit(
                type="thinking",
                state="stopped",
                block=key,
                seconds=seconds,
                tokens=_tokens(block["chars"]),
            )
        elif cls is BlockClass.AUDIT and status is not None:
            self._emit(type="tool", state="result", block=key, status=status)

    def result(self, key: str, status: str) -> None:
        """A tool's result arrived for the call opened as ``key`` (a block of its own or not)."""
        block = self.public["blocks"].get(key)
        if block is not None and block["cls"] == BlockClass.AUDIT.value:
            block["done"] = True
            self._emit(type="tool", state="result", block=key, status=status)

    def reset(self) -> None:
        self.public["blocks"] = {}
        self.secret["pending"] = {}
        self._emit(type="reset")

    def _finish(self, reason: str | None) -> None:
        if self.public["finished"]:
            return
        self._end_all()
        self.public["finished"] = True
        self._emit(type="finished", reason=reason or "stop")

    def _error(self, code: str) -> None:
        if self.public["finished"]:
            return
        self._end_all()
        self.public["finished"] = True
        self._emit(type="error", code=code)

    def _end_all(self) -> None:
        for key in list(self.public["blocks"]):
            self.end(key)

    # -- output --

    def _seconds(self, block: dict[str, Any]) -> float:
        return round(max(0.0, self._now - block["t0"]), 3)

    def _publish(self, key: str, text: str) -> None:
        if not text:
            return
        if self.public["first_text"] is None:
            self.public["first_text"] = round(self._now - self.public["t0"], 3)
        self._emit(type="text", block=key, text=text)

    def _emit(self, **event: Any) -> None:
        self._out.append(event)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class AnthropicFilter(Filter):
    """``message_start`` / ``content_block_start`` (index -> type) / ``content_block_delta``
    (through ``anthropic._STRING_DELTAS``: only a delta whose target is the block's key of a
    VISIBLE type is text) / ``content_block_stop`` / ``message_delta`` / ``message_stop`` /
    ``error``."""

    format = anthropic.FORMAT
    # delta type -> the block key it extends, for the deltas that append (text, thinking).
    _APPENDS = {
        d: (src, key) for d, (src, key, _t, append) in anthropic._STRING_DELTAS.items() if append
    }

    def event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind not in anthropic._Stream.HANDLERS:
            return
        if kind == "message_start":
            if self.public["blocks"]:
                self.reset()
            message = data.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for i, block in enumerate(content if isinstance(content, list) else ()):
                self._start(str(i), block)
        elif kind == "content_block_start":
            index = _int(data.get("index"))
            if index is not None:
                self._start(str(index), data.get("content_block"))
        elif kind == "content_block_delta":
            index = _int(data.get("index"))
            delta = data.get("delta")
            if index is None or not isinstance(delta, dict):
                return
            rule = self._APPENDS.get(delta.get("type"))  # type: ignore[arg-type]
            key = str(index)
            block = self.public["blocks"].get(key)
            if rule is None or block is None:
                return
            source, target = rule
            piece = _str(delta.get(source)) or ""
            if target == "text":
                self.text(key, piece)
            else:
                self.count(key, piece)
        elif kind == "content_block_stop":
            index = _int(data.get("index"))
            if index is not None:
                self.end(str(index))
        elif kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and _str(delta.get("stop_reason")):
                self.public["reason"] = delta["stop_reason"]
        elif kind == "message_stop":
            self._finish(self.public["reason"])
        elif kind == "error":
            error = data.get("error")
            code = _str(error.get("type")) if isinstance(error, dict) else None
            self._error(code or "error")

    def _start(self, key: str, block: Any) -> None:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return
        btype = block["type"]
        cls = classify(self.format, btype)
        if cls is BlockClass.AUDIT and not btype.endswith("tool_use"):
            # a result that arrives whole (web_search_tool_result...): its status at once
            status = "error" if anthropic._is_error_content(block.get("content")) else "ok"
            if block.get("is_error") is True:
                status = "error"
            self.open(key, btype, name=_str(block.get("name")) or btype)
            self.end(key, status=status)
            return
        self.open(key, btype, name=_str(block.get("name")))
        if cls is BlockClass.VISIBLE:
            self.text(key, _str(block.get("text")) or "")


class ResponsesFilter(Filter):
    """OpenAI Responses: ``output_item.added`` opens item ``output_index`` with its type; a
    ``message`` item's content parts are the VISIBLE blocks (``content_part.added`` gives their
    type); text arrives in the events the stored accumulator reads as text and refusal deltas."""

    format = openai_responses.FORMAT
    _H = openai_responses._Stream.HANDLERS
    _TEXT = frozenset(
        k
        for k, v in _H.items()
        if v in (openai_responses._Stream.text_delta, openai_responses._Stream.refusal_delta)
    )
    _THINK = frozenset(
        k
        for k, v in _H.items()
        if v
        in (openai_responses._Stream.summary_delta, openai_responses._Stream.reasoning_text_delta)
    )
    _PART_END = frozenset(
        k
        for k, v in _H.items()
        if v in (openai_responses._Stream.text_done, openai_responses._Stream.refusal_done)
    )

    def event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind not in self._H:
            return
        oi = _int(data.get("output_index"))
        if kind == "response.output_item.added":
            item = data.get("item")
            if oi is None or not isinstance(item, dict) or not _str(item.get("type")):
                return
            itype = item["type"]
            if itype == "message":
                self.public.setdefault("messages", []).append(oi)
            else:
                self.open(str(oi), itype, name=_str(item.get("name")) or itype)
        elif kind == "response.output_item.done":
            item = data.get("item")
            if oi is None or not isinstance(item, dict):
                return
            if item.get("type") == "message":
                prefix = f"{oi}."
                for key in list(self.public["blocks"]):
                    if key.startswith(prefix):
                        self.end(key)
                return
            status = item.get("status")
            self.end(str(oi), status="error" if status in ("failed", "incomplete") else "ok")
        elif kind == "response.content_part.added":
            part = data.get("part")
            ci = _int(data.get("content_index"))
            if oi is None or ci is None or not isinstance(part, dict):
                return
            if oi in self.public.get("messages", ()) and _str(part.get("type")):
                self.open(f"{oi}.{ci}", part["type"])
        elif kind in self._TEXT:
            ci = _int(data.get("content_index"))
            if oi is not None and ci is not None:
                self.text(f"{oi}.{ci}", _str(data.get("delta")) or "")
        elif kind in self._THINK:
            if oi is not None:
                self.count(str(oi), _str(data.get("delta")) or "")
        elif kind in self._PART_END or kind == "response.content_part.done":
            ci = _int(data.get("content_index"))
            if oi is not None and ci is not None:
                self.end(f"{oi}.{ci}")
        elif kind in ("response.completed", "response.incomplete"):
            response = data.get("response")
            reason = None
            if isinstance(response, dict):
                details = response.get("incomplete_details")
                reason = _str(details.get("reason")) if isinstance(details, dict) else None
                reason = reason or _str(response.get("status"))
            self._finish(reason or "completed")
        elif kind == "response.failed":
            response = data.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            code = _str(error.get("code")) if isinstance(error, dict) else None
            self._error(code or "response.failed")
        elif kind == "error":
            self._error(_str(data.get("code")) or "error")


class ChatFilter(Filter):
    """Chat Completions: choice 0's delta keys are the blocks (``content``, ``refusal``, the
    reasoning keys of ``openai_chat._STRING_DELTAS``; their class from ``classify``), tool calls
    by their ``index``; a ``finish_reason`` or ``[DONE]`` ends it."""

    format = openai_chat.FORMAT

    def event(self, data: dict[str, Any]) -> None:
        if data.get("error") is not None:
            error = data["error"]
            code = None
            if isinstance(error, dict):
                code = _str(error.get("type")) or _str(error.get("code"))
            self._error(code or "error")
            return
        choices = data.get("choices")
        for k, choice in enumerate(choices if isinstance(choices, list) else ()):
            if not isinstance(choice, dict):
                continue
            index = _int(choice.get("index"))
            if (k if index is None else index) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(delta)
            finish = _str(choice.get("finish_reason"))
            if finish is not None:
                self._finish(finish)

    def _delta(self, delta: dict[str, Any]) -> None:
        for key, value in delta.items():
            if key in openai_chat._STRING_DELTAS and isinstance(value, str):
                cls = classify(self.format, key)
                if cls is not BlockClass.NEVER:
                    self._stop_thinking()
                self.open(key, key)
                if cls is BlockClass.VISIBLE:
                    self.text(key, value)
                else:
                    self.count(key, value)
            elif key == "tool_calls" and isinstance(value, list):
                self._stop_thinking()
                for position, call in enumerate(value):
                    if not isinstance(call, dict):
                        continue
                    index = _int(call.get("index"))
                    ckey = f"tool{position if index is None else index}"
                    function = call.get("function")
                    name = _str(function.get("name")) if isinstance(function, dict) else None
                    if ckey not in self.public["blocks"]:
                        self.open(ckey, "tool_calls", name=name)

    def _stop_thinking(self) -> None:
        for key in openai_chat._REASONING_KEYS:
            self.end(key)


class AiSdkFilter(Filter):
    """The AI SDK UI stream: ``text-start`` / ``reasoning-start`` open a part by ``id`` (its type
    from the chunk that opens it, as ``ai_sdk._HANDLERS`` reads it), the deltas and ends name that
    id; tool parts by ``toolCallId``; ``finish`` / ``[DONE]``, ``error``, ``abort``."""

    format = ai_sdk.FORMAT
    _OPENS = {"text-start": "text", "reasoning-start": "reasoning"}
    _DELTAS = {"text-delta": "text", "reasoning-delta": "reasoning"}
    _ENDS = {"text-end": "text", "reasoning-end": "reasoning"}
    _RESULTS = {
        "tool-output-available": "ok",
        "tool-output-error": "error",
        "tool-output-denied": "denied",
    }

    def event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind not in ai_sdk._HANDLERS:
            return
        ids: dict[str, str] = self.public.setdefault("ids", {})  # "<type>:<id>" -> block key
        pid = _str(data.get("id"))
        cid = _str(data.get("toolCallId"))
        if kind in self._OPENS and pid is not None:
            key = ids[f"{self._OPENS[kind]}:{pid}"] = self._key()
            self.open(key, self._OPENS[kind])
        elif kind in self._DELTAS and pid is not None:
            key = ids.get(f"{self._DELTAS[kind]}:{pid}")  # type: ignore[assignment]
            if key is None:
                return
            piece = _str(data.get("delta")) or ""
            if self._DELTAS[kind] == "text":
                self.text(key, piece)
            else:
                self.count(key, piece)
        elif kind in self._ENDS and pid is not None:
            key = ids.get(f"{self._ENDS[kind]}:{pid}")  # type: ignore[assignment]
            if key is not None:
                self.end(key)
        elif kind in ("tool-input-start", "tool-input-available") and cid is not None:
            if f"tool:{cid}" not in ids:
                name = _str(data.get("toolName"))
                ids[f"tool:{cid}"] = key = self._key()
                self.open(key, "dynamic-tool" if data.get("dynamic") else f"tool-{name}", name=name)
        elif kind in self._RESULTS and cid is not None:
            key = ids.get(f"tool:{cid}")  # type: ignore[assignment]
            if key is not None:
                self.result(key, self._RESULTS[kind])
        elif kind == "finish":
            self._finish(_str(data.get("finishReason")) or "stop")
        elif kind == "error":
            self._error("error")  # errorText is the backend's text: not shown live
        elif kind == "abort":
            self._error("abort")


FILTERS: dict[str, type[Filter]] = {
    f.format: f for f in (AnthropicFilter, ResponsesFilter, ChatFilter, AiSdkFilter)
}


def filter_for(fmt: str, state: dict[str, Any] | None = None) -> Filter:
    return FILTERS[fmt](state)
