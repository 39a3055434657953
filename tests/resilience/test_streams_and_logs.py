"""Case 10 (the live and the log parts): one session holds at most
``LIVE_MAX_STREAMS_PER_SESSION`` live streams open (429 in the error shape past it, no audit
row for it); share tokens never reach a log (the servers' access lines, Django's request
records, the JSON log)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient

from audit.models import AuditEvent
from console.ops.logs import ShareTokenFilter, install_share_token_filter
from conversations.sharing.services import share_link_create

pytestmark = pytest.mark.django_db

TOKEN = "eyJhIjoiYiJ9:1vQ2xS:Zm9vYmFyYmF6cXV4"


def test_a_session_holds_a_bounded_number_of_live_streams(
    world: Any, settings: Any, monkeypatch: pytest.MonkeyPatch, client: Any
) -> None:
    from console import live_views

    settings.LIVE_MAX_STREAMS_PER_SESSION = 2
    relays: list[Any] = []
    relay = live_views._relay
    monkeypatch.setattr(live_views, "_relay", lambda *a: relays.append(relay(*a)) or relays[-1])
    url = f"/conversations/{world.billing.pk}/live"

    async def go() -> list[Any]:
        c = AsyncClient()
        await c.aforce_login(world.users["agent"])
        out = []
        for _ in range(2):
            r = await c.get(url)
            assert r.status_code == 200
            assert await relays[-1].__anext__() == b"retry: 2000\n\n"
        r = await c.get(url)  # the third, while two stream
        out.append((r.status_code, json.loads(r.content), r["Retry-After"]))
        other = AsyncClient()  # another session is not held back by this one's
        await other.aforce_login(world.users["agent"])
        r = await other.get(url)
        out.append(r.status_code)
        await relays[-1].__anext__()
        await relays[0].aclose()  # one of the first session's streams ends: one may open
        r = await c.get(url)
        out.append(r.status_code)
        await relays[-1].__anext__()
        for g in relays[1:]:
            await g.aclose()
        return out

    refused, other, again = async_to_sync(go)()
    status, body, retry = refused
    assert status == 429 and retry == "5"
    assert body["error"] == "too_many_streams" and set(body) == {"error", "detail", "field", "at"}
    assert other == 200 and again == 200
    viewed = AuditEvent.objects.filter(code="conversation.viewed", details__page="live").count()
    assert viewed == 4  # the refused one read nothing and wrote nothing
    assert live_views._streams == {}  # every stream given back
    client.force_login(world.users["agent"])
    assert client.get(f"/conversations/{world.billing.pk}/").status_code == 200


def _through(name: str, msg: str, args: Any) -> str:
    install_share_token_filter()
    record = logging.getLogger(name).makeRecord(name, logging.INFO, "f", 1, msg, args, None)
    for f in logging.getLogger(name).filters:
        f.filter(record)
    return record.getMessage()


def test_share_tokens_are_masked_in_the_access_lines() -> None:
    # uvicorn: a tuple of arguments
    line = _through(
        "uvicorn.access",
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", f"/s/{TOKEN}/?x=1", "1.1", 200),
    )
    assert TOKEN not in line and '"GET /s/[token]/?x=1 HTTP/1.1" 200' in line
    # gunicorn: its atoms, a mapping
    atoms = {"h": "127.0.0.1", "r": f"GET /s/{TOKEN}/ HTTP/1.1", "U": f"/s/{TOKEN}/", "s": "200"}
    line = _through("gunicorn.access", '%(h)s "%(r)s" %(s)s %(U)s', atoms)
    assert TOKEN not in line and line == '127.0.0.1 "GET /s/[token]/ HTTP/1.1" 200 /s/[token]/'
    assert any(
        isinstance(f, ShareTokenFilter) for f in logging.getLogger("gunicorn.access").filters
    )


def test_share_tokens_are_masked_in_djangos_request_records(
    client: Any, world: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _, token = share_link_create(actor=world.users["agent"], conversation_id=world.billing.pk)
    caplog.set_level(logging.INFO)
    assert client.get(f"/s/{token}/").status_code == 200
    assert client.get(f"/s/{token}x/").status_code in (404, 410)  # a warning with the path
    assert client.get(f"/s/{token}/", REMOTE_ADDR="127.0.0.9").status_code == 200
    assert token not in caplog.text
    assert any("/s/[token]" in r.getMessage() for r in caplog.records)
