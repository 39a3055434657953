"""A turn of many tool calls (issue 35): the page shows its first and last calls and how many
lie between, the rest on demand; the page stays small and its query count does not grow."""

from __future__ import annotations

import re
from typing import Any

from django.db import connections
from django.test.utils import CaptureQueriesContext

from audit.models import AuditEvent
from conversations.workspace.folds import KEEP_FIRST, KEEP_LAST, PART_CHUNK
from tests.workspace.long_turn import long_turn

CALL_ROW = re.compile(r'<div class="call tone-[a-z]+" id="call-([0-9]+-[0-9]+)"')


def _queries(client: Any, url: str) -> tuple[int, bytes]:
    with (
        CaptureQueriesContext(connections["default"]) as default,
        CaptureQueriesContext(connections["keys"]) as keys,
    ):
        response = client.get(url)
    assert response.status_code == 200
    return len(default) + len(keys), response.content


def test_a_long_turn_shows_its_first_and_last_calls_and_a_count(client: Any, agent: Any) -> None:
    conversation = long_turn(300)
    client.force_login(agent)
    html = client.get(f"/conversations/{conversation.pk}/").content.decode()
    keys = CALL_ROW.findall(html)
    assert len(keys) == KEEP_FIRST + KEEP_LAST
    middle = 300 - KEEP_FIRST - KEEP_LAST
    assert f'data-folded="{middle}"' in html
    assert f"… {middle} more tool calls in this turn" in html
    # The header still counts every call, and its failed calls link into the fold.
    assert "300 tool calls" in html
    fold = re.search(r'<section class="fold" id="(fold-m\d+)"', html)
    assert fold is not None
    assert f'href="#{fold.group(1)}" class="flag">1 failed</a>' in html  # call 150, folded
    assert "ORD-7000150" not in html  # a folded call's identifier is not on the page


def test_the_folded_calls_load_in_chunks(client: Any, agent: Any) -> None:
    conversation = long_turn(500)
    client.force_login(agent)
    html = client.get(f"/conversations/{conversation.pk}/").content.decode()
    link = re.search(r'hx-get="(/conversations/\d+/turns/(m\d+)/parts/\?from=(\d+))"', html)
    assert link is not None
    seen = list(CALL_ROW.findall(html))
    url: str | None = link.group(1)
    chunks = 0
    while url is not None:
        before = AuditEvent.objects.count()
        response = client.get(url, HTTP_HX_REQUEST="true")
        assert response.status_code == 200
        fragment = response.content.decode()
        assert "<html" not in fragment
        assert AuditEvent.objects.count() == before + 1
        assert AuditEvent.objects.order_by("-pk").first().details == {"page": "turn-parts"}
        rows = CALL_ROW.findall(fragment)
        assert 0 < len(rows) <= PART_CHUNK
        seen.extend(rows)
        chunks += 1
        more = re.search(r'hx-get="(/conversations/\d+/turns/m\d+/parts/[^"]+)"', fragment)
        url = more.group(1).replace("&amp;", "&") if more else None
    assert chunks == 3  # 494 folded calls, 200 at a time
    # Every call once, in the turn's order.
    assert len(seen) == len(set(seen)) == 500
    positions = sorted(seen, key=lambda k: int(k.split("-")[1]))
    assert (
        sorted(
            seen[:KEEP_FIRST] + seen[-KEEP_LAST:] + seen[KEEP_FIRST:-KEEP_LAST],
            key=lambda k: int(k.split("-")[1]),
        )
        == positions
    )


def test_the_fold_is_read_like_the_page(client: Any, agent: Any) -> None:
    from tests.factories import UserFactory

    hidden = long_turn(40, queue="shipping")  # not the agent's queue
    ok = long_turn(40, name="conv-ok")
    client.force_login(agent)
    html = client.get(f"/conversations/{ok.pk}/").content.decode()
    found = re.search(r'hx-get="/conversations/\d+/turns/(m\d+)/parts/\?from=(\d+)"', html)
    assert found is not None
    turn, start = found.group(1), int(found.group(2))
    parts = f"/conversations/{ok.pk}/turns/{turn}/parts/"
    assert (
        client.get(f"/conversations/{hidden.pk}/turns/{turn}/parts/?from={start}").status_code
        == 404
    )
    assert client.get(f"{parts}?from=x").status_code == 400
    assert client.get(f"{parts}?from=0").status_code == 404  # before the fold
    assert client.get(f"/conversations/{ok.pk}/turns/m999/parts/?from={start}").status_code == 404
    page = client.get(f"{parts}?from={start}")
    assert page.status_code == 200 and b"<html" in page.content  # without JavaScript: a page
    client.logout()
    assert client.get(f"{parts}?from={start}").status_code == 302
    client.force_login(UserFactory(username="nobody"))
    assert client.get(f"{parts}?from={start}").status_code in (403, 404)


def test_ten_thousand_calls_make_a_page_under_a_megabyte_in_as_many_queries(
    client: Any, agent: Any
) -> None:
    short = long_turn(20, name="conv-short-turn")
    long = long_turn(10_000)
    client.force_login(agent)
    client.get(f"/conversations/{short.pk}/")  # process caches warm
    short_queries, _ = _queries(client, f"/conversations/{short.pk}/")
    long_queries, body = _queries(client, f"/conversations/{long.pk}/")
    assert len(body) < 1_000_000, len(body)
    assert long_queries == short_queries
    html = body.decode()
    assert "10,000 tool calls" in html or "10000 tool calls" in html
    assert f'data-folded="{10_000 - KEEP_FIRST - KEEP_LAST}"' in html
    assert 'class="wf-row wf-fold"' in html  # the timing panel folds its bars too
    assert "more (each in its tool call)" in html  # and the customer panel its identifiers
