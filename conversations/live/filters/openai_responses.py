"""The live filter of ``openai_responses`` (see ``live/filters/base.py``)."""

from __future__ import annotations

from typing import Any

from ...formats import openai_responses
from .base import Filter, _int, _str


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
