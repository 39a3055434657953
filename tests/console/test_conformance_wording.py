"""The backend's conformance is for the backend's engineers (DESIGN section 20): an agent's
pages (the list, the conversation page on every path, its tool calls, the exports, a share
page) carry no rewrite, re-serialisation or conformance wording, whatever the kind; a console
admin's conversation page keeps it, with the price of each change the model sees."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from conversations.models import Conversation, Exchange
from conversations.monitoring.rewrites import KINDS, SEEN, words
from conversations.sharing.links import share_link_create
from conversations.workspace.words import transformation_words
from tests.factories import ExchangeBodyFactory, UserFactory, roles
from tests.signals.helpers import assistant, store, text, thinking, tool_result, tool_use, user

pytestmark = pytest.mark.django_db

VERDICT = {"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_mismatch"}
# Wording that belongs to the backend's conformance, whatever the kind.
BANNED = [
    *(words(kind) for kind in KINDS),
    transformation_words(VERDICT),
    "rewrit",
    "re-serialis",
    "reserialis",
    "conformance",
    "never puts in the prompt",
    "read again at full price",
]


def _post(conversation: str, messages: list[Any], content: list[Any], **kw: Any) -> None:
    from conversations.ingest.body import exchange_input
    from conversations.services import conversation_ingest_exchange

    system = kw.pop("system", None)
    request: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 1024,
                               "messages": messages}  # fmt: skip
    if system is not None:
        request["system"] = system
    response = {"id": "msg", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": content, "stop_reason": kw.pop("stop", "end_turn"),
                "usage": {"input_tokens": 100, "output_tokens": 50,
                          "cache_read_input_tokens": kw.pop("cache_read", 0),
                          "cache_creation_input_tokens": 900}, **kw}  # fmt: skip
    body = ExchangeBodyFactory(
        conversation=conversation,
        customer=f"cus-{conversation}",
        request=json.dumps(request),
        response=json.dumps(response),
    )
    stored = conversation_ingest_exchange(data=exchange_input(body))
    assert stored.exchange > 0 and not stored.replayed


# Each kind's conversation (an id that names no kind: the pages show it).
N = {
    "tool_loop_reasoning": "c-loop",
    "edited": "c-edit",
    "reordered": "c-order",
    "settings": "c-system",
    "reserialised": "c-bytes",
    "unseen": "c-caller",
    "verdict": "c-verdict",
}
NAMES = {v: k for k, v in N.items()}


def _every_kind() -> dict[str, str]:
    """One conversation per kind (and the provider's verdict), by kind (their ids name no
    kind: the pages show them)."""
    q = user("refund order 7")
    call = [thinking(), tool_use("t1", args={"order_id": "7"})]
    store(N["tool_loop_reasoning"], [q], call, stop="tool_use")
    store(N["tool_loop_reasoning"], [q, assistant(tool_use("t1", args={"order_id": "7"})),
                                  {"role": "user", "content": [tool_result("t1")]}],
          [text("refunded")])  # fmt: skip
    store(N["edited"], [user("hello")], [text("hi, how can I help?")])
    store(N["edited"], [user("hello"), assistant(text("hi, may I help?")), user("refund")],
          [text("done")])  # fmt: skip
    a, b = user("first"), user("second")
    store(N["reordered"], [a], [text("one")])
    store(N["reordered"], [a, assistant(text("one")), b], [text("two")])
    store(N["reordered"], [a, b, assistant(text("one")), assistant(text("two")), user("third")],
          [text("three")])  # fmt: skip
    _post(N["settings"], [user("hi")], [text("hello")], system="Be kind.")
    _post(N["settings"], [user("hi"), assistant(text("hello")), user("bye")], [text("bye")],
          system="Be kind. It is Tuesday.")  # fmt: skip
    store(N["reserialised"], [user("hello")], [text("hi")])
    store(N["reserialised"], [user("hello"), assistant(text("hi")), user("more")], [text("ok")],
          indent=2)  # fmt: skip
    with_caller = {**tool_use("t2"), "caller": {"type": "direct"}}
    store(N["unseen"], [user("look it up")], [with_caller], stop="tool_use")
    answered = {"role": "user", "content": [tool_result("t2")]}
    store(N["unseen"], [user("look it up"), assistant(tool_use("t2")), answered], [text("found")])
    _post(N["verdict"], [user("hi")], [text("hello")], input_transformations=[VERDICT])
    kinds = {NAMES[e.conversation.external_id]: e.rewrite_kind  # each conversation's last kind
             for e in Exchange.objects.select_related("conversation").exclude(rewrite_kind="")
             .order_by("ordinal")}  # fmt: skip
    assert set(kinds) == set(KINDS), kinds  # every kind is there, each in its conversation
    assert all(kinds[k] == k for k in KINDS), kinds
    return {NAMES[c.external_id]: str(c.pk) for c in Conversation.objects.all()}


def _agent_pages(client: Any, agent: Any, pk: str) -> dict[str, str]:
    conversation = Conversation.objects.get(pk=pk)
    urls = [
        "/",
        f"/?q={conversation.external_id}&match=conversation",
        f"/conversations/{pk}/",
        *(f"/conversations/{pk}/export.{fmt}" for fmt in ("md", "txt", "json")),
    ]
    for e in Exchange.objects.filter(conversation_id=pk):
        urls.append(f"/conversations/{pk}/?exchange={e.pk}")
    pages: dict[str, str] = {}
    while urls:
        url = urls.pop()
        if url in pages:
            continue
        response = client.get(url, follow=True)
        assert response.status_code == 200, (url, response.status_code)
        pages[url] = response.content.decode()
        # Every tool call a page links to, on whichever path it shows.
        urls.extend(re.findall(rf'"(/conversations/{pk}/calls/[^/"]+/)"', pages[url]))
    _, token = share_link_create(actor=agent, conversation_id=int(pk))
    pages["share"] = client.get(f"/s/{token}/").content.decode()
    return pages


def test_agents_pages_carry_no_conformance_wording_for_any_kind(client: Any) -> None:
    ids = _every_kind()
    roles()
    agent = UserFactory(username="agent-cw", groups=["support_agent"], queues=["billing"])
    client.force_login(agent)
    for name, pk in ids.items():
        for url, html in _agent_pages(client, agent, pk).items():
            for phrase in BANNED:
                assert phrase.lower() not in html.lower(), (name, url, phrase)
    # The list's "rewritten" filter is an admin's: an agent asking for it is refused.
    assert client.get("/?flags=rewritten").status_code == 400


def test_admins_keep_the_wording_and_the_price(client: Any) -> None:
    ids = _every_kind()
    roles()
    admin = UserFactory(username="admin-cw", groups=["admin"], queues=["billing"])
    client.force_login(admin)
    for kind in KINDS:
        html = client.get(f"/conversations/{ids[kind]}/").content.decode()
        assert words(kind) in html, kind
        assert ("History rewritten" in html) is (kind in SEEN), kind
    verdict = client.get(f"/conversations/{ids['verdict']}/").content.decode()
    assert transformation_words(VERDICT) in verdict
    priced = client.get(f"/conversations/{ids['settings']}/").content.decode()
    assert re.search(r"about [\d,]+ cached input tokens read again at full price", priced)
    listing = client.get("/").content.decode()
    assert '<span class="flag">rewritten</span>' in listing
