"""Answers rendered as Markdown, safely: markdown-it-py (CommonMark, tables, strikethrough)
with raw HTML off, then nh3 (the ammonia sanitiser) with an allow-list of tags.

Two layers on purpose: markdown-it escapes any HTML the text carries (``<script>`` is shown as
text) and refuses ``javascript:`` links; nh3 then keeps only the tags and attributes listed
below, only http(s) and mailto links, and gives every link ``rel="noopener noreferrer
nofollow"``. Images are not rendered (a remote image would tell its server who reads the
conversation, and the CSP refuses them anyway): ``![alt](url)`` shows as a link.

To allow a tag: add it to ``TAGS`` (and its attributes to ``ATTRIBUTES``) and add a case to
``tests/console/test_markdown.py``.
"""

from __future__ import annotations

import re
from functools import lru_cache

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

TAGS = {
    "p", "br", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "a",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"style"}, "td": {"style"}}
SCHEMES = {"http", "https", "mailto"}


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    return md


def render_markdown(text: str) -> SafeString:
    """``text`` (already redacted) as sanitised HTML."""
    html = _parser().render(text or "")
    clean = nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=SCHEMES,
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
        strip_comments=True,
    )
    return mark_safe(clean)  # noqa: S308 (sanitised by nh3 just above)


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"(\*\*|__|~~|`+|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w))")
_LINE_MARKS = re.compile(r"^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)", re.MULTILINE)


def markdown_text(text: str) -> str:
    """``text`` with its Markdown marks taken out (``**bold**`` → "bold", ``[a](url)`` → "a"),
    on one line: a list row's snippet, where a full render for each of fifty rows would cost
    more than the page's queries. Escaped by the template like any text."""
    text = _LINE_MARKS.sub("", text or "")
    text = _MARKS.sub("", _LINK.sub(r"\1", text))
    return " ".join(text.split())
