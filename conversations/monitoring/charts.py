"""Charts drawn on the server as SVG (no script, no CDN): bars with their numbers beside them.

Every label is escaped; the markup is built here so a template only places it."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from . import buckets


def bars(rows: Sequence[tuple[str, float, str]], *, title: str, width: int = 420) -> SafeString:
    """Horizontal bars: (label, value, the value in words) per row."""
    height = 22 * len(rows) + 8
    top = max((v for _, v, _ in rows), default=0) or 1
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for i, (label, value, words) in enumerate(rows):
        y = 4 + 22 * i
        w = round((width - 260) * value / top)
        parts.append(
            f'<text x="0" y="{y + 14}" font-size="12">{escape(label)}</text>'
            f'<rect x="150" y="{y + 3}" width="{w}" height="14" fill="#4a6fa5"/>'
            f'<text x="{156 + w}" y="{y + 14}" font-size="12">{escape(words)}</text>'
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
