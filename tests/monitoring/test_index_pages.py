"""The Signals index's models-served table is paged, busiest first: a token that posts a
thousand junk model names makes more pages, never a longer one."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from conversations.monitoring.selectors.audited import MODELS_PAGE
from tests.factories import ExchangeBodyFactory, UserFactory, ingest

pytestmark = pytest.mark.django_db(databases="__all__")


def _rows(html: str) -> list[str]:
    return re.findall(r'<td data-label="Snapshot"><a [^>]*>([^<]*)</a>', html)


def test_the_models_served_are_paged_busiest_first(client: Client) -> None:
    for n in range(MODELS_PAGE + 10):
        ingest(ExchangeBodyFactory(conversation=f"conv-junk-{n}", response_model=f"junk-{n:03d}"))
    for n in range(2):  # two exchanges of one model: the busiest
        ingest(ExchangeBodyFactory(conversation=f"conv-busy-{n}", response_model="busiest-model"))
    call_command("setup_roles", stdout=io.StringIO())
    agent: Any = UserFactory(groups=["support_agent"], queues=["billing"])
    client.force_login(agent)
    first = client.get("/signals/").content.decode()
    rows = _rows(first)
    assert len(rows) == MODELS_PAGE
    assert rows[0] == "busiest-model"  # two exchanges: first
    assert "Page 1 of 2" in first and 'rel="next"' in first and 'rel="prev"' not in first
    second = _rows(client.get("/signals/?page=2").content.decode())
    assert len(second) == 11 and not set(second) & set(rows)
    assert _rows(client.get("/signals/?page=99").content.decode()) == second  # the last
    bad = client.get("/signals/?page=abc")
    assert bad.status_code == 400 and b"page" in bad.content
