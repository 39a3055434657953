"""What happened when, and what it cost: each turn's model calls and tool calls as bars on one
time axis, with their tokens and price (the conversation page's "Timing and cost" panel).

A turn starts at a customer message and runs until the next: the model calls whose requests
followed it and the tool calls those made. Each turn has its own axis (from its first model
call to the end of its last bar), so a turn of two seconds is not a hair beside a reply the
customer wrote an hour later; the turn's own time is shown with it.

- **Model call**: starts at the exchange's ``started_at``, lasts its ``latency_ms``; where it was
  seen live, the part before its first visible text is drawn as waiting.
- **Tool call**: starts when the answer that made it ended, lasts until the request carrying
  its result started (``ToolCall.duration_ms``: the tool plus the chat backend's own time). A
  server tool run inside one model call (a web search) has no bar of its own.
- **Idle**: the gap before a bar in which nothing of this turn ran.
- **Tokens**: input with one meaning whatever the format (every input token billed, the part
  read from the cache named inside it: "N in (M from cache)", as the call line says it; the
  profile's ``usage.counted``), output, and reasoning: as reported, else as the format's
  profile estimated it at ingest (``Exchange.reasoning_estimated``), and marked so.
- **Price**: per call from the admin's price table (``ModelPrice``, per million tokens; the
  snapshot's price, else the alias's; reasoning billed as output), per turn the sum; a call
  without a price says so and the turn's sum says how many it leaves out.

Pure: the rows come from ``selectors.conversation_page`` and the prices from the read service.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from ..formats import profile
from ..formats.profile import count_input
from .timeline import Timeline, ToolCall

MILLION = Decimal(1_000_000)
# A turn with more bars than this draws the first BARS_FIRST and the last BARS_LAST (the sums
# count them all): a turn of 10,000 tool calls is a panel of a few kilobytes.
BARS_OVER = 30
BARS_FIRST = 20
BARS_LAST = 5


@dataclass(frozen=True)
class Tokens:
    input: int | None  # every input token billed; ``cached`` and ``cache_write`` inside it
    cached: int | None
    cache_write: int | None
    output: int | None
    reasoning_tokens: int | None
    reasoning_estimated: bool = False

    @property
    def known(self) -> bool:
        return self.input is not None or self.output is not None

    @property
    def fresh(self) -> int | None:
        """The input neither read from nor written to the cache (the plain input price)."""
        if self.input is None:
            return None
        return max(0, self.input - (self.cached or 0) - (self.cache_write or 0))


@dataclass
class Bar:
    kind: str  # model | tool
    label: str
    anchor: str  # the turn or tool call it stands for on the page
    start_ms: int
    duration_ms: int | None
    idle_ms: int | None = None
    waiting_ms: int | None = None  # a model call seen live: before its first visible text
    tokens: Tokens | None = None
    price: Decimal | None = None
    priced_as: str = ""
    tone: str = "ok"
    at: datetime | None = None
    left: float = 0.0  # percent of the turn's axis
    width: float = 0.0
    wait_width: float = 0.0  # percent of the bar

    @property
    def end_ms(self) -> int:
        return self.start_ms + (self.duration_ms or 0)


@dataclass(eq=False)  # a dict key by identity while bars are placed
class TurnCost:
    number: int
    anchor: str  # the customer's message that began it ("" for calls before any)
    at: datetime | None
    bars: list[Bar] = field(default_factory=list)
    span_ms: int = 0
    price: Decimal | None = None
    unpriced: int = 0  # model calls without a price
    input: int = 0
    cached: int = 0
    output: int = 0
    reasoning_tokens: int = 0
    reasoning_estimated: bool = False
    ticks: list[tuple[float, int]] = field(default_factory=list)  # (percent, ms)
    # A turn of many calls shows its first and last bars; ``folded`` bars between them are
    # counted, not drawn (their calls are on the page's timeline, folded too: folds.py).
    folded: int = 0
    fold_at: int = 0  # the index in ``bars`` the fold's row goes before

    @property
    def bars_before(self) -> list[Bar]:
        return self.bars[: self.fold_at] if self.folded else self.bars

    @property
    def bars_after(self) -> list[Bar]:
        return self.bars[self.fold_at :] if self.folded else []


@dataclass
class Waterfall:
    turns: list[TurnCost]
    price: Decimal | None
    unpriced: int

    @property
    def empty(self) -> bool:
        return not any(t.bars for t in self.turns)


def call_price(price: Any, fmt: str, e: Any) -> tuple[Tokens, Decimal | None]:
    """The tokens of one exchange as billed, and its price under ``price`` (a ``ModelPrice``
    or None). The provider's input count holds the cache reads for some formats (OpenAI) and
    not for others (Anthropic): the profile counts it (``usage.counted``), so ``input`` means
    every input token billed on every page."""
    prof = profile(fmt)
    counted = count_input(
        prof.usage if prof is not None else None,
        e.input_tokens,
        e.cache_read_tokens,
        e.cache_write_tokens,
    )
    tokens = Tokens(
        counted.total,
        counted.cached,
        counted.written,
        e.output_tokens,
        e.reasoning_tokens,
        bool(e.reasoning_estimated and e.reasoning_tokens is not None),
    )
    if price is None or not tokens.known:
        return tokens, None
    total = (
        Decimal(tokens.fresh or 0) * price.input
        + Decimal(tokens.cached or 0) * price.cache_read
        + Decimal(tokens.cache_write or 0) * price.cache_write
        + Decimal(e.output_tokens or 0) * price.output  # reasoning is inside the output
    )
    return tokens, total / MILLION


def _ms(a: datetime, b: datetime) -> int:
    return int((a - b).total_seconds() * 1000)


def _groups(timeline: Timeline) -> list[tuple[int, TurnCost]]:
    """(first exchange ordinal, turn) for each customer message, in order."""
    out: list[tuple[int, TurnCost]] = []
    for turn in timeline.turns:
        if turn.role == "customer" and (not out or out[-1][0] != turn.ordinal):
            out.append((turn.ordinal, TurnCost(len(out) + 1, turn.key, turn.at)))
    return out


def _turn_of(groups: list[tuple[int, TurnCost]], ordinal: int | None) -> TurnCost | None:
    found = None
    for first, turn in groups:
        if ordinal is not None and first <= ordinal:
            found = turn
    return found or (groups[0][1] if groups else None)


def build_waterfall(page: Any, timeline: Timeline, prices: Mapping[str, Any]) -> Waterfall:
    groups = _groups(timeline)
    if not groups:
        groups = [(0, TurnCost(1, "", None))]
    anchors = {t.exchange.ordinal: t.key for t in timeline.turns if t.exchange is not None}
    starts: dict[TurnCost, datetime] = {}
    ends: dict[int, datetime] = {}  # exchange ordinal -> when its answer ended
    model_bars: list[tuple[TurnCost, datetime, Bar]] = []
    for e in page.exchanges:
        turn = _turn_of(groups, e.ordinal)
        assert turn is not None
        model = e.response_model or e.requested_model
        price = prices.get(model) or prices.get(e.requested_model)
        tokens, cost = call_price(price, e.format, e)
        bar = Bar(
            "model",
            f"Model call {e.ordinal}",
            anchors.get(e.ordinal, f"e{e.ordinal}"),
            0,
            e.latency_ms,
            waiting_ms=e.live_first_text_ms,
            tokens=tokens,
            price=cost,
            priced_as=price.model if price is not None else "",
            tone="error" if (e.truncated or e.stream_error or e.refusal) else "ok",
            at=e.started_at,
        )
        if e.started_at is not None:
            ends[e.ordinal] = e.started_at + timedelta(milliseconds=e.latency_ms or 0)
            starts[turn] = min(starts.get(turn, e.started_at), e.started_at)
        model_bars.append((turn, e.started_at, bar))
    placed: list[tuple[TurnCost, datetime | None, Bar]] = list(model_bars)
    for call in timeline.calls.values():
        if call.called_in is None or call.answered_in == call.called_in:
            continue  # a result without its call, or a server tool inside one model call
        turn = _turn_of(groups, call.called_in)
        assert turn is not None
        placed.append((turn, ends.get(call.called_in), _tool_bar(call, timeline.anchor(call.key))))
    for turn, at, bar in placed:
        origin = starts.get(turn)
        bar.start_ms = _ms(at, origin) if at is not None and origin is not None else 0
        if bar.kind == "tool" and at is not None:
            bar.at = at
        turn.bars.append(bar)
    turns = [t for _, t in groups]
    for turn in turns:
        _lay_out(turn)
    priced = [t.price for t in turns if t.price is not None]
    return Waterfall(
        turns,
        sum(priced, Decimal(0)) if priced else None,
        sum(t.unpriced for t in turns),
    )


def _tool_bar(call: ToolCall, anchor: str) -> Bar:
    label = call.action or call.name
    return Bar("tool", label, anchor, 0, call.duration_ms, tone=call.tone)


def _lay_out(turn: TurnCost) -> None:
    """Order the bars, measure the idle gaps, the axis, the sums."""
    turn.bars.sort(key=lambda b: (b.start_ms, b.kind != "model"))
    busy_until: int | None = None
    for bar in turn.bars:
        if busy_until is not None and bar.start_ms > busy_until:
            bar.idle_ms = bar.start_ms - busy_until
        busy_until = max(busy_until or 0, bar.end_ms)
    turn.span_ms = max([b.end_ms for b in turn.bars] or [0])
    span = turn.span_ms or 1
    for bar in turn.bars:
        bar.left = round(bar.start_ms * 100 / span, 2)
        bar.width = round((bar.duration_ms or 0) * 100 / span, 2)
        if bar.waiting_ms and bar.duration_ms:
            bar.wait_width = round(min(bar.waiting_ms, bar.duration_ms) * 100 / bar.duration_ms, 2)
    turn.ticks = [(q * 25.0, turn.span_ms * q // 4) for q in range(5)] if turn.span_ms else []
    _sum(turn, [b for b in turn.bars if b.kind == "model"])
    if len(turn.bars) > BARS_OVER:
        turn.folded = len(turn.bars) - BARS_FIRST - BARS_LAST
        turn.fold_at = BARS_FIRST
        turn.bars = turn.bars[:BARS_FIRST] + turn.bars[-BARS_LAST:]


def _sum(turn: TurnCost, calls: Iterable[Bar]) -> None:
    prices: list[Decimal] = []
    for bar in calls:
        t = bar.tokens
        if t is None:
            continue
        turn.input += t.input or 0
        turn.cached += t.cached or 0
        turn.output += t.output or 0
        turn.reasoning_tokens += t.reasoning_tokens or 0
        turn.reasoning_estimated |= t.reasoning_estimated and bool(t.reasoning_tokens)
        if bar.price is None:
            turn.unpriced += 1
        else:
            prices.append(bar.price)
    turn.price = sum(prices, Decimal(0)) if prices else None
