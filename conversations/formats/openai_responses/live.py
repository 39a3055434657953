"""The live filter of ``openai.responses`` (``formats/live.py`` says what a live filter is)."""

from __future__ import annotations

from typing import Any

from ..live import LiveFilter, LiveOps, as_int, as_str
from .parser import FORMAT, _Stream

_H = _Stream.HANDLERS


def _events(*handlers: object) -> frozenset[str]:
    """The event names the parser reads with one of ``handlers``."""
    return frozenset(k for k, v in _H.items() if v in handlers)


class ResponsesLive(LiveFilter):
    """OpenAI Responses: ``output_item.added`` opens item ``output_index`` with its type; a
    ``message`` item's content parts are the VISIBLE blocks (``content_part.added`` gives their
    type); text arrives in the events the stored accumulator reads as text and refusal deltas."""

    format = FORMAT
    browser = "ResponsesFilter"
    _TEXT = _events(_Stream.text_delta, _Stream.refusal_delta)
    _THINK = _events(_Stream.summary_delta, _Stream.reasoning_text_delta)
    _PART_END = _events(_Stream.text_done, _Stream.refusal_done)

    def event(self, out: LiveOps, data: dict[str, Any]) -> None:
        kind = as_str(data.get("type"))
        if kind not in _H:
            return
        oi = as_int(data.get("output_index"))
        if kind == "response.output_item.added":
            item = data.get("item")
            if oi is None or not isinstance(item, dict) or not as_str(item.get("type")):
                return
            itype = item["type"]
            if itype == "message":
                out.public.setdefault("messages", []).append(oi)
            else:
                out.open(str(oi), itype, name=as_str(item.get("name")) or itype)
        elif kind == "response.output_item.done":
            item = data.get("item")
            if oi is None or not isinstance(item, dict):
                return
            if item.get("type") == "message":
                prefix = f"{oi}."
                for key in list(out.public["blocks"]):
                    if key.startswith(prefix):
                        out.end(key)
                return
            status = item.get("status")
            out.end(str(oi), status="error" if status in ("failed", "incomplete") else "ok")
        elif kind == "response.content_part.added":
            part = data.get("part")
            ci = as_int(data.get("content_index"))
            if oi is None or ci is None or not isinstance(part, dict):
                return
            if oi in out.public.get("messages", ()) and as_str(part.get("type")):
                out.open(f"{oi}.{ci}", part["type"])
        elif kind in self._TEXT:
            ci = as_int(data.get("content_index"))
            if oi is not None and ci is not None:
                out.text(f"{oi}.{ci}", as_str(data.get("delta")) or "")
        elif kind in self._THINK:
            if oi is not None:
                out.count(str(oi), as_str(data.get("delta")) or "")
        elif kind in self._PART_END or kind == "response.content_part.done":
            ci = as_int(data.get("content_index"))
            if oi is not None and ci is not None:
                out.end(f"{oi}.{ci}")
        elif kind in ("response.completed", "response.incomplete"):
            response = data.get("response")
            reason = None
            if isinstance(response, dict):
                details = response.get("incomplete_details")
                reason = as_str(details.get("reason")) if isinstance(details, dict) else None
                reason = reason or as_str(response.get("status"))
            out.finish(reason or "completed")
        elif kind == "response.failed":
            response = data.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            code = as_str(error.get("code")) if isinstance(error, dict) else None
            out.error(code or "response.failed")
        elif kind == "error":
            out.error(as_str(data.get("code")) or "error")
