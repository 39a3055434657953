"""Bulk ingest per format: each registered format's exchanges stored at a rate within 10 % of
Anthropic's (DESIGN section 19: a format added as a plug-in costs no more to store).

What it measures: for each format, N exchanges of that format's demo conversations (its kit's
``demo``: reasoning, a tool call and its result, the answer) written as JSONL, the conversation
tables truncated, and ``manage.py ingest`` timed end to end (``bench/ingest_bulk.py``'s
``run_ingest``, one worker so the formats share nothing). The formats' demo exchanges differ in
size, so the rate compared is the JSONL bytes stored per second (exchanges per second beside it);
``ratio`` is a format's bytes/s over Anthropic's measured in the same run (target: at least
0.9).

    .venv/bin/python bench/format_rates.py [--exchanges 2000] [--formats google.generate_content]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import rate, report, run_benchmark, setup_django, truncate_conversations, verdict
from bench.ingest_bulk import run_ingest

TARGET = 0.9
BASELINE = "anthropic.messages"


def write_format(path: Path, fmt: str, exchanges: int) -> int:
    """``exchanges`` demo exchanges of ``fmt`` only, as JSONL; returns the file's size."""
    import random

    from conversations.demo import _Scenario
    from conversations.formats import get

    rng = random.Random(7)
    kit = get(fmt).kit
    written, index = 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < exchanges:
            scenario = _Scenario(rng, index)
            for step, sample in enumerate(kit.demo(scenario)):
                if written == exchanges:
                    break
                body = scenario.body(fmt, sample, step)
                out.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n")
                written += 1
            index += 1
    return path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exchanges", type=int, default=2_000, help="exchanges per format")
    parser.add_argument("--batch-size", type=int, default=500, help="the ingest's --batch-size")
    parser.add_argument("--formats", nargs="*", help="the formats beside Anthropic (default: all)")
    args = parser.parse_args(argv)
    setup_django()
    from conversations.formats import names

    chosen = [BASELINE, *[f for f in (args.formats or names()) if f != BASELINE]]
    rows: list[tuple[str, str]] = []
    rates: dict[str, float] = {}
    # A first ingest in this process pays for imports and caches: a small one, not counted.
    with tempfile.TemporaryDirectory(prefix="bench-formats-") as tmp:
        for fmt in chosen:
            path = Path(tmp) / f"warm-{fmt}.jsonl"
            write_format(path, fmt, min(200, args.exchanges))
            truncate_conversations()
            run_ingest(path, args.batch_size, False, 1)
    for fmt in chosen:
        with tempfile.TemporaryDirectory(prefix="bench-formats-") as tmp:
            path = Path(tmp) / "exchanges.jsonl"
            size = write_format(path, fmt, args.exchanges)
            truncate_conversations()
            run = run_ingest(path, args.batch_size, False, 1)
            truncate_conversations()
        rates[fmt] = rate(size, run.seconds)
        line = (
            f"{run.exchanges} exchanges, {size / run.exchanges:,.0f} bytes each, "
            f"{rate(run.exchanges, run.seconds):,.0f} exchanges/s, {rates[fmt] / 1e6:.2f} MB/s"
        )
        if fmt != BASELINE:
            line += "; ratio to Anthropic " + verdict(rates[fmt] / rates[BASELINE], TARGET)
        rows.append((fmt, line))
    report(rows)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
