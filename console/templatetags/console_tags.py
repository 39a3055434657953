"""Template filters of the console's pages: Markdown, durations, audit details; the ``jinja``
tag, which places a part rendered by the Jinja2 engine (``console/jinja.py``)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django import template
from django.template import engines
from django.utils.safestring import SafeString, mark_safe

from audit.readable import details_pairs as _details_pairs
from audit.registry import EVENT_TYPES

from ..markdown import markdown_text, render_markdown

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return render_markdown(text)


@register.filter
def plain(text: str, limit: int = 0) -> str:
    """The text without its Markdown, on one line; with ``limit``, cut there with "…" (plain
    slicing: ``truncatechars`` costs more than the rest of a list row)."""
    line = markdown_text(text)
    return line if not limit or len(line) <= limit else line[: limit - 1].rstrip() + "…"


@register.filter
def duration(ms: int | None) -> str:
    """Milliseconds as people say them: "840 ms", "8.2 s", "3 min 5 s"."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


@register.filter
def tokens(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


@register.filter
def price(value: Any) -> str:
    """A price from the price table's units (dollars): four decimals, more for a fraction of a
    hundredth of a cent, so a cheap call does not read "$0.0000"."""
    if value is None:
        return "—"
    amount = Decimal(value)
    if amount and abs(amount) < Decimal("0.0001"):
        return f"${amount:.6f}"
    return f"${amount:.4f}"


@register.filter
def iso_when(value: Any) -> str:
    """An ISO 8601 time (a transcript's) as people read it: "2026-11-03 15:05:02 +01:00". The
    share page's script shows it in the viewer's own zone."""
    try:
        at = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value or "")
    offset = at.strftime("%z")
    zone = f" {offset[:3]}:{offset[3:]}" if offset else ""
    return at.strftime("%Y-%m-%d %H:%M:%S") + zone


@register.filter
def details_pairs(details: Any) -> list[tuple[str, str]]:
    return _details_pairs(details)


@register.filter
def event_description(code: str) -> str:
    t = EVENT_TYPES.get(code)
    return t.description if t else ""


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.simple_tag(takes_context=True)
def jinja(context: template.Context, name: str) -> SafeString:
    """The Jinja2 template ``name`` (``templates/jinja2/``) rendered with this page's context:
    a page's long repeated part (``console/jinja.py`` says why)."""
    part = engines["jinja2"].get_template(name)
    values: dict[str, Any] = {str(k): v for k, v in context.flatten().items()}
    # Autoescaped by Jinja2 itself: what it returns is HTML.
    return mark_safe(part.render(values, request=context.get("request")))  # noqa: S308
