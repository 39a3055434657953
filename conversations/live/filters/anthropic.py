"""The live filter of ``anthropic`` (see ``live/filters/base.py``)."""

from __future__ import annotations

from typing import Any

from ...blocks import BlockClass, classify
from ...formats import anthropic
from .base import Filter, _int, _str


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
