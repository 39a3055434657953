"""The live filter of ``openai_chat`` (see ``live/filters/base.py``)."""

from __future__ import annotations

from typing import Any

from ...blocks import BlockClass, classify
from ...formats import openai_chat
from .base import Filter, _int, _str


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
