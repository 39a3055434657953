"""The live filter of ``openai.chat`` (``formats/live.py`` says what a live filter is)."""

from __future__ import annotations

from typing import Any

from ...blocks import BlockClass, classify
from ..live import LiveFilter, LiveOps, as_int, as_str
from .parser import _REASONING_KEYS, _STRING_DELTAS, FORMAT


class ChatLive(LiveFilter):
    """Chat Completions: choice 0's delta keys are the blocks (``content``, ``refusal``, the
    reasoning keys of the parser's ``_STRING_DELTAS``; their class from ``classify``), tool
    calls by their ``index``; a ``finish_reason`` or ``[DONE]`` ends it."""

    format = FORMAT
    browser = "ChatFilter"

    def event(self, out: LiveOps, data: dict[str, Any]) -> None:
        if data.get("error") is not None:
            error = data["error"]
            code = None
            if isinstance(error, dict):
                code = as_str(error.get("type")) or as_str(error.get("code"))
            out.error(code or "error")
            return
        choices = data.get("choices")
        for k, choice in enumerate(choices if isinstance(choices, list) else ()):
            if not isinstance(choice, dict):
                continue
            index = as_int(choice.get("index"))
            if (k if index is None else index) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(out, delta)
            finish = as_str(choice.get("finish_reason"))
            if finish is not None:
                out.finish(finish)

    def _delta(self, out: LiveOps, delta: dict[str, Any]) -> None:
        for key, value in delta.items():
            if key in _STRING_DELTAS and isinstance(value, str):
                cls = classify(self.format, key)
                if cls is not BlockClass.NEVER:
                    self._stop_thinking(out)
                out.open(key, key)
                if cls is BlockClass.VISIBLE:
                    out.text(key, value)
                else:
                    out.count(key, value)
            elif key == "tool_calls" and isinstance(value, list):
                self._stop_thinking(out)
                for position, call in enumerate(value):
                    if not isinstance(call, dict):
                        continue
                    index = as_int(call.get("index"))
                    ckey = f"tool{position if index is None else index}"
                    function = call.get("function")
                    name = as_str(function.get("name")) if isinstance(function, dict) else None
                    if ckey not in out.public["blocks"]:
                        out.open(ckey, "tool_calls", name=name)

    def _stop_thinking(self, out: LiveOps) -> None:
        for key in _REASONING_KEYS:
            out.end(key)
