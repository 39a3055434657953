"""Answers rendered as Markdown through the sanitiser: formatting kept, anything active gone."""

from __future__ import annotations

import pytest

from console.markdown import markdown_text, render_markdown


def test_formatting_is_rendered() -> None:
    html = render_markdown('**"hello world"**\n\n- one\n- two\n\n`code` and\n\n```\nblock\n```')
    assert (
        "<strong>&quot;hello world&quot;</strong>" in html
        or '<strong>"hello world"</strong>' in html
    )
    assert "<li>one</li>" in html and "<li>two</li>" in html
    assert "<code>code</code>" in html
    assert "<pre><code>block\n</code></pre>" in html


def test_tables_and_strikethrough() -> None:
    html = render_markdown("| a | b |\n|---|:-:|\n| 1 | 2 |\n\n~~gone~~")
    assert "<table>" in html and "<td>1</td>" in html
    assert "<del>gone</del>" in html or "<s>gone</s>" in html


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "<iframe src='https://evil.example'></iframe>",
        '<a href="javascript:alert(1)">x</a>',
    ],
)
def test_raw_html_is_shown_as_text(text: str) -> None:
    html = render_markdown(text)
    assert "<script" not in html and "<img" not in html and "<iframe" not in html
    assert "&lt;" in html  # the markup is there, as text


@pytest.mark.parametrize(
    "link",
    [
        "[x](javascript:alert(1))",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "[x](file:///etc/passwd)",
    ],
)
def test_dangerous_links_are_not_links(link: str) -> None:
    html = render_markdown(link)
    assert "href" not in html


def test_links_open_safely() -> None:
    html = render_markdown("[shop](https://shop.example.com/a?b=1)")
    assert 'href="https://shop.example.com/a?b=1"' in html
    assert 'rel="noopener noreferrer nofollow"' in html


def test_images_are_links_not_requests() -> None:
    html = render_markdown("![tracking pixel](https://evil.example/p.gif)")
    assert "<img" not in html


def test_redaction_placeholders_survive() -> None:
    html = render_markdown("Write to [email] or call [phone ••0958].")
    assert "[email]" in html and "[phone ••0958]" in html


def test_plain_text_for_snippets() -> None:
    assert markdown_text("I'm **sorry**:\n\n1. `ORD-1`\n2. <b>x</b>") == "I'm sorry: ORD-1 <b>x</b>"
