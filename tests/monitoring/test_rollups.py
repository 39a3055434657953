"""Rollups kept as exchanges are stored and erased; history rewrites classified, counted, shown."""

from __future__ import annotations

from typing import Any

import pytest

from conversations.models import Conversation, Exchange, Rollup
from conversations.monitoring import buckets, sketches
from conversations.monitoring.facts import FINISHES
from conversations.monitoring.rollups import FIELDS, contribution, rollups_rebuild
from retention.services.erase import conversation_erase
from tests.factories import UserFactory, roles
from tests.monitoring.helpers import (
    assistant,
    store,
    text,
    thinking,
    tool_result,
    tool_use,
    user,
)

pytestmark = pytest.mark.django_db


def summed(**filters: Any) -> dict[str, Any]:
    """Every rollup column summed over the shards (and hours) matching ``filters``."""
    out: dict[str, Any] = {}
    for r in Rollup.objects.filter(**filters).values():
        for k, v in r.items():
            if k in {"id", "hour", "queue", "requested_model", "served_model", "shard"}:
                continue
            if isinstance(v, list):
                acc = out.setdefault(k, [0] * len(v))
                for i, n in enumerate(v):
                    acc[i] += n
            elif isinstance(v, dict):
                sketches.add(out.setdefault(k, {}), v)
            else:
                out[k] = out.get(k, 0) + v
    return out


def recomputed() -> dict[str, Any]:
    """The same sums, straight from the stored exchanges."""
    out: dict[str, Any] = {}
    for row in Exchange.objects.values(*FIELDS):
        d = contribution(row)
        for k, v in d.sums.items():
            out[k] = out.get(k, 0) + v
        for k, arr in d.arrays.items():
            acc = out.setdefault(k, [0] * len(arr))
            for i, n in enumerate(arr):
                acc[i] += n
        for k, bins in d.sketches.items():
            sketches.add(out.setdefault(k, {}), bins)
    return out


def test_bucket_edges_hold_every_value() -> None:
    for v in [*range(2000), 2**20, 2**31 - 1]:
        b = buckets.bucket(v)
        assert buckets.lower(b) <= v <= buckets.upper(b)
    values = [3, 10, 40, 41, 42, 100, 700, 2000, 5000, 9000]
    hist = buckets.empty()
    for v in values:
        hist[buckets.bucket(v)] += 1
    for q in (50, 90, 99):
        exact = buckets.exact_percentile(values, q)
        assert exact is not None
        got = buckets.percentile(hist, q)
        assert got is not None and got >= exact
        assert buckets.bucket(got) == buckets.bucket(exact)


def test_exchanges_add_to_their_hour_queue_model_and_snapshot() -> None:
    store("a", [user("hi")], [text("hello")], output=40, latency=900)
    store(
        "b",
        [user("hi")],
        [thinking(), text("cut")],
        stop="max_tokens",
        output=1024,
        reasoning=1000,
        latency=5000,
    )
    store("c", [user("hi")], [text("other")], queue="shipping", snapshot="claude-x-1")
    billing = summed(queue="billing", served_model="claude-sonnet-4-5-20250929")
    assert billing["exchanges"] == 2
    assert billing["conversations"] == 2
    assert billing["truncated"] == 1
    assert billing["truncated_reasoning_tokens"] == 1000
    assert billing["finishes"][FINISHES.index("length")] == 1
    assert billing["finishes"][FINISHES.index("stop")] == 1
    assert billing["output_tokens"] == 1064
    assert billing["reasoning_tokens"] == 1000
    assert billing["with_reasoning"] == 1
    assert billing["output_hist"][buckets.bucket(1024)] == 1
    assert billing["latency_hist"][buckets.bucket(5000)] == 1
    assert summed(queue="shipping")["exchanges"] == 1
    assert Rollup.objects.filter(queue="billing").values("requested_model").distinct().count() == 1
    # No conversation id, no text: the table has no column that could hold either.
    names = {f.name for f in Rollup._meta.get_fields()}
    assert not names & {"conversation", "conversation_id", "text", "external_id"}
    assert summed() == recomputed()


def test_tool_counts_repeats_and_errors() -> None:
    q = user("where is my order")
    call1 = assistant(tool_use("t1", args={"order_id": "7"}))
    store("loop", [q], call1["content"], stop="tool_use")
    # The same call again, with the same arguments, after an error.
    store(
        "loop",
        [q, call1, user_blocks(tool_result("t1", error=True))],
        [tool_use("t2", args={"order_id": "7"})],
        stop="tool_use",
    )
    e = Exchange.objects.get(conversation__external_id="loop", ordinal=2)
    assert (e.tool_call_count, e.repeated_tool_calls, e.tool_results, e.tool_errors) == (1, 1, 1, 1)
    s = summed()
    assert s["tool_calls"] == 2
    assert s["repeated_tool_calls"] == 1
    assert s["looping"] == 1
    assert s["tool_errors"] == 1
    assert s == recomputed()


def user_blocks(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def test_erasure_takes_the_conversation_out_of_the_rollups() -> None:
    """The rule: at every commit, the rollups equal the aggregate of the exchanges stored. An
    erased conversation's share is subtracted in the erasing transaction."""
    store("keep", [user("hi")], [text("a")], output=30)
    store(
        "gone", [user("hi")], [thinking(), text("b")], stop="max_tokens", output=900, reasoning=800
    )
    gone = Conversation.objects.get(external_id="gone")
    before = summed()
    assert before["exchanges"] == 2 and before["truncated"] == 1
    conversation_erase(gone.pk)
    after = summed()
    assert after == recomputed()
    assert after["exchanges"] == 1
    assert after["truncated"] == 0
    assert after["output_hist"][buckets.bucket(900)] == 0
    assert after["output_sketch"] == sketches.of([30])  # the erased bin is gone, not zero
    assert sum(after["output_hist"]) == 1
    # A rebuild from the rows finds the same numbers.
    rollups_rebuild()
    assert summed() == after


# --- history rewrites: one test per kind -----------------------------------------------------


def loop_history() -> tuple[dict[str, Any], dict[str, Any]]:
    q = user("refund order 7")
    call = assistant(thinking(), tool_use("t1", args={"order_id": "7"}))
    store("rw", [q], call["content"], stop="tool_use")
    return q, call


def page_text(client: Any) -> str:
    """The conversation page as a console admin reads it (the backend's conformance is for
    admins: tests/console/test_conformance_wording.py reads the agents' pages)."""
    roles()
    admin = UserFactory(username="admin-rw", groups=["admin"], queues=["billing"])
    client.force_login(admin)
    pk = Conversation.objects.get(external_id="rw").pk
    response = client.get(f"/conversations/{pk}/")
    assert response.status_code == 200
    return response.content.decode()


def kind_of_last() -> str:
    return Exchange.objects.filter(conversation__external_id="rw").latest("ordinal").rewrite_kind


def test_reasoning_dropped_inside_a_tool_loop(client: Any) -> None:
    q, _call = loop_history()
    dropped = assistant(tool_use("t1", args={"order_id": "7"}))  # the thinking block left out
    store("rw", [q, dropped, user_blocks(tool_result("t1"))], [text("refunded")])
    assert kind_of_last() == "tool_loop_reasoning"
    assert summed()["rewrite_tool_loop_reasoning"] == 1
    assert "reasoning was dropped or edited inside an open tool loop" in page_text(client)


def test_reasoning_edited_inside_a_tool_loop(client: Any) -> None:
    q, _call = loop_history()
    edited = assistant(thinking("another plan"), tool_use("t1", args={"order_id": "7"}))
    store("rw", [q, edited, user_blocks(tool_result("t1"))], [text("refunded")])
    assert kind_of_last() == "tool_loop_reasoning"


def test_a_block_edited(client: Any) -> None:
    store("rw", [user("hello")], [text("hi, how can I help?")])
    store(
        "rw",
        [user("hello"), assistant(text("hi, how may I help?")), user("refund")],
        [text("done")],
    )
    assert kind_of_last() == "edited"
    assert Exchange.objects.filter(rewrite_kind="edited").get().history_rewritten
    assert summed()["rewrite_edited"] == 1
    html = page_text(client)
    assert "a text or thinking block was edited or dropped" in html
    assert "from message 1" in html


def test_messages_reordered(client: Any) -> None:
    a, b = user("first"), user("second")
    store("rw", [a], [text("one")])
    store("rw", [a, assistant(text("one")), b], [text("two")])
    store(
        "rw", [a, b, assistant(text("one")), assistant(text("two")), user("third")], [text("three")]
    )
    assert kind_of_last() == "reordered"
    assert summed()["rewrite_reordered"] == 1
    assert "sent in another order" in page_text(client)


def test_only_reserialised(client: Any) -> None:
    store("rw", [user("hello")], [text("hi")])
    store("rw", [user("hello"), assistant(text("hi")), user("more")], [text("ok")], indent=2)
    e = Exchange.objects.filter(conversation__external_id="rw").latest("ordinal")
    assert e.rewrite_kind == "reserialised"
    assert e.history_rewritten is False  # the same message to the console
    assert summed()["rewrite_reserialised"] == 1
    html = page_text(client)
    assert "only re-serialised" in html
    assert "MARKER-REASONING" not in html


def test_compaction_merges_shards_and_keeps_the_sums() -> None:
    from datetime import timedelta

    from django.utils import timezone

    from conversations.monitoring.rollups import hour_of, rollups_compact

    for i in range(12):  # twelve conversations: several shards of one key
        store(f"s-{i}", [user("hi")], [text("a")], output=20 + i)
    before = summed()
    assert Rollup.objects.count() > 1
    now = hour_of(timezone.now())
    assert rollups_compact(before=now + timedelta(hours=1), after=now - timedelta(days=1)) == 1
    assert Rollup.objects.count() == 1 and Rollup.objects.get().shard == 0
    assert summed() == before == recomputed()
    # An erasure after compaction still subtracts exactly.
    conversation_erase(Conversation.objects.get(external_id="s-3").pk)
    assert summed() == recomputed()
    rollups_compact(before=now + timedelta(hours=1), after=now - timedelta(days=1))
    assert Rollup.objects.count() == 1 and summed() == recomputed()
