"""The live filter of ``anthropic.messages`` (``formats/live.py`` says what a live filter is)."""

from __future__ import annotations

from typing import Any

from ...blocks import BlockClass, classify
from ..live import LiveFilter, LiveOps, as_int, as_str
from .parser import _STRING_DELTAS, FORMAT, _is_error_content, _Stream


class AnthropicLive(LiveFilter):
    """``message_start`` / ``content_block_start`` (index -> type) / ``content_block_delta``
    (through the parser's ``_STRING_DELTAS``: only a delta whose target is the block's key of a
    VISIBLE type is text) / ``content_block_stop`` / ``message_delta`` / ``message_stop`` /
    ``error``."""

    format = FORMAT
    browser = "AnthropicFilter"
    # delta type -> the block key it extends, for the deltas that append (text, thinking).
    _APPENDS = {d: (src, key) for d, (src, key, _t, append) in _STRING_DELTAS.items() if append}

    def event(self, out: LiveOps, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind not in _Stream.HANDLERS:
            return
        if kind == "message_start":
            if out.public["blocks"]:
                out.reset()
            message = data.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for i, block in enumerate(content if isinstance(content, list) else ()):
                self._start(out, str(i), block)
        elif kind == "content_block_start":
            index = as_int(data.get("index"))
            if index is not None:
                self._start(out, str(index), data.get("content_block"))
        elif kind == "content_block_delta":
            index = as_int(data.get("index"))
            delta = data.get("delta")
            if index is None or not isinstance(delta, dict):
                return
            rule = self._APPENDS.get(as_str(delta.get("type")) or "")
            key = str(index)
            if rule is None or key not in out.public["blocks"]:
                return
            source, target = rule
            piece = as_str(delta.get(source)) or ""
            if target == "text":
                out.text(key, piece)
            else:
                out.count(key, piece)
        elif kind == "content_block_stop":
            index = as_int(data.get("index"))
            if index is not None:
                out.end(str(index))
        elif kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and as_str(delta.get("stop_reason")):
                out.public["reason"] = delta["stop_reason"]
        elif kind == "message_stop":
            out.finish(out.public["reason"])
        elif kind == "error":
            error = data.get("error")
            code = as_str(error.get("type")) if isinstance(error, dict) else None
            out.error(code or "error")

    def _start(self, out: LiveOps, key: str, block: Any) -> None:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return
        btype = block["type"]
        cls = classify(self.format, btype)
        if cls is BlockClass.AUDIT and not btype.endswith("tool_use"):
            # a result that arrives whole (web_search_tool_result...): its status at once
            status = "error" if _is_error_content(block.get("content")) else "ok"
            if block.get("is_error") is True:
                status = "error"
            out.open(key, btype, name=as_str(block.get("name")) or btype)
            out.end(key, status=status)
            return
        out.open(key, btype, name=as_str(block.get("name")))
        if cls is BlockClass.VISIBLE:
            out.text(key, as_str(block.get("text")) or "")
