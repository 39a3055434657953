"""The live filter of ``ai-sdk.ui`` (``formats/live.py`` says what a live filter is)."""

from __future__ import annotations

from typing import Any

from ..live import LiveFilter, LiveOps, as_str
from .accumulator import HANDLERS
from .profile import FORMAT


class AiSdkLive(LiveFilter):
    """The AI SDK UI stream: ``text-start`` / ``reasoning-start`` open a part by ``id`` (its type
    from the chunk that opens it, as the accumulator's ``HANDLERS`` reads it), the deltas and ends
    name that id; tool parts by ``toolCallId``; ``finish`` / ``[DONE]``, ``error``, ``abort``."""

    format = FORMAT
    browser = "AiSdkFilter"
    _OPENS = {"text-start": "text", "reasoning-start": "reasoning"}
    _DELTAS = {"text-delta": "text", "reasoning-delta": "reasoning"}
    _ENDS = {"text-end": "text", "reasoning-end": "reasoning"}
    _RESULTS = {
        "tool-output-available": "ok",
        "tool-output-error": "error",
        "tool-output-denied": "denied",
    }

    def event(self, out: LiveOps, data: dict[str, Any]) -> None:
        kind = as_str(data.get("type"))
        if kind not in HANDLERS:
            return
        ids: dict[str, str] = out.public.setdefault("ids", {})  # "<type>:<id>" -> block key
        pid = as_str(data.get("id"))
        cid = as_str(data.get("toolCallId"))
        if kind in self._OPENS and pid is not None:
            key = ids[f"{self._OPENS[kind]}:{pid}"] = out.key()
            out.open(key, self._OPENS[kind])
        elif kind in self._DELTAS and pid is not None:
            found = ids.get(f"{self._DELTAS[kind]}:{pid}")
            if found is None:
                return
            piece = as_str(data.get("delta")) or ""
            if self._DELTAS[kind] == "text":
                out.text(found, piece)
            else:
                out.count(found, piece)
        elif kind in self._ENDS and pid is not None:
            found = ids.get(f"{self._ENDS[kind]}:{pid}")
            if found is not None:
                out.end(found)
        elif kind in ("tool-input-start", "tool-input-available") and cid is not None:
            if f"tool:{cid}" not in ids:
                name = as_str(data.get("toolName"))
                ids[f"tool:{cid}"] = key = out.key()
                out.open(key, "dynamic-tool" if data.get("dynamic") else f"tool-{name}", name=name)
        elif kind in self._RESULTS and cid is not None:
            found = ids.get(f"tool:{cid}")
            if found is not None:
                out.result(found, self._RESULTS[kind])
        elif kind == "finish":
            out.finish(as_str(data.get("finishReason")) or "stop")
        elif kind == "error":
            out.error("error")  # errorText is the backend's text: not shown live
        elif kind == "abort":
            out.error("abort")
