"""The live filter of ``google.generate_content`` (``formats/live.py`` says what a live filter
is). Read from the SSE framing (``alt=sse``, what the SDKs ask for).

Each chunk is a whole ``GenerateContentResponse``; the parts of ``candidates[0].content`` are
its pieces. Consecutive text parts are one visible block as they stream, consecutive thought
parts one thinking block (counted, never shown: the thinking indicator), as the stored answer
merges them (``accumulate.py``): a part that carries a ``thoughtSignature`` closes its block, so
text after a signed part is a block of its own. A signature is never read here at all:
nothing of it can be published. A ``functionCall`` or server tool part is a tool block, a
result part its result; a ``finishReason`` (or a blocked prompt's ``blockReason``) ends the
stream, an ``error`` chunk ends it as an error.
"""

from __future__ import annotations

from typing import Any

from ...blocks import BlockClass, classify
from ..live import LiveFilter, LiveOps, as_str
from .parts import kind_of, signature_of
from .profile import CALL, CODE_RESULT, FORMAT, PROFILE, RESPONSE, SERVER_RESULT, TEXT, THOUGHT

_RUN = "google_run"  # the open text or thinking block: [key, type]


class GoogleLive(LiveFilter):
    format = FORMAT
    browser = "GoogleFilter"

    def event(self, out: LiveOps, data: dict[str, Any]) -> None:
        error = data.get("error")
        if error is not None:
            status = as_str(error.get("status")) if isinstance(error, dict) else None
            out.error(status or "error")
            return
        candidates = data.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if isinstance(candidate, dict):
            content = candidate.get("content")
            found = content.get("parts") if isinstance(content, dict) else None
            for part in found if isinstance(found, list) else ():
                if isinstance(part, dict):
                    self._part(out, part)
            reason = as_str(candidate.get("finishReason"))
            if reason is not None:
                self._close(out)
                out.finish(reason)
                return
        feedback = data.get("promptFeedback")
        if isinstance(feedback, dict) and as_str(feedback.get("blockReason")):
            self._close(out)
            out.finish(feedback["blockReason"])

    def _part(self, out: LiveOps, part: dict[str, Any]) -> None:
        kind = kind_of(part)
        signed = signature_of(part) is not None
        if kind == TEXT:
            text = as_str(part.get(TEXT)) or ""
            btype = THOUGHT if part.get(THOUGHT) is True else TEXT
            run = out.public.get(_RUN)
            if run is None or run[1] != btype:
                self._close(out)
                if not text:
                    return  # an empty part (a signature's carrier): nothing to show
                run = out.public[_RUN] = [out.key(), btype]
                out.open(run[0], btype)
            if btype == TEXT:
                out.text(run[0], text)
            else:
                out.count(run[0], text)
            if signed:
                self._close(out)
            return
        self._close(out)
        if classify(self.format, kind) is not BlockClass.AUDIT:
            return  # media, and kinds this code does not know: nothing to show
        data = part.get(kind)
        if not isinstance(data, dict):
            data = part.get(next((k for k in part if kind_of({k: 0}) == kind), kind), {})
        name = as_str(data.get("name")) if isinstance(data, dict) else None
        tool_type = as_str(data.get("toolType")) if isinstance(data, dict) else None
        key = out.key()
        out.open(key, kind, name=name or tool_type or kind)
        if PROFILE.is_result(kind):
            failed = False
            if kind == CODE_RESULT and isinstance(data, dict):
                failed = data.get("outcome", "OUTCOME_OK") != "OUTCOME_OK"
            elif kind in (RESPONSE, SERVER_RESULT) and isinstance(data, dict):
                response = data.get("response")
                failed = isinstance(response, dict) and "error" in response
            out.end(key, status="error" if failed else "ok")
        elif kind == CALL or not PROFILE.is_result(kind):
            out.end(key)

    def _close(self, out: LiveOps) -> None:
        run = out.public.pop(_RUN, None)
        if run is not None:
            out.end(run[0])
