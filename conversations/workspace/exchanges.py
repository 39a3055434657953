"""An exchange (one model call) as the conversation page shows it beside the turn it produced:
the model (and the alias asked for), usage with the reasoning share, the finish reason in words,
the latency, and what went wrong in plain words. "N in (M from cache)" means the same for every
format: N every input token billed, M the part read from the cache (the profile's
``usage.counted``).

How the chat backend built the request (a rewritten history and its price, a change the model
does not see, the provider's verdict on the history: the backend's conformance, DESIGN section
14) is for the backend's engineers: it goes into ``conformance``, filled only for a viewer who
is a console admin (``conformance=True``). An agent's page never carries that wording
(``tests/console/test_conformance_wording.py`` reads every agent page for every kind)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..formats import profile
from ..formats.profile import count_input
from ..monitoring.rewrites import SEEN, words
from .words import finish_words, key_words, transformation_words


@dataclass
class ExchangeSummary:
    ordinal: int
    model: str
    requested: str  # the alias asked for, when the snapshot served differs
    format: str
    streamed: bool
    input_tokens: int | None  # every input token billed, the cache reads and writes inside it
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    reasoning_share: int | None  # percent of the output
    reasoning_estimated: bool  # the provider counts reasoning inside the output: estimated
    finish: str
    finish_raw: str
    latency_ms: int | None
    flags: list[str]
    thinking: str
    max_tokens: int | None
    server_tools: list[str]
    live_first_text_ms: int | None = None  # seen live: time to the first visible text
    live_thinking_ms: int | None = None  # seen live: how long the model thought
    # The backend's conformance, for admins only (module docstring): a rewritten history the
    # model sees and its price, a change it does not see, the provider's verdict on the history
    # (Anthropic input_transformations), in words. Empty for everyone else.
    conformance: list[str] | None = None
    conformance_seen: bool = False  # a change the model sees is among them: shown as a flag

    @property
    def usage_known(self) -> bool:
        return self.input_tokens is not None or self.output_tokens is not None


def exchange_summary(e: Any, *, conformance: bool = False) -> ExchangeSummary:
    """The summary of exchange ``e``; ``conformance``: the viewer is a console admin."""
    share = None
    if e.reasoning_tokens and e.output_tokens:
        share = round(e.reasoning_tokens * 100 / e.output_tokens)
    flags = []
    if e.truncated:
        flags.append("the answer was cut off")
    if e.refusal:
        flags.append("the model refused")
    kind = getattr(e, "rewrite_kind", "") or ""
    lost = getattr(e, "cache_lost_tokens", None)
    priced = f"; about {lost:,} cached input tokens read again at full price" if lost else ""
    backend: list[str] = []
    if e.history_rewritten or kind in SEEN:
        where = f" from message {e.rewritten_at}" if e.rewritten_at is not None else ""
        backend.append(
            f"history rewritten{where}: {words(kind, e.format) or 'the prompt cache was missed'}"
        )
        if priced:
            backend[-1] += priced
    elif kind:
        backend.append(words(kind, e.format))
    backend += [transformation_words(t) for t in getattr(e, "input_transformations", None) or ()]
    if e.stream_error:
        flags.append(f"the stream broke off: {e.stream_error}")
    if e.cancelled:
        flags.append("cancelled by the chat before the end: the answer is what had arrived")
    if e.unknown_chunks:
        # Types only ever named in the admin (they are provider strings, not content).
        flags.append(
            "stream chunks of unknown types were read past: the record may lack what they carried"
        )
    thinking = ", ".join(
        part
        for part in (
            e.thinking and f"thinking {e.thinking}",
            e.effort and f"effort {e.effort}",
            e.budget_tokens and f"budget {e.budget_tokens:,} tokens",
        )
        if part
    )
    model = e.response_model or e.requested_model
    prof = profile(e.format)
    counted = count_input(
        prof.usage if prof is not None else None,
        e.input_tokens,
        e.cache_read_tokens,
        e.cache_write_tokens,
    )
    return ExchangeSummary(
        ordinal=e.ordinal,
        model=model,
        requested=e.requested_model if e.requested_model and e.requested_model != model else "",
        format=e.format,
        streamed=e.streamed,
        input_tokens=counted.total,
        cache_read_tokens=counted.cached,
        cache_write_tokens=counted.written,
        output_tokens=e.output_tokens,
        reasoning_tokens=e.reasoning_tokens,
        reasoning_share=share,
        reasoning_estimated=bool(getattr(e, "reasoning_estimated", False)),
        finish=finish_words(e.stop_reason, e.format),
        finish_raw=e.stop_reason,
        latency_ms=e.latency_ms,
        flags=flags,
        thinking=thinking,
        max_tokens=e.max_tokens,
        server_tools=[
            f"{key_words(k)} \u00d7 {v}" for k, v in (e.server_tool_counts or {}).items()
        ],
        live_first_text_ms=e.live_first_text_ms,
        live_thinking_ms=e.live_thinking_ms,
        conformance=backend if conformance else [],
        conformance_seen=conformance and (e.history_rewritten or kind in SEEN),
    )
