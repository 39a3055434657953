"""The backend's protocol conformance, driven through the real SDKs (DESIGN section 14).

The official ``openai`` SDK (Responses, ``store=False``,
``include=["reasoning.encrypted_content"]``, streamed) and the official ``anthropic`` SDK
(thinking, tools), both instrumented by
``console_client``, run their documented tool loops for five model calls against a fake provider
on loopback. The fake answers as the real APIs do: a Responses stream's ``output_item.done``
carries another ``encrypted_content`` than ``response.completed`` for the same reasoning item;
an Anthropic ``tool_use`` block carries ``caller: {"type": "direct"}``.

- The loops as documented (``input += response.output``; ``messages.append({"role":
  "assistant", "content": response.content})``): nothing is flagged, on any call.
- The same loops with the history dropped from, edited or reordered by the backend: the call
  that carries the change is flagged with its class, priced from the usage, and only that one
  (the later calls are compared with the changed history they go on from).
- A backend that drops only what the provider never puts in the prompt (the default ``caller``,
  an empty ``annotations``): recorded as unseen, no banner, no alert.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import console_client
import openai
import pytest

from conversations.models import Exchange
from conversations.monitoring.rewrites import SEEN

from .conftest import ConsoleServer
from .provider import JSON, SSE, FakeProvider, Reply

pytestmark = pytest.mark.slow

COMMON: dict[str, Any] = {"api_key": "sk-fake", "max_retries": 0, "timeout": 30.0}
TOOLS_OPENAI = [
    {
        "type": "function",
        "name": "get_order",
        "description": "Look an order up",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    }
]
TOOLS_ANTHROPIC = [
    {
        "name": "get_order",
        "description": "Look an order up",
        "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
    }
]
# Each model call's answer: a tool call, or the text that ends the turn.
PLAN = ["call", "call", "answer", "call", "answer"]


def _exchanges(conversation: str) -> list[Exchange]:
    return list(Exchange.objects.filter(conversation__external_id=conversation).order_by("ordinal"))


# --- OpenAI Responses --------------------------------------------------------------------------


def _responses_stream(n: int, kind: str, cached: int) -> bytes:
    """One Responses stream: a reasoning item whose ``output_item.done`` and
    ``response.completed`` forms carry different ``encrypted_content`` (as the real API's do),
    then a function call or a message."""
    reasoning = {"id": f"rs_{n}", "type": "reasoning", "summary": []}
    if kind == "call":
        item: dict[str, Any] = {
            "id": f"fc_{n}",
            "type": "function_call",
            "status": "completed",
            "arguments": json.dumps({"id": f"O-{n}"}),
            "call_id": f"call_{n}",
            "name": "get_order",
        }
    else:
        item = {
            "id": f"msg_{n}",
            "type": "message",
            "status": "completed",
            "content": [{"type": "output_text", "annotations": [], "text": f"Answer {n}."}],
            "role": "assistant",
        }
    done = {**reasoning, "encrypted_content": f"gAAAAB-done-{n}"}
    final = {**reasoning, "encrypted_content": f"gAAAAB-completed-{n}"}
    base = {"id": f"resp_{n}", "object": "response", "created_at": 1764633600, "model": "gpt-5.5",
            "output": [], "status": "in_progress", "tools": [], "parallel_tool_calls": True,
            "tool_choice": "auto", "store": False}  # fmt: skip
    usage = {"input_tokens": 900 + 100 * n, "input_tokens_details": {"cached_tokens": cached},
             "output_tokens": 60, "output_tokens_details": {"reasoning_tokens": 40},
             "total_tokens": 960 + 100 * n}  # fmt: skip
    events = [
        {"type": "response.created", "sequence_number": 0, "response": base},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
         "item": {**reasoning, "encrypted_content": f"gAAAAB-early-{n}"}},
        {"type": "response.output_item.done", "sequence_number": 2, "output_index": 0,
         "item": done},
        {"type": "response.output_item.added", "sequence_number": 3, "output_index": 1,
         "item": {**item, "status": "in_progress"}},
        {"type": "response.output_item.done", "sequence_number": 4, "output_index": 1,
         "item": item},
        {"type": "response.completed", "sequence_number": 5,
         "response": {**base, "status": "completed", "output": [final, item], "usage": usage}},
    ]  # fmt: skip
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


Edit = Callable[[int, list[Any]], list[Any]]


def _plain(n: int, items: list[Any]) -> list[Any]:
    return items


def responses_loop(
    provider: FakeProvider, console: ConsoleServer, token: str, conversation: str, edit: Edit
) -> list[Exchange]:
    """The documented Responses loop, stateless: ``input += response.output`` (the completed
    response the SDK hands back), each function call answered, a new question after an answer.
    ``edit(n, input)`` is what the backend does to the history before call ``n``."""
    model = f"gpt-5.5-{conversation}"
    client = console_client.instrument(
        openai.OpenAI(base_url=provider.url + "/v1", **COMMON), url=console.url, token=token
    )
    history: list[Any] = [{"role": "user", "content": "Where is order O-1?"}]
    with console_client.conversation(conversation, customer="cus-loops"):
        for n, kind in enumerate(PLAN):
            provider.route(model, Reply(_responses_stream(n, kind, 800 if n else 0), SSE))
            history = edit(n, history)
            final = None
            with client.responses.create(
                model=model,
                input=history,
                tools=TOOLS_OPENAI,  # type: ignore[arg-type]
                store=False,
                include=["reasoning.encrypted_content"],
                stream=True,
            ) as stream:
                for event in stream:
                    if event.type == "response.completed":
                        final = event.response
            assert final is not None
            history += final.output
            for item in final.output:
                if item.type == "function_call":
                    history.append(
                        {"type": "function_call_output", "call_id": item.call_id, "output": "ok"}
                    )
            if kind == "answer":
                history.append({"role": "user", "content": f"And question {n + 2}?"})
    client.close()
    assert console_client.flush(timeout=60)
    return _exchanges(conversation)


def _dump(item: Any) -> Any:
    return item.model_dump(exclude_unset=True) if hasattr(item, "model_dump") else item


# --- Anthropic --------------------------------------------------------------------------------


def _anthropic_reply(n: int, kind: str, cached: int) -> bytes:
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": f"Plan {n}: look the order up.", "signature": f"SIG{n}"}
    ]
    if kind == "call":
        content.append({"type": "tool_use", "id": f"toolu_{n}", "name": "get_order",
                        "input": {"id": f"O-{n}"}, "caller": {"type": "direct"}})  # fmt: skip
    else:
        content.append({"type": "text", "text": f"Answer {n}."})
    return json.dumps({
        "id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-fable-5-1",
        "content": content, "stop_reason": "tool_use" if kind == "call" else "end_turn",
        "usage": {"input_tokens": 50, "cache_read_input_tokens": cached,
                  "cache_creation_input_tokens": 100, "output_tokens": 80},
    }).encode()  # fmt: skip


def anthropic_loop(
    provider: FakeProvider, console: ConsoleServer, token: str, conversation: str, edit: Edit
) -> list[Exchange]:
    """The documented tool loop: the assistant's content appended as the SDK returned it, each
    tool_use answered with a tool_result, a new question after an answer."""
    model = f"claude-fable-5-1-{conversation}"
    client = console_client.instrument(
        anthropic.Anthropic(base_url=provider.url, **COMMON), url=console.url, token=token
    )
    messages: list[Any] = [{"role": "user", "content": "Where is order O-1?"}]
    with console_client.conversation(conversation, customer="cus-loops"):
        for n, kind in enumerate(PLAN):
            provider.route(model, Reply(_anthropic_reply(n, kind, 900 if n else 0), JSON))
            messages = edit(n, messages)
            response = client.messages.create(
                model=model,
                max_tokens=2048,
                system="You help customers with their orders.",
                tools=TOOLS_ANTHROPIC,  # type: ignore[arg-type]
                thinking={"type": "adaptive"},  # type: ignore[typeddict-item]
                messages=messages,
            )
            messages.append({"role": "assistant", "content": response.content})
            calls = [b for b in response.content if b.type == "tool_use"]
            if calls:
                messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": b.id, "content": "shipped"}
                    for b in calls
                ]})  # fmt: skip
            else:
                messages.append({"role": "user", "content": f"And question {n + 2}?"})
    client.close()
    assert console_client.flush(timeout=60)
    return _exchanges(conversation)


LOOPS = {"openai-responses": responses_loop, "anthropic": anthropic_loop}


@pytest.mark.parametrize("sdk", list(LOOPS))
def test_the_documented_loop_is_never_flagged(
    provider: FakeProvider, live_console: ConsoleServer, token: str, sdk: str
) -> None:
    exchanges = LOOPS[sdk](provider, live_console, token, f"loop-{sdk}", _plain)
    assert len(exchanges) == 5
    for e in exchanges:
        assert not e.history_rewritten, (e.ordinal, e.rewrite_kind, e.rewritten_at)
        assert e.rewrite_kind not in SEEN, (e.ordinal, e.rewrite_kind)
        assert e.cache_lost_tokens is None
    if sdk == "openai-responses":
        # The stored reasoning items are response.completed's form, each with the done form
        # beside it as an alternate.
        from conversations.models import Conversation, Message
        from conversations.selectors import conversation_message_raws

        row = Conversation.objects.get(external_id=f"loop-{sdk}")
        raws = "".join(conversation_message_raws(row))
        assert raws.count("gAAAAB-completed-") == 5 and "gAAAAB-done-" not in raws
        with_alternate = Message.objects.filter(conversation=row).exclude(alternate_sha256=[])
        assert with_alternate.count() == 5


# --- The same loops, with the history changed by the backend ---------------------------------


def _drop_reasoning_in_open_loop(n: int, items: list[Any]) -> list[Any]:
    """Before call 1 (the tool loop open): the reasoning item / thinking block left out."""
    if n != 1:
        return items
    out = []
    for item in items:
        value = _dump(item)
        if isinstance(value, dict) and value.get("type") == "reasoning":
            continue
        if isinstance(value, dict) and value.get("role") == "assistant":
            blocks = [_dump(b) for b in value["content"]]
            value = {**value, "content": [b for b in blocks if b.get("type") != "thinking"]}
        out.append(value)
    return out


def _edit_an_answer(n: int, items: list[Any]) -> list[Any]:
    """Before call 3 (a new question): the earlier answer's text edited."""
    if n != 3:
        return items
    out = []
    for item in items:
        value = _dump(item)
        if isinstance(value, dict) and value.get("type") == "message" and "content" in value:
            value = {**value, "content": [{**c, "text": "Edited."} for c in value["content"]]}
        elif isinstance(value, dict) and value.get("role") == "assistant":
            blocks = [_dump(b) for b in value["content"]]
            value = {**value, "content": [
                {**b, "text": "Edited."} if b.get("type") == "text" else b for b in blocks
            ]}  # fmt: skip
        out.append(value)
    return out


def _reorder(n: int, items: list[Any]) -> list[Any]:
    """Before call 3: the first assistant message's blocks (or the first two items after the
    question) sent in another order."""
    if n != 3:
        return items
    out = [_dump(i) for i in items]
    if isinstance(out[1], dict) and out[1].get("role") == "assistant":
        out[1] = {**out[1], "content": list(reversed(out[1]["content"]))}
    else:
        out[1], out[2] = out[2], out[1]
    return out


@pytest.mark.parametrize("sdk", list(LOOPS))
@pytest.mark.parametrize(
    ("edit", "at", "kind"),
    [
        (_drop_reasoning_in_open_loop, 2, "tool_loop_reasoning"),
        (_edit_an_answer, 4, "edited"),
        (_reorder, 4, "reordered"),
    ],
    ids=["dropped", "edited", "reordered"],
)
def test_a_changed_history_is_flagged_with_its_class(
    provider: FakeProvider,
    live_console: ConsoleServer,
    token: str,
    sdk: str,
    edit: Edit,
    at: int,
    kind: str,
) -> None:
    conversation = f"changed-{sdk}-{kind}"
    exchanges = LOOPS[sdk](provider, live_console, token, conversation, edit)
    flagged = {e.ordinal: e.rewrite_kind for e in exchanges if e.rewrite_kind in SEEN}
    # The call that carries the change is flagged with its class, once: each request is
    # compared with the previous one on its branch (DESIGN section 20), so the later calls,
    # which go on from the changed history the backend kept, are not flagged again.
    assert flagged == {at: kind}
    changed = exchanges[at - 1]
    assert changed.history_rewritten
    # Priced from the usage: what the previous call had cached (read or written) and this one
    # did not read again. The fake's numbers: Anthropic reads 900 (0 on the first call) and
    # writes 100 on every call; Responses reads 800 (0 first) and reports no writes.
    read = (900, 100) if sdk == "anthropic" else (800, 0)
    before = (read[0] if at > 2 else 0) + read[1]
    assert changed.cache_lost_tokens == max(0, before - read[0])


def _drop_unseen(n: int, items: list[Any]) -> list[Any]:
    """A framework that drops the default caller and empty annotations when it sends turns
    back (fields the provider never puts in the prompt)."""
    out = []
    for item in items:
        value = _dump(item)
        if isinstance(value, dict) and isinstance(value.get("content"), list):
            value = {**value, "content": [
                {k: v for k, v in _dump(b).items()
                 if not (k == "caller" and v == {"type": "direct"})
                 and not (k == "annotations" and v == [])}
                if isinstance(_dump(b), dict) else b
                for b in value["content"]
            ]}  # fmt: skip
        out.append(value)
    return out


@pytest.mark.parametrize("sdk", list(LOOPS))
def test_dropping_what_the_model_never_sees_raises_nothing(
    provider: FakeProvider, live_console: ConsoleServer, token: str, sdk: str
) -> None:
    exchanges = LOOPS[sdk](provider, live_console, token, f"unseen-{sdk}", _drop_unseen)
    assert [e.rewrite_kind in SEEN or e.history_rewritten for e in exchanges] == [False] * 5
    assert "unseen" in {e.rewrite_kind for e in exchanges}
