"""A property: exchanges with extreme but valid values (timestamps at the window's edges in any
offset within ±14:00, counts and latencies at their columns' limits, ids and queues of the
longest length in any script, text with controls, bidi marks, emoji and markup) are stored, and
every page that shows them still answers 200: the list, its filters and search, the page, the
admin's changelists and change page, the audit log, the replay.

``EXTREME_EXAMPLES`` sets how many (default 15; more for a deeper run).
"""

from __future__ import annotations

import itertools
import json
import os
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from conversations import bounds
from conversations.models import Conversation
from tests.conftest import post_json
from tests.console.conftest import World, client_for

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
EXAMPLES = int(os.environ.get("EXTREME_EXAMPLES", "15"))
COUNTER = itertools.count()

# Any character PostgreSQL text holds (no NUL, no lone surrogate), with the awkward ones often.
AWKWARD = st.sampled_from(
    ["\u202e", "\u200b", "\ufeff", "\U0001f600", "<script>x</script>", "{{ x }}", "\n", "\t",
     "\x01", "\x7f", "'\"", "%s", "\\", "&amp;", "\u0301", "\U00010348", "ﷺ", "\U0001d54f"]
)  # fmt: skip
CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
TEXT = st.lists(st.one_of(CHARS, AWKWARD), min_size=1, max_size=40).map("".join)
EDGE_COUNT = st.sampled_from([0, 1, bounds.INT32_MAX]) | st.integers(0, bounds.INT32_MAX)
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)


@st.composite
def timestamps(draw: Any) -> str:
    """An instant in the window (often at its edges), written in an offset within ±14:00."""
    latest = datetime.now(UTC) + timedelta(hours=23)
    at = draw(
        st.sampled_from([EARLIEST, latest])
        | st.datetimes(
            min_value=EARLIEST.replace(tzinfo=None), max_value=latest.replace(tzinfo=None)
        ).map(lambda d: d.replace(tzinfo=UTC))
    )
    minutes = draw(st.sampled_from([-14 * 60, 14 * 60, 0, 330, -570]) | st.integers(-840, 840))
    zone = timezone(timedelta(minutes=minutes))
    return at.astimezone(zone).isoformat()


@st.composite
def exchanges(draw: Any) -> dict[str, Any]:
    n = next(COUNTER)
    conversation = (f"x{n}-" + draw(TEXT))[:200]
    queue = draw(TEXT)[:100]
    question = draw(TEXT)
    answer = draw(TEXT)
    usage = {
        "input_tokens": draw(EDGE_COUNT),
        "output_tokens": draw(EDGE_COUNT),
        "cache_read_input_tokens": draw(EDGE_COUNT),
        "cache_creation_input_tokens": draw(EDGE_COUNT),
    }
    return {
        "conversation": conversation,
        "customer": (f"c{n}-" + draw(TEXT))[:200],
        "format": "anthropic.messages",
        "request": json.dumps(
            {
                "model": draw(TEXT)[:200],
                "max_tokens": draw(EDGE_COUNT),
                "messages": [{"role": "user", "content": question}],
            },
            ensure_ascii=draw(st.booleans()),
        ),
        "response": json.dumps(
            {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": draw(TEXT)[:200],
                "content": [
                    {"type": "thinking", "thinking": "MARKER-EXTREME-THINKING", "signature": "s"},
                    {"type": "text", "text": answer},
                ],
                "stop_reason": draw(st.sampled_from(["end_turn", "max_tokens", "refusal"])),
                "usage": usage,
            }
        ),
        "started_at": draw(timestamps()),
        "latency_ms": draw(EDGE_COUNT),
        "labels": {"queue": queue, "ticket": draw(TEXT)[:100]},
    }


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same examples on every run
    # Each example is a dozen pages: a failure is shown as found, not minimised for minutes.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=exchanges())
def test_extreme_valid_exchanges_are_stored_and_every_page_answers(
    api: APIClient, client: Client, world: World, body: dict[str, Any]
) -> None:
    response = post_json(api, "/api/v1/exchanges", body)
    assert response.status_code == 201, response.content
    row = Conversation.objects.get(external_id=body["conversation"])
    client_for(client, world, "admin")
    queue = quote(body["labels"]["queue"])
    urls = [
        "/",
        f"/?queue={queue}",
        f"/?q={quote(body['conversation'][:50])}",
        f"/?customer={quote(body['customer'])}",
        "/?since=2000-01-01",
        f"/conversations/{row.pk}/",
        "/admin/conversations/conversation/",
        f"/admin/conversations/conversation/?queue={queue}",
        f"/admin/conversations/conversation/?q={quote(body['conversation'][:50])}",
        f"/admin/conversations/conversation/{row.pk}/change/",
        "/admin/conversations/exchange/",
    ]
    for url in urls:
        page = client.get(url)
        assert page.status_code in (200, 302), url  # 302: a search that names one conversation
        assert b"MARKER-EXTREME-THINKING" not in page.content, url
    client_for(client, world, "compliance")
    assert client.get("/audit/").status_code == 200
    replay = api.get(f"/api/v1/conversations/{quote(body['conversation'], safe='')}/messages")
    assert replay.status_code == 200
