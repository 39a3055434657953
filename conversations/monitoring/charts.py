"""Charts drawn on the server as SVG (no script, no CDN): bars with their numbers beside them.

Every label is escaped; the markup is built here so a template only places it."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from . import buckets

# Rows in percent of the chart's width: labels, then the bars, the numbers right-aligned. The
# SVG has no viewBox: its units are CSS pixels, so text is drawn at FONT_PX whatever the width the
# page gives the chart (a viewBox scaled a 420-unit drawing into ~230 px: 6 px text, issue 35).
LABEL_END = 40  # percent
BAR_START, BAR_END = 41, 73
ROW_PX = 24
FONT_PX = 13


def bars(rows: Sequence[tuple[str, float, str]], *, title: str) -> SafeString:
    """Horizontal bars: (label, value, the value in words) per row, as wide as the page allows
    (``svg.chart`` in console.css), the text never scaled."""
    height = ROW_PX * len(rows) + 8
    top = max((v for _, v, _ in rows), default=0) or 1
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="100%" '
        f'height="{height}" font-size="{FONT_PX}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for i, (label, value, words) in enumerate(rows):
        y = 4 + ROW_PX * i
        w = round((BAR_END - BAR_START) * value / top, 2)
        parts.append(
            f'<text x="0" y="{y + 16}">{escape(label)}</text>'
            f'<rect x="{BAR_START}%" y="{y + 4}" width="{w}%" height="15" fill="#4a6fa5"/>'
            f'<text x="100%" y="{y + 16}" text-anchor="end">{escape(words)}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every piece above is escaped or a number)


def histogram(hist: Sequence[int], *, title: str, unit: str) -> SafeString:
    """A log-bucket histogram as bars, from the first to the last non-empty bucket."""
    filled = [i for i, n in enumerate(hist) if n]
    if not filled:
        return bars([], title=title)
    total = sum(hist)
    rows = []
    for i in range(filled[0], filled[-1] + 1):
        if buckets.lower(i) > buckets.upper(i):
            continue  # a bucket no whole number falls in
        label = f"≤ {buckets.upper(i):,} {unit}"
        rows.append((label, hist[i], f"{hist[i]:,} ({hist[i] * 100 / total:.1f} %)"))
    return bars(rows, title=title)
