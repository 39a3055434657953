"""A stream the chat stopped reading (``cancelled``): every recorded stream, cut anywhere, is
what arrived, never an error for its missing end; the same cut without ``cancelled`` is refused
as ``truncated_stream``; a whole stream gives the same message either way.

The cut points: every event boundary, and inside events (mid-line, mid-JSON), from a seeded
random generator so a failure names its cut.
"""

from __future__ import annotations

import random

import pytest

from conversations.blocks import BlockClass
from conversations.formats import get
from conversations.formats.base import FormatError
from tests.conversations.formats.differential.runner import request_for
from tests.conversations.formats.differential.test_differential import FIXTURE_STREAMS
from tests.providers import endpoint_of

SEED = 20261201


def _cuts(stream: str, rng: random.Random) -> list[int]:
    boundaries = [i + 2 for i in range(len(stream)) if stream.startswith("\n\n", i)]
    inside = [rng.randrange(1, len(stream)) for _ in range(12)]
    return sorted({*boundaries[:-1], *inside})


def _parse(fixture, stream: str, *, cancelled: bool):  # type: ignore[no-untyped-def]
    return get(fixture.format).parse(
        request=fixture.request or request_for(fixture.format),
        stream=stream,
        cancelled=cancelled,
        endpoint=endpoint_of(fixture.format),
    )


@pytest.mark.parametrize("fixture", FIXTURE_STREAMS, ids=lambda f: f.name)
def test_a_cancelled_stream_is_what_arrived_wherever_it_was_cut(fixture) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(f"{SEED}:{fixture.name}")
    try:
        whole = _parse(fixture, fixture.stream, cancelled=False)
    except FormatError as exc:
        # A stream refused for what it holds (a hand-made hostile one) stays refused.
        with pytest.raises(FormatError) as also:
            _parse(fixture, fixture.stream, cancelled=True)
        assert also.value.code == exc.code != "truncated_stream"
        return
    assert not whole.params.cancelled
    flagged = _parse(fixture, fixture.stream, cancelled=True)
    assert flagged.params.cancelled
    assert [m.raw for m in flagged.output] == [m.raw for m in whole.output]

    visible = "".join(
        b.text or "" for m in whole.output for b in m.blocks if b.cls is BlockClass.VISIBLE
    )
    refused = 0
    for cut in _cuts(fixture.stream, rng):
        part = fixture.stream[:cut]
        try:
            _parse(fixture, part, cancelled=False)
        except FormatError as exc:
            if exc.code == "truncated_stream":
                refused += 1
        try:
            parsed = _parse(fixture, part, cancelled=True)
        except FormatError as exc:
            # Only a content error of the part that arrived may refuse it, never its cut end.
            assert exc.code != "truncated_stream", f"cut at {cut}: {exc}"
            continue
        assert parsed.params.cancelled
        text = "".join(
            b.text or "" for m in parsed.output for b in m.blocks if b.cls is BlockClass.VISIBLE
        )
        # What arrived is a beginning of the whole answer's visible text (but the whitespace
        # before an inline <think> span, which goes with the span once its tag is whole).
        assert visible.lstrip().startswith(text.lstrip()), f"cut at {cut}: {text!r} is no prefix"
    assert refused, "no cut of this stream was refused without cancelled: the test cut nothing"


def test_cancelled_needs_a_stream() -> None:
    fmt = "anthropic.messages"
    with pytest.raises(ValueError, match="only a stream"):
        get(fmt).parse(request=request_for(fmt), response="{}", cancelled=True)
