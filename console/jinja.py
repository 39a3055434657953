"""The Jinja2 environment of the console's repeated parts: the list's rows (``_results.html``)
and a conversation's turns (``_timeline.html`` and what it includes), in ``templates/jinja2/``.

Why two engines: those parts repeat a few markup lines hundreds of times a page, and Django's
template language spent most of the long pages' time there (a 201-message conversation: about
60% of the page, ``bench/console.py``). The pages themselves (``base.html``, the forms, the
header) stay in Django templates and place a part with ``{% jinja "console/_timeline.html" %}``
(``console_tags.jinja``), which hands it the page's whole context.

The filters here are the Django ones those parts used, with the same output: ``date`` formats
an aware datetime in the active time zone (``request.time_zone``), as Django's ``date`` filter
does (``tests/console/test_jinja.py`` holds them equal); ``markdown``, ``plain``, ``duration``,
``tokens`` are ``console_tags``'. Autoescape is on; Django's safe strings (``SafeString``: the
rendered Markdown) pass through unescaped, as they do in Django templates. An undefined name or
attribute renders as nothing (``ChainableUndefined``), as in Django templates: no stored value
makes a page fail.
"""

from __future__ import annotations

from datetime import date as _date
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.template import defaultfilters
from django.templatetags.static import static
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import dateformat, timezone
from jinja2 import ChainableUndefined, Environment

from .templatetags.console_tags import duration, markdown, plain, price, tokens

# Format characters written here without Django's DateFormat (the rest go through it).
_FAST = {
    "Y": lambda d: f"{d.year:04d}",
    "m": lambda d: f"{d.month:02d}",
    "d": lambda d: f"{d.day:02d}",
    "j": lambda d: str(d.day),
    "H": lambda d: f"{d.hour:02d}",
    "i": lambda d: f"{d.minute:02d}",
    "s": lambda d: f"{d.second:02d}",
    "c": lambda d: d.isoformat(),
    "T": lambda d: str(d.tzinfo.tzname(d)),
}


def date(value: Any, fmt: str = "N j, Y") -> str:
    """Django's ``date`` filter: an aware datetime in the active time zone, then ``fmt``."""
    if not isinstance(value, _date):
        return ""  # None, "", anything but a date
    if isinstance(value, datetime):
        if timezone.is_naive(value):
            return defaultfilters.date(value, fmt)
        value = timezone.localtime(value)
    if "\\" in fmt or not isinstance(value, datetime):  # an escape, or a date: Django's own
        return dateformat.format(value, fmt)
    out: list[str] = []
    django_format: dateformat.DateFormat | None = None
    for ch in fmt:
        fast = _FAST.get(ch)
        if fast is not None:
            out.append(fast(value))
        elif ch.isalpha():
            django_format = django_format or dateformat.DateFormat(value)
            out.append(str(getattr(django_format, ch)()))
        else:
            out.append(ch)
    return "".join(out)


def pluralize(value: Any, suffix: str = "s") -> str:
    """Django's ``pluralize`` with one suffix: a count, or a sized thing's length."""
    try:
        n = len(value) if hasattr(value, "__len__") and not isinstance(value, str) else value
        return "" if float(n) == 1 else suffix
    except (TypeError, ValueError):
        return ""


def url(name: str, *args: Any) -> str:
    """``reverse(name, args=args)``: the rows of a page reverse the same few patterns fifty or a
    hundred times, so each answer is kept (per script prefix and URLconf, as Django resolves)."""
    return _reverse(get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF, name, args)


@lru_cache(maxsize=8192)
def _reverse(prefix: str, urlconf: str, name: str, args: tuple[Any, ...]) -> str:
    return reverse(name, urlconf=urlconf, args=args)


def environment(**options: Any) -> Environment:
    options["undefined"] = ChainableUndefined  # Django's backend would set DebugUndefined
    env = Environment(**options)  # noqa: S701 (autoescape is set by Django's Jinja2 backend)
    env.globals.update(url=url, static=static)
    env.filters.update(
        date=date,
        pluralize=pluralize,
        linebreaksbr=lambda text: defaultfilters.linebreaksbr(text, autoescape=True),
        capfirst=defaultfilters.capfirst,
        markdown=markdown,
        plain=plain,
        duration=duration,
        tokens=tokens,
        price=price,
    )
    return env
