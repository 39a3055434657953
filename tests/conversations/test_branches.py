"""Conversations that branch (DESIGN section 20, ``conversations/branches.py``): a regenerate, an
edit or a restarted step is a branch recorded with its kind and position, never a rewrite; later
requests compare with their own branch; every path replays byte for byte and shows on the page;
a real change of the model's messages is still a rewrite."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from conversations.branches import EDITED, REGENERATED, RESTARTED, Node, Tree, branch_words
from conversations.models import Conversation, Exchange
from tests.conftest import post_json
from tests.factories import UserFactory, roles

URL = "/api/v1/exchanges"


# --- the tree, pure -----------------------------------------------------------------------------


def test_paths_are_steps_from_their_parent() -> None:
    tree = Tree(
        [
            Node(1, None, 0, (0, 1)),  # u1 a1
            Node(2, 1, 2, (2, 3)),  # + u2 a2
            Node(3, 2, 3, (4,), REGENERATED, 3),  # u1 a1 u2, a2 regenerated
            Node(4, 3, 4, (5, 6)),  # + u3 a3 on the new branch
        ]
    )
    assert tree.path(2) == (0, 1, 2, 3)
    assert tree.path(3) == (0, 1, 2, 4)
    assert tree.path(4) == (0, 1, 2, 4, 5, 6)
    assert tree.tips() == [4, 2]  # the branch, and the answer it replaced
    assert tree.latest == 4
    assert tree.chain(4) == [1, 2, 3, 4]
    (point,) = tree.branch_points(4)
    assert (point.at, point.kind, point.other, point.left) == (3, REGENERATED, 2, True)
    assert point.words == "regenerated at message 4"
    (back,) = tree.branch_points(2)
    assert (back.at, back.other, back.left) == (3, 4, False)


def test_a_bad_parent_never_loops_or_fails() -> None:
    tree = Tree([Node(1, None, 0, (0,)), Node(2, 2, 5, (1,)), Node(3, 9, 0, (2,))])
    assert tree.path(2) == (1,)  # a parent that is not earlier ends the chain
    assert tree.path(3) == (2,)  # a parent that does not exist too
    assert branch_words("nonsense", 1) == "" and branch_words(EDITED, None) == ""


# --- through the API ----------------------------------------------------------------------------


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def post(
    api: APIClient,
    messages: list[Any],
    reply: list[Any] | str,
    *,
    conversation: str = "b1",
    stop: str = "end_turn",
) -> dict[str, Any]:
    content = [{"type": "text", "text": reply}] if isinstance(reply, str) else reply
    response = {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    body = {
        "conversation": conversation,
        "customer": "cus-b",
        "format": "anthropic.messages",
        "request": json.dumps(
            {"model": "claude-sonnet-4-5", "max_tokens": 512, "messages": messages}
        ),
        "response": json.dumps(response),
        "labels": {"queue": "billing"},
    }
    answer = post_json(api, URL, body)
    assert answer.status_code == 201, answer.content
    return answer.json()


def replay(api: APIClient, exchange: int | None = None, conversation: str = "b1") -> list[Any]:
    query = f"?exchange={exchange}" if exchange is not None else ""
    response = api.get(f"/api/v1/conversations/{conversation}/messages{query}")
    assert response.status_code == 200, response.content
    return json.loads(response.content)["messages"]


def flagged(conversation: str = "b1") -> list[tuple[int, str]]:
    return [
        (e.ordinal, e.rewrite_kind)
        for e in Exchange.objects.filter(conversation__external_id=conversation)
        if e.history_rewritten or e.rewrite_kind not in ("", "unseen", "reserialised")
    ]


TURN = [user("Where is ORD-1?"), said("Shipped."), user("When will it arrive?")]


@pytest.mark.django_db
def test_a_regenerate_is_a_branch_and_both_paths_replay(api: APIClient) -> None:
    post(api, TURN[:1], "Shipped.")
    first = post(api, TURN, "Tomorrow.")
    again = post(api, TURN, "On Friday.")  # regenerate: the same history without its answer
    assert (again["branch"], again["branched_at"], again["history_rewritten"]) == (
        REGENERATED,
        3,
        False,
    )
    assert again["sequences"] == [4]  # only the new answer is stored
    assert replay(api) == [*TURN, said("On Friday.")]
    assert replay(api, first["exchange"]) == [*TURN, said("Tomorrow.")]
    # The customer goes on from the regenerated answer: compared with it, not the other.
    later = post(api, [*TURN, said("On Friday."), user("Thanks")], "You're welcome.")
    assert (later["branch"], later["history_rewritten"], later["sequences"]) == ("", False, [5, 6])
    assert flagged() == []


@pytest.mark.django_db
def test_an_edit_is_a_branch_and_going_back_to_the_old_one_continues_it(api: APIClient) -> None:
    post(api, TURN[:1], "Shipped.")
    old = post(api, TURN, "Tomorrow.")
    edited = [*TURN[:2], user("When will ORD-1 arrive, exactly?")]
    new = post(api, edited, "Tomorrow at 10.")
    assert (new["branch"], new["branched_at"], new["history_rewritten"]) == (EDITED, 2, False)
    # Back on the first branch (a chat that lets the customer switch): it goes on from there.
    back = post(api, [*TURN, said("Tomorrow."), user("Thanks")], "Welcome.")
    assert (back["branch"], back["history_rewritten"]) == ("", False)
    assert replay(api)[-3:] == [said("Tomorrow."), user("Thanks"), said("Welcome.")]
    assert replay(api, new["exchange"]) == [*edited, said("Tomorrow at 10.")]
    assert replay(api, old["exchange"]) == [*TURN, said("Tomorrow.")]
    assert flagged() == []


CALL = {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"id": "O-1"}}


def _answered(result: str) -> list[Any]:
    answer = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": result}],
    }
    return [user("Where is O-1?"), {"role": "assistant", "content": [CALL]}, answer]


@pytest.mark.django_db
def test_a_tool_run_again_is_a_restarted_step(api: APIClient) -> None:
    post(api, [user("Where is O-1?")], [CALL], stop="tool_use", conversation="loop")
    post(api, _answered("timeout"), "It timed out.", conversation="loop")
    again = post(api, _answered("shipped"), "Shipped.", conversation="loop")  # run again
    assert (again["branch"], again["branched_at"], again["history_rewritten"]) == (
        RESTARTED,
        2,
        False,
    )
    assert flagged("loop") == []


@pytest.mark.django_db
def test_a_changed_answer_of_the_model_is_still_a_rewrite_not_a_branch(api: APIClient) -> None:
    post(api, TURN[:1], "Shipped.")
    # The last answer edited before the next question: the model's own words changed.
    changed = post(api, [TURN[0], said("Shipped!"), TURN[2]], "Tomorrow.")
    assert (changed["history_rewritten"], changed["rewritten_at"], changed["branch"]) == (
        True,
        1,
        "",
    )
    # A message dropped with the rest sent again.
    post(api, [*TURN, said("Tomorrow."), user("Thanks")], "Welcome.", conversation="drop")
    dropped = post(api, [TURN[0], TURN[2], said("Tomorrow.")], "Hm.", conversation="drop")
    assert dropped["history_rewritten"] is True and dropped["branch"] == ""
    assert [k for _, k in flagged()] == ["edited"]


@pytest.mark.django_db
def test_a_previous_response_id_continues_its_own_path(api: APIClient) -> None:
    def responses(items: list[Any], text: str, rid: str, previous: str | None) -> dict[str, Any]:
        request: dict[str, Any] = {"model": "gpt-5.5", "input": items}
        if previous:
            request["previous_response_id"] = previous
        response = {
            "id": rid,
            "object": "response",
            "status": "completed",
            "model": "gpt-5.5",
            "output": [
                {
                    "type": "message",
                    "id": f"m_{rid}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text}],
                }
            ],
            "usage": {"input_tokens": 5, "output_tokens": 5},
        }
        body = {
            "conversation": "prev",
            "customer": "c",
            "format": "openai.responses",
            "request": json.dumps(request),
            "response": json.dumps(response),
        }
        answer = post_json(api, URL, body)
        assert answer.status_code == 201, answer.content
        return answer.json()

    responses([user("Hi")], "Hello.", "r1", None)
    responses([user("Order?")], "Which one?", "r2", "r1")
    # Another answer from r1: the customer asked something else there.
    branch = responses([user("Refund?")], "Sure.", "r3", "r1")
    assert (branch["branch"], branch["branched_at"]) == (RESTARTED, 2)
    assert [m.get("content") for m in replay(api, conversation="prev")][:3] == [
        "Hi",
        [{"type": "output_text", "text": "Hello."}],
        "Refund?",
    ]


# --- the page -----------------------------------------------------------------------------------


def _page(client: Any, conversation: str, query: str = "", *, role: str = "support_agent") -> Any:
    roles()
    reader = UserFactory(username=f"{role}-{conversation}", groups=[role], queues=["billing"])
    client.force_login(reader)
    pk = Conversation.objects.get(external_id=conversation).pk
    return client.get(f"/conversations/{pk}/{query}")


@pytest.mark.django_db
def test_the_page_shows_the_latest_path_and_where_it_branched(api: APIClient, client: Any) -> None:
    post(api, TURN[:1], "Shipped.")
    old = post(api, TURN, "MARK-OLD-ANSWER")
    new = post(api, TURN, "MARK-NEW-ANSWER")
    response = _page(client, "b1")
    assert response.status_code == 200
    html = response.content.decode()
    assert "MARK-NEW-ANSWER" in html and "MARK-OLD-ANSWER" not in html
    assert "Regenerated at message 4" in html
    assert f'href="?exchange={old["exchange"]}"' in html
    # The other branch, a click away.
    pk = Conversation.objects.get().pk
    other = client.get(f"/conversations/{pk}/?exchange={old['exchange']}")
    text = other.content.decode()
    assert "MARK-OLD-ANSWER" in text and "MARK-NEW-ANSWER" not in text
    assert "not what the customer saw last" in text
    assert f'href="?exchange={new["exchange"]}"' in text
    # Not an exchange of this conversation: 404; not an id: 400.
    assert client.get(f"/conversations/{pk}/?exchange=99999999").status_code == 404
    assert client.get(f"/conversations/{pk}/?exchange=x1").status_code == 400
    assert client.get(f"/conversations/{pk}/?exchange=%00").status_code == 400


@pytest.mark.django_db
def test_the_page_costs_the_same_queries_with_branches(api: APIClient, client: Any) -> None:
    def count(conversation: str) -> int:
        _page(client, conversation)  # warm the process caches
        pk = Conversation.objects.get(external_id=conversation).pk
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/conversations/{pk}/").status_code == 200
        return len(queries)

    post(api, TURN[:1], "Shipped.", conversation="flat")
    post(api, TURN, "Tomorrow.", conversation="flat")
    post(api, TURN[:1], "Shipped.", conversation="tree")
    for text in ("Tomorrow.", "Friday.", "Monday."):
        post(api, TURN, text, conversation="tree")
    post(api, [*TURN[:2], user("Edited?")], "Yes.", conversation="tree")
    assert count("tree") == count("flat")


@pytest.mark.django_db
def test_export_covers_every_branch(api: APIClient, client: Any) -> None:
    post(api, TURN[:1], "Shipped.")
    post(api, TURN, "MARK-FIRST-BRANCH")
    post(api, TURN, "MARK-SECOND-BRANCH")
    _page(client, "b1")
    pk = Conversation.objects.get().pk
    text = client.get(f"/conversations/{pk}/export.md").content.decode()
    assert text.index("MARK-SECOND-BRANCH") < text.index("MARK-FIRST-BRANCH")
    assert "regenerated at message 4" in text.lower()
    data = json.loads(client.get(f"/conversations/{pk}/export.json").content)
    assert [b["where"] for b in data["branches"]] == ["regenerated at message 4"]


@pytest.mark.django_db
def test_the_subject_access_package_carries_every_branch(api: APIClient) -> None:
    from retention.access.report import subject_access_read

    post(api, TURN[:1], "Shipped.")
    post(api, TURN, "MARK-FIRST-BRANCH")
    post(api, TURN, "MARK-SECOND-BRANCH")
    report = subject_access_read(
        user=None, customer="cus-b", purpose="DSAR 1", fmt="json", package=True
    )
    ((_, transcript),) = report.transcripts
    said = [t for turn in transcript.turns for t in turn.text]
    assert "MARK-SECOND-BRANCH" in said and "MARK-FIRST-BRANCH" not in said
    (other,) = transcript.branches
    assert other.where == "regenerated at message 4"
    assert [t for turn in other.turns for t in turn.text] == ["MARK-FIRST-BRANCH"]


@pytest.mark.django_db
def test_sub_agents_in_one_conversation_each_keep_a_thread(api: APIClient) -> None:
    """An agent framework's planner and executor post under one conversation: each call starts
    or continues its own thread (another system prompt, other tools), none a rewrite."""

    def chat(messages: list[Any], tools: list[str], reply: str) -> dict[str, Any]:
        body = {
            "conversation": "agents",
            "customer": "cus-b",
            "format": "openai.chat",
            "request": json.dumps(
                {
                    "model": "gpt-5.5",
                    "messages": messages,
                    "tools": [{"type": "function", "function": {"name": t}} for t in tools],
                }
            ),
            "response": json.dumps(
                {
                    "id": "c",
                    "object": "chat.completion",
                    "model": "gpt-5.5",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": reply},
                        }
                    ],
                }
            ),
        }
        answer = post_json(api, URL, body)
        assert answer.status_code == 201, answer.content
        return answer.json()

    plan = [{"role": "system", "content": "You plan."}, user("Add 2 and 3.")]
    work = [{"role": "system", "content": "You compute."}, user("Step 1: add.")]
    chat(plan, ["plan"], "Step 1: add.")
    thread = chat(work, ["add"], "5")
    assert (thread["branch"], thread["branched_at"]) == (RESTARTED, 0)
    chat([*plan, said_chat("Step 1: add."), user("Done: 5.")], ["plan"], "The answer is 5.")
    chat([*work, said_chat("5"), user("Step 2: check.")], ["add"], "Checked.")
    exchanges = Exchange.objects.filter(conversation__external_id="agents")
    assert [(e.history_rewritten, e.rewrite_kind) for e in exchanges.order_by("ordinal")] == [
        (False, "")
    ] * 4


def said_chat(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}
