"""A finding cut across deltas is never published in part: a card number in 2, 3 and 8 deltas,
an IBAN, an e-mail address and a key, in each format's own text deltas."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from conversations.live.filters import filter_for

CARD = "4242 4242 4242 4242"
SECRETS = {
    "card": (CARD, ["4242", "242 4", "42 42"]),
    "iban": ("GB82 WEST 1234 5698 7654 32", ["WEST", "5698", "GB82"]),
    "email": ("jane.doe@example.com", ["jane", "example.com", "doe@"]),
    "key": ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", ["AbCdEf", "0123456789"]),
}
_PLACEHOLDER = re.compile(r"\[[^\]]*\]")


def pieces_of(text: str, secret: str, n: int) -> list[str]:
    """``text`` cut so that ``secret`` (inside it) spans ``n`` deltas."""
    start = text.index(secret)
    end = start + len(secret)
    bounds = [start + round(k * len(secret) / n) for k in range(1, n)]
    cuts = [0, start + 1, *bounds, end - 1, len(text)]
    cuts = sorted(set(cuts))
    return [text[a:b] for a, b in itertools.pairwise(cuts)]


def _sse(events: list[dict[str, object]]) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


def stream(fmt: str, deltas: list[str]) -> str:
    if fmt == "anthropic.messages":
        return _sse(
            [
                {"type": "message_start", "message": {"id": "m", "content": []}},
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                *(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": d},
                    }
                    for d in deltas
                ),
                {"type": "content_block_stop", "index": 0},
                {"type": "message_stop"},
            ]
        )
    if fmt == "openai.chat":
        return (
            _sse(
                [{"choices": [{"index": 0, "delta": {"content": d}}]} for d in deltas]
                + [{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
            )
            + "data: [DONE]\n\n"
        )
    if fmt == "openai.responses":
        return _sse(
            [
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": {"type": "message"},
                },
                {
                    "type": "response.content_part.added",
                    "output_index": 0,
                    "content_index": 0,
                    "part": {"type": "output_text", "text": ""},
                },
                *(
                    {
                        "type": "response.output_text.delta",
                        "output_index": 0,
                        "content_index": 0,
                        "delta": d,
                    }
                    for d in deltas
                ),
                {"type": "response.output_text.done", "output_index": 0, "content_index": 0},
                {"type": "response.completed", "response": {"status": "completed"}},
            ]
        )
    return (
        _sse(
            [
                {"type": "start"},
                {"type": "text-start", "id": "t"},
                *({"type": "text-delta", "id": "t", "delta": d} for d in deltas),
                {"type": "text-end", "id": "t"},
                {"type": "finish"},
            ]
        )
        + "data: [DONE]\n\n"
    )


FORMATS = ["anthropic.messages", "openai.chat", "openai.responses", "ai-sdk.ui"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", list(SECRETS))
@pytest.mark.parametrize("n", [2, 3, 8])
def test_a_finding_cut_across_deltas_is_never_published_in_part(
    fmt: str, kind: str, n: int
) -> None:
    secret, parts = SECRETS[kind]
    text = (
        "Thanks for waiting. " * 4 + f"Your details: {secret} as you gave them. " + "Bye now. " * 12
    )
    f = filter_for(fmt)
    published: list[str] = []
    state = None
    # each delta in its own SSE chunk, and each chunk through a state round trip
    sse = stream(fmt, pieces_of(text, secret, n))
    for t, chunk in enumerate(sse.split("\n\n")):
        f = filter_for(fmt, json.loads(json.dumps(state)) if state else None)
        published += [e["text"] for e in f.feed(chunk + "\n\n", now=t) if e["type"] == "text"]
        state = f.state()
    f = filter_for(fmt, state)
    published += [e["text"] for e in f.close(now=99) if e["type"] == "text"]
    for piece in published:
        outside = _PLACEHOLDER.sub("", piece)
        for part in parts:
            assert part not in outside, (piece, part)
    whole = "".join(published)
    assert secret not in whole and "as you gave them" in whole
    # the held-back text stays encrypted-only: the public state never has it
    assert not any(p in json.dumps(state["public"]) for p in parts)  # type: ignore[index]


def test_the_hold_back_is_bounded() -> None:
    """Text without findings leaves at most HOLD characters (and a word) behind the newest."""
    from conversations.live.holdback import HOLD

    f = filter_for("openai.chat")
    words = ("lorem ipsum dolor sit amet " * 20).split(" ")
    sent = received = 0
    for w in words:
        piece = w + " "
        sent += len(piece)
        chunk = f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': piece}}]})}\n\n"
        received += sum(len(e["text"]) for e in f.feed(chunk, now=0) if e["type"] == "text")
        assert sent - received <= HOLD + 12
