"""A finding cut across deltas is never published in part: a card number in 2, 3 and 8 deltas,
an IBAN, an e-mail address and a key, in each format's own text deltas."""

from __future__ import annotations

import base64
import itertools
import json
import re

import pytest

from conversations.formats import get, names
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


def stream(fmt: str, deltas: list[str]) -> str:
    """A whole stream of ``fmt`` whose answer is ``deltas``, each in its own event (the format
    kit's live sample, ``live.text``)."""
    return get(fmt).kit.live.text(deltas)


FORMATS = names()


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
    chunks = [chunk + "\n\n" for chunk in sse.split("\n\n")]
    if get(fmt).live.binary:  # its bytes (as Latin-1 text, as the engine reads them), cut often
        data = base64.b64decode(sse).decode("latin-1")
        chunks = [data[i : i + 17] for i in range(0, len(data), 17)]
    for t, chunk in enumerate(chunks):
        f = filter_for(fmt, json.loads(json.dumps(state)) if state else None)
        published += [e["text"] for e in f.feed(chunk, now=t) if e["type"] == "text"]
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
