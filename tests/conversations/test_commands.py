"""Management commands: setup_roles, create_service_token, ingest, replay, seed_demo."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from conversations.demo import demo_bodies
from conversations.formats import names
from conversations.models import Block, Conversation, Exchange, Message, ServiceToken
from conversations.replay import envelope
from conversations.selectors import conversation_stored_raws
from conversations.services import token_hash
from tests.conftest import raw_of
from tests.conversations.requests import body_for
from tests.providers import fixture_files, load

pytestmark = pytest.mark.django_db


def run(*args: Any, **kwargs: Any) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err, **kwargs)
    return out.getvalue(), err.getvalue()


def test_setup_roles_is_idempotent() -> None:
    run("setup_roles")
    run("setup_roles")
    names = set(Group.objects.values_list("name", flat=True))
    assert names == {"support_agent", "reviewer", "compliance", "admin"}
    assert (
        Group.objects.get(name="admin")
        .permissions.filter(codename="view_unknownblocktype")
        .exists()
    )


def test_create_service_token_prints_a_working_token(client: Any) -> None:
    out, _ = run("create_service_token", "backend")
    token = out.strip()
    row = ServiceToken.objects.get(name="backend")
    assert row.token_sha256 == token_hash(token)
    assert token not in row.prefix + row.token_sha256  # only the hash is kept
    response = client.get("/api/v1/conversations/x/messages", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 404  # authenticated: the conversation is simply missing


def test_create_service_token_refuses_a_taken_name() -> None:
    run("create_service_token", "backend")
    with pytest.raises(CommandError, match="exists already"):
        run("create_service_token", "backend")


def _jsonl(tmp_path: Path, bodies: list[Any]) -> Path:
    path = tmp_path / "exchanges.jsonl"
    path.write_text("\n".join(b if isinstance(b, str) else json.dumps(b) for b in bodies) + "\n")
    return path


def test_ingest_stores_every_fixture_like_the_api(tmp_path: Path) -> None:
    bodies = [
        body_for(r, conversation=f"bulk-{name}"[:200])
        for name in fixture_files()
        for r in load(name)
    ]
    out, err = run("ingest", str(_jsonl(tmp_path, bodies)), "--batch-size", "7", "--no-progress")
    assert f"ingested {len(bodies)} exchanges" in out, (out, err)
    assert Exchange.objects.count() == len(bodies)
    # Every message replays byte-identical to its source, exactly as through the API.
    for name in fixture_files():
        conversation = Conversation.objects.get(external_id=f"bulk-{name}"[:200])
        raws = conversation_stored_raws(conversation)
        sequences = list(
            conversation.messages.order_by("sequence").values_list("sequence", flat=True)
        )
        assert sequences == list(range(len(raws)))
        assert conversation.message_count == len(raws)
        for raw in raws:
            json.loads(raw)
    tool_loop = Conversation.objects.get(
        external_id="bulk-pydantic-pydantic-ai__test_anthropic_tool_with_thinking.yaml"
    )
    assert tool_loop.exchange_count == 2
    assert not Exchange.objects.filter(conversation=tool_loop, history_rewritten=True).exists()


def test_ingest_and_api_store_the_same_rows(api: Any, tmp_path: Path) -> None:
    bodies = list(demo_bodies(8))
    run("ingest", str(_jsonl(tmp_path, bodies)), "--no-progress")
    via_bulk = _snapshot()
    Conversation.objects.all().delete()
    for body in bodies:
        assert api.post("/api/v1/exchanges", body, format="json").status_code == 201
    assert _snapshot() == via_bulk


def _snapshot() -> list[Any]:
    rows = []
    for conversation in Conversation.objects.order_by("external_id"):
        messages = conversation.messages.order_by("sequence")
        rows.append(
            (
                conversation.external_id,
                conversation.queue,
                conversation.message_count,
                conversation.exchange_count,
                [(m.sequence, m.role, raw_of(m), m.sha256, m.canonical_sha256) for m in messages],
                [
                    (
                        b.position,
                        b.provider_type,
                        b.block_class,
                        b.text,
                        b.tool_name,
                        b.call_id,
                        b.status,
                        b.is_error,
                        b.fields,
                        b.redacted,
                    )
                    for b in Block.objects.filter(conversation=conversation).order_by(
                        "message__sequence", "position"
                    )
                ],
            )
        )
    return rows


def test_ingest_reports_bad_lines_and_stores_the_good(tmp_path: Path) -> None:
    good = list(itertools.islice(demo_bodies(2), 2))  # the first two demo exchanges
    bad_format = dict(good[0], format="gemini", conversation="other")
    lines = [good[0], "{not json", bad_format, good[1]]
    with pytest.raises(CommandError, match="2 line"):
        run("ingest", str(_jsonl(tmp_path, lines)), "--no-progress")
    assert Exchange.objects.count() == 2
    assert not Conversation.objects.filter(external_id="other").exists()


def test_ingest_bad_lines_are_named(tmp_path: Path, capsys: Any) -> None:
    lines = ["{not json", json.dumps({"conversation": 5})]
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command(
            "ingest",
            str(_jsonl(tmp_path, lines)),
            "--no-progress",
            stdout=io.StringIO(),
            stderr=err,
        )
    assert "line 1: not_json: body at $" in err.getvalue()
    assert "line 2: invalid: conversation at $.conversation" in err.getvalue()
    assert Message.objects.count() == 0


def test_ingest_missing_file_is_a_clear_error() -> None:
    with pytest.raises(CommandError, match=r"cannot read /nonexistent\.jsonl"):
        run("ingest", "/nonexistent.jsonl")


def test_replay_prints_the_envelope(capfd: Any) -> None:
    body = next(demo_bodies(1))
    from rest_framework.test import APIClient

    from conversations.services import service_token_create

    _, token = service_token_create(name="t")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    client.post("/api/v1/exchanges", body, format="json")
    conversation = Conversation.objects.get()
    out, _ = run("replay", conversation.external_id)
    expected = envelope(raw_of(m) for m in conversation.messages.order_by("sequence"))
    assert out.strip().encode() == expected


def test_replay_of_a_missing_conversation_is_an_error() -> None:
    with pytest.raises(CommandError, match="no conversation 'nope'"):
        run("replay", "nope")


def test_seed_demo_loads_every_format_and_an_admin() -> None:
    out, _ = run("seed_demo", "--conversations", "8")
    assert "8 conversations" in out
    assert "user 'admin', password" in out
    assert set(Exchange.objects.values_list("format", flat=True)) == set(names())
    assert Block.objects.filter(block_class="never").exists()
    assert Block.objects.filter(block_class="audit").exclude(tool_name="").exists()
    again, _ = run("seed_demo", "--if-empty")
    assert "nothing loaded" in again
    assert Conversation.objects.count() == 8


@pytest.mark.django_db(transaction=True)
def test_ingest_with_workers_stores_what_one_process_stores(
    transactional_db: Any, tmp_path: Path
) -> None:
    """Three worker processes (forked, each on its own connections): the same rows as one
    process, each conversation's exchanges in file order (superseding and rewrite flags depend
    on it), and the bad lines reported in line order."""
    bodies: list[Any] = list(demo_bodies(30))
    bodies.insert(5, "{not json")
    bodies.insert(9, json.dumps({"conversation": 5}))
    path = _jsonl(tmp_path, bodies)
    with pytest.raises(CommandError, match="2 line"):
        run("ingest", str(path), "--no-progress", "--batch-size", "4")
    one = _snapshot()
    one_rewritten = sorted(
        Exchange.objects.filter(history_rewritten=True).values_list(
            "conversation__external_id", "ordinal"
        )
    )
    for model in (Block, Message, Exchange, Conversation):
        model.objects.all().delete()

    err = io.StringIO()
    with pytest.raises(CommandError, match="2 line"):
        call_command(
            "ingest",
            str(path),
            "--no-progress",
            "--batch-size",
            "4",
            "--workers",
            "3",
            stdout=io.StringIO(),
            stderr=err,
        )
    assert _snapshot() == one
    assert one_rewritten == sorted(
        Exchange.objects.filter(history_rewritten=True).values_list(
            "conversation__external_id", "ordinal"
        )
    )
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("line 6: not_json: body at $")
    assert lines[1].startswith("line 10: invalid: conversation at $.conversation")


def test_ingest_refuses_a_bad_worker_count(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--workers must be 1 to 64"):
        run("ingest", str(_jsonl(tmp_path, [])), "--workers", "0")


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")".
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_ingest_with_a_killed_worker_fails_and_exits(transactional_db: Any, tmp_path: Path) -> None:
    """A worker killed mid-file (SIGKILL, as the OOM killer would): the command stops the
    others, says how many exchanges were stored, exits 1, and does not hang on its queues."""
    import os
    import re
    import signal
    import subprocess
    import sys
    import time

    from tests.retention.clock import BASE_DIR, clock_env

    path = _jsonl(tmp_path, list(itertools.islice(demo_bodies(9000), 12_000)))
    args = ["ingest", str(path), "--workers", "2", "--no-progress", "--batch-size", "50"]
    proc = subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=clock_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (len(_children(proc.pid)) >= 2 and Exchange.objects.exists()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the workers never stored anything"
            time.sleep(0.05)
        os.kill(_children(proc.pid)[0], signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, (out, err)
    assert "an ingest worker failed" in err, err
    match = re.search(r"(\d+) exchanges were stored before", err)
    assert match, err
    stored = Exchange.objects.count()
    assert 0 < int(match.group(1)) <= stored < 12_000
