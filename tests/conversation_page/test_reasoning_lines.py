"""An answer's reasoning is one content-free line per deliberation, with the exchange's reasoning
tokens said once: two thinking blocks in a row are one line; a thinking block after a tool call
is a line of its own, without the count again (it is the exchange's whole count)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from conversations.models import Conversation
from tests.factories import post_exchange

pytestmark = pytest.mark.django_db(databases="__all__")

THINK = {"type": "thinking", "thinking": "SECRET-DELIBERATION", "signature": "c2ln"}


def _lines(html: str) -> list[str]:
    return re.findall(r">(reasoned(?: · \d+ tokens)?)<", html)


def test_reasoning_lines_count_the_tokens_once(api: Any, client: Any, world: Any) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"order_id": "A1"}}
    post_exchange(
        api,
        conversation="conv-think-1",
        content=[THINK, THINK, {"type": "text", "text": "Here it is."}],
        usage={"input_tokens": 10, "output_tokens": 500},
    )
    post_exchange(
        api,
        conversation="conv-think-2",
        content=[THINK, call, THINK],
        stop_reason="tool_use",
        usage={"input_tokens": 10, "output_tokens": 500},
    )
    client.force_login(world.users["agent"])
    for conversation, expected in (("conv-think-1", 1), ("conv-think-2", 2)):
        pk = Conversation.objects.get(external_id=conversation).pk
        html = client.get(f"/conversations/{pk}/").content.decode()
        lines = _lines(html)
        assert len(lines) == expected, (conversation, lines)
        assert re.fullmatch(r"reasoned · \d+ tokens", lines[0]), lines
        assert all(line == "reasoned" for line in lines[1:]), lines
        assert "SECRET-DELIBERATION" not in html
