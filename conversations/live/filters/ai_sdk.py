"""The live filter of ``ai_sdk`` (see ``live/filters/base.py``)."""

from __future__ import annotations

from typing import Any

from ...formats import ai_sdk
from .base import Filter, _str


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
