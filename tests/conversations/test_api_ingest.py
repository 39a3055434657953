"""POST /api/v1/exchanges and replay, on every recorded provider payload."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from django.urls import reverse

from conversations.formats.base import compact
from conversations.models import Exchange, Message
from conversations.replay import envelope
from conversations.selectors import conversation_tree
from tests.conftest import post_json, raw_of
from tests.conversations.requests import body_for
from tests.providers import fixture_files, load

URL = "/api/v1/exchanges"
pytestmark = pytest.mark.django_db


def replay_url(conversation: str) -> str:
    return reverse("api-conversation-messages", args=[conversation])


def _history_elements(body: dict[str, Any]) -> list[Any]:
    request = json.loads(body["request"])
    for key in ("messages", "input"):
        if isinstance(request.get(key), list):
            return request[key]
        if isinstance(request.get(key), str):
            return [request[key]]
    return []


def _assert_raw_from_source(raw: str, body: dict[str, Any]) -> None:
    """A stored raw text is exactly where it came from: a span of the request, a span of the
    response (the Anthropic assistant turn wraps the response's content array), or the one compact
    serialisation of a streamed message."""
    if raw in body["request"]:
        return
    if "response" in body:
        prefix = '{"role":"assistant","content":'
        if raw in body["response"] or raw == body["response"].strip():
            return
        assert raw.startswith(prefix) and raw.endswith("}"), raw[:200]
        assert raw[len(prefix) : -1] in body["response"]
    else:
        assert compact(json.loads(raw)) == raw


@pytest.mark.parametrize("file_name", fixture_files())
def test_every_fixture_ingests_and_replays_byte_identical(api: Any, file_name: str) -> None:
    conversation = f"fixture-{file_name}"[:200]
    bodies = [body_for(r, conversation=conversation) for r in load(file_name)]
    for body in bodies:
        response = post_json(api, URL, body)
        assert response.status_code == 201, response.json()

    stored = list(
        Message.objects.filter(conversation__external_id=conversation).order_by("sequence")
    )
    assert stored, "no message stored"
    for message in stored:
        assert message.sha256 == hashlib.sha256(raw_of(message).encode()).hexdigest()
        body = bodies[
            [
                e.pk
                for e in Exchange.objects.filter(conversation__external_id=conversation).order_by(
                    "id"
                )
            ].index(message.exchange_id)
        ]
        _assert_raw_from_source(raw_of(message), body)

    # Every history element sent first is stored byte for byte at its position.
    first_history = _history_elements(bodies[0])
    for i, element in enumerate(first_history):
        assert json.loads(raw_of(stored[i])) == element

    # Replay is the latest exchange's path (streams recorded without their request share one
    # minimal request: each later one regenerates the first answer, a branch); every other
    # exchange's path replays on request. Each element's bytes are the stored message's.
    by_sequence = {m.sequence: m for m in stored}
    tree, ids = conversation_tree(stored[0].conversation_id)
    assert tree.latest is not None
    for ordinal in sorted(tree.nodes, reverse=True):
        path = [by_sequence[s] for s in tree.path(ordinal)]
        query = "" if ordinal == tree.latest else f"?exchange={ids[ordinal]}"
        replay = api.get(replay_url(conversation) + query)
        assert replay.status_code == 200
        assert replay["Content-Type"] == "application/json"
        assert replay.content == envelope(raw_of(m) for m in path)
        elements = json.loads(replay.content)["messages"]
        assert len(elements) == len(path)
        # Message by message: cut the replay bytes at each element and hash the cut.
        offset = len(b'{"messages":[')
        for message in path:
            size = len(raw_of(message).encode())
            digest = hashlib.sha256(replay.content[offset : offset + size]).hexdigest()
            assert digest == message.sha256
            offset += size + 1
    # Every message stored but a superseded version is on some path.
    on_paths = {s for o in tree.nodes for s in tree.path(o)}
    assert {m.sequence for m in stored if not m.superseded} <= on_paths
