"""The inline ``<think>`` convention (``formats/live.py``): read whole at ingest, piece by piece
live, the two agree on any text cut anywhere; the live state never holds a character of the
deliberation."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.blocks import BlockClass
from conversations.formats import get
from conversations.formats.live import InlineSplit, split_inline
from conversations.formats.profile import Inline

RULE = Inline(block_types=frozenset({"content"}))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>plan</think>\n\nAnswer", (19, "Answer")),
        ("\n <think>plan</think>Answer", (19, "Answer")),
        ("<think>plan, never closed", (25, "")),
        ("<think></think>", (15, "")),
        ("Answer <think>not first</think>", (None, "Answer <think>not first</think>")),
        ("  <thin", (5, "")),
        ("  ", (None, "  ")),
        ("<think >spaced tag", (18, "")),  # an element HTML reads as <think>
        ("<THINK>plan</THINK>Answer", (19, "Answer")),
        ('<think reason="x">plan</think >Answer', (31, "Answer")),
        ("<thinking>not the tag</thinking>", (None, "<thinking>not the tag</thinking>")),
        ("<Think a=1", (10, "")),
        ("", (None, "")),
    ],
)
def test_split_inline(text: str, expected: tuple[int | None, str]) -> None:
    assert split_inline(text, RULE) == expected


_TEXT = st.lists(
    st.sampled_from(
        [
            *["<think>", "</think>", "<th", "ink>", "</", "think", ">", " ", "\n", "a"],
            *["<THINK>", "</Think>", '<think a="1">', "</think >", "<think ", "/", "TH", "K"],
        ]
    ),
    max_size=14,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_TEXT, cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8))
def test_piece_by_piece_is_the_whole_read(text: str, cuts: list[int]) -> None:
    bounds = sorted({c for c in cuts if c < len(text)} | {0, len(text)})
    split, visible, hidden = InlineSplit(RULE), [], 0
    for a, b in itertools.pairwise(bounds):
        state = json.loads(json.dumps(split.state()))  # kept in Redis between chunks
        split = InlineSplit(RULE, state)
        shown, read = split.feed(text[a:b])
        visible.append(shown)
        hidden += read
        assert set(split.state()["ws"]) <= set(" \t\n\r")  # whitespace, never a thought
    visible.append(split.close())
    span, expected = split_inline(text, RULE)
    assert "".join(visible) == expected
    if span is None:
        assert hidden == 0
    elif re.match(r"[ \t\n\r]*<think(?:[ \t\n\r/][^>]*)?>", text, re.IGNORECASE):
        # Every character up to the closing tag was counted (the tags included), none after.
        assert hidden == span


def test_a_chat_content_with_a_think_span_is_a_never_block_and_the_answer() -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    message = {"role": "assistant", "content": "<think>MARKER-1 plan</think>\n\nThe answer."}
    response = {"id": "c", "model": "m", "choices": [{"index": 0, "message": message}]}
    parsed = get("openai.chat").parse(request=json.dumps(request), response=json.dumps(response))
    blocks = parsed.output[0].blocks
    assert [(b.type, b.cls, b.text) for b in blocks] == [
        ("think", BlockClass.NEVER, None),
        ("content", BlockClass.VISIBLE, "The answer."),
    ]
    # The stored message is the one received, byte for byte: replay gives the span back.
    assert "MARKER-1" in parsed.output[0].raw
