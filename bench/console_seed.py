"""A large conversation store for the console benchmarks: a real base, cloned by SQL and COPY.

``seed_store(conversations)`` fills the bench database (created and migrated by
``common.setup_django``) with ``conversations`` conversations, in three steps:

1. **A real base.** At most ``BASE`` conversations go through the real ingest path
   (``call_command("ingest")`` of JSONL bodies), so rows, ciphertexts, data keys, blocks and the
   search column are what ingest writes: two thirds demo conversations
   (``conversations.demo``: four provider formats, tool calls, reasoning) with a few variations
   (a rarer model snapshot, answers cut off by ``max_tokens``/``length``, refusals), one third
   Chat Completions conversations of 1 to 9 turns (question, tool call, tool result, answer; some
   with an edited history: ``history_rewritten``), and three long ones (10, 50 and 100 turns: 41,
   201 and 401 messages; ``long_conversation``) that are not cloned. Each conversation's last
   activity is then set to when its last exchange answered (a bulk ingest stamps a batch with one
   arrival time).
2. **Clones.** Clone ``r`` of a base row ``id`` gets the id ``id + r * stride`` (one stride per
   table, the table's largest id), so every foreign key maps by arithmetic and no join is needed.
   Conversations and blocks are copied by ``INSERT ... SELECT`` (PostgreSQL computes the search
   column); exchanges and messages are re-encrypted in Python (their associated data names the
   conversation: a copied ciphertext would not decrypt) and written with ``COPY``, on another
   connection at the same time; each clone gets its own wrapped data key in the keys database
   (its base conversation's key, wrapped for the new id), so clones decrypt like the base.
   Every conversation, base included, gets a customer among ``conversations / 3`` (about three
   conversations each) and a last activity spread over two years from a hash of its id
   (``activity_at``; its exchanges and messages move with it); queue, labels, counts and flags
   are its base's. While rows are copied the four tables' secondary indexes are dropped and
   foreign-key triggers are off (``session_replication_role = replica``: the ids are consistent
   by construction); the indexes are then rebuilt, two at a time, the sequences moved past the
   largest ids, the tables ``VACUUM ANALYZE``d, and a sample of clones decrypted.
3. **A marker** (table ``bench_console_seed``) records the size and ``SEED_VERSION``:
   ``seeded(url, conversations)`` says whether a kept database already holds that store, which is
   how ``--reuse`` skips seeding. Change ``SEED_VERSION`` when the seeding changes.

How to extend: a new column of a cloned table is copied as it is (column lists come from the
catalog); give it an entry in the ``overrides`` of ``_clone_conversations``/``_clone_blocks`` or in
``_python_clone`` if a clone must differ from its base there.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from bench.common import BenchError, Stopwatch

SEED_VERSION = "1"
BASE = 2_000  # conversations ingested for real; the rest are clones of them
LONG_TURNS = (10, 50, 100)  # 1 + 4 x turns messages: 41, 201, 401
MARKER = "bench_console_seed"
BASE_TABLE = "bench_console_base"
CONVERSATION, EXCHANGE, MESSAGE, BLOCK = (
    "conversations_conversation",
    "conversations_exchange",
    "conversations_message",
    "conversations_block",
)
KEY_TABLE = "conversations_datakey"
TABLES = (CONVERSATION, EXCHANGE, MESSAGE, BLOCK)

# Last activity of conversation ``id``: ACTIVITY_FROM + (id * ACTIVITY_HASH mod ACTIVITY_SPAN_MS)
# milliseconds. The same formula in SQL (``_ACTIVITY_SQL``) and Python (``activity_at``).
ACTIVITY_FROM = datetime(2024, 11, 1, tzinfo=UTC)
ACTIVITY_SPAN_MS = 2 * 365 * 86_400_000
ACTIVITY_HASH = 2_654_435_761
CUSTOMER_HASH = 40_503
RARE_MODEL = "claude-opus-4-1-20250805"


def keystore() -> tuple[Any, Any]:
    """The project's ``crypto`` and ``keys`` modules (``conversations/keystore/`` once the ingest
    refactor lands, ``conversations/`` before it): the clones are encrypted with them."""
    try:
        from conversations.keystore import crypto, keys
    except ImportError:
        from conversations import crypto, keys
    return crypto, keys


def activity_at(conversation_id: int) -> datetime:
    return ACTIVITY_FROM + timedelta(
        milliseconds=conversation_id * ACTIVITY_HASH % ACTIVITY_SPAN_MS
    )


def _activity_sql(id_sql: str) -> str:
    return (
        f"(timestamptz '{ACTIVITY_FROM.isoformat()}' + "
        f"mod(({id_sql}) * {ACTIVITY_HASH}::bigint, {ACTIVITY_SPAN_MS}) * interval '1 millisecond')"
    )


def customer_count(conversations: int) -> int:
    return max(1, conversations // 3)


def _customer_sql(id_sql: str, customers: int) -> str:
    # mod(), not %: these expressions go into statements that also take %(name)s parameters.
    return f"('cus_' || lpad(mod(({id_sql}) * {CUSTOMER_HASH}::bigint, {customers})::text, 7, '0'))"


def customer_of(conversation_id: int, conversations: int) -> str:
    return f"cus_{conversation_id * CUSTOMER_HASH % customer_count(conversations):07d}"


# --- the base: exchange bodies -----------------------------------------------------------------


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


CHAT_QUESTIONS = [
    "Where is my order {order}? It should have arrived yesterday.",
    "Order {order} arrived damaged. I would like a refund, please.",
    "Can you change the delivery address of {order}?",
    "I returned {order} two weeks ago and still have no refund.",
    "Is {order} eligible for express shipping?",
]
CHAT_ANSWERS = [
    "Your order {order} has shipped with DHL and should arrive within two days.",
    "I have opened a refund for {order}; it takes 3 to 5 business days.",
    "The address of {order} is updated; the carrier has the new one.",
    "Order {order} is processing; you will get a tracking link by email.",
]


def chat_conversation(
    name: str,
    *,
    customer: str,
    turns: int,
    queue: str,
    started: datetime,
    rng: random.Random | None = None,
    model: str = "gpt-4.1-mini",
    snapshot: str = "gpt-4.1-mini-2025-04-14",
    rewrite_at_turn: int | None = None,
    truncate_last: bool = False,
) -> Iterator[dict[str, Any]]:
    """A Chat Completions conversation of ``turns`` turns (question, tool call, tool result,
    answer), two exchanges a turn, each request carrying the whole history: 1 + 4 x turns
    messages. ``rewrite_at_turn``: from that turn on, the requests carry an edited first question
    (the exchange is flagged ``history_rewritten``); ``truncate_last``: the last answer ends with
    ``finish_reason: length``. Without ``rng``, the texts of ``long_conversation``."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful support assistant for an online shop."}
    ]
    step = 0

    def body(request_messages: list[dict[str, Any]], message: dict[str, Any], finish: str):
        request = {"model": model, "messages": request_messages, "max_tokens": 1024}
        response = {
            "id": f"chatcmpl-{name}-{step}",
            "object": "chat.completion",
            "model": snapshot,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 100 + 40 * step, "completion_tokens": 40},
        }
        return {
            "conversation": name,
            "customer": customer,
            "format": "openai.chat",
            "request": _compact(request),
            "response": _compact(response),
            "started_at": (started + timedelta(seconds=30 * step)).isoformat(),
            "latency_ms": 1200,
            "labels": {"queue": queue},
        }

    for turn in range(turns):
        order = f"ORD-{5_000_000 + turn}" if rng is None else f"ORD-{rng.randrange(10**6, 10**7)}"
        call_id = f"call_{name}_{turn}"
        if rng is None:
            question = f"Where is my order {order}? I may want a refund."
            answer_text = f"Your order {order} has shipped with DHL; no refund is needed yet."
        else:
            question = rng.choice(CHAT_QUESTIONS).format(order=order)
            answer_text = rng.choice(CHAT_ANSWERS).format(order=order)
        history.append({"role": "user", "content": question})
        call = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": "lookup_order",
                        "arguments": _compact({"order_id": order}),
                    },
                }
            ],
        }
        if rewrite_at_turn is not None and turn == rewrite_at_turn:
            # The chat backend edited the first question: the stored history no longer matches.
            history[1] = {"role": "user", "content": history[1]["content"] + " (edited)"}
        yield body(list(history), call, "tool_calls")
        step += 1
        history.append(call)
        result = {"order_id": order, "status": "shipped", "carrier": "DHL"}
        history.append({"role": "tool", "tool_call_id": call_id, "content": _compact(result)})
        answer = {"role": "assistant", "content": answer_text}
        last = turn == turns - 1
        yield body(list(history), answer, "length" if truncate_last and last else "stop")
        step += 1
        history.append(answer)


def long_conversation(turns: int, queue: str) -> Iterator[dict[str, Any]]:
    """The long conversation of ``turns`` turns (1 + 4 x turns messages), ``conv_long_<turns>``,
    for the pages of long conversations and the query counts (also used by ``bench/replay.py``)."""
    return chat_conversation(
        f"conv_long_{turns}",
        customer=f"cus_long_{turns}",
        turns=turns,
        queue=queue,
        started=datetime(2026, 10, 1, 9, tzinfo=UTC),
    )


def _vary(bodies: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """A demo conversation, sometimes changed as real traffic is: another model snapshot (rare),
    its last answer cut off or refused. Only Anthropic and Chat Completions ones are changed."""
    fmt = bodies[0]["format"]
    rare_model, truncated, refused = rng.random() < 0.06, rng.random() < 0.03, rng.random() < 0.015
    if fmt not in ("anthropic.messages", "openai.chat") or not (rare_model or truncated or refused):
        return bodies
    out = []
    for index, body in enumerate(bodies):
        request, response = json.loads(body["request"]), json.loads(body["response"])
        last = index == len(bodies) - 1
        if fmt == "anthropic.messages":
            if rare_model:
                request["model"], response["model"] = "claude-opus-4-1", RARE_MODEL
            if last and truncated:
                response["stop_reason"] = "max_tokens"
            elif last and refused:
                response["stop_reason"] = "refusal"
        elif last and (truncated or refused):
            response["choices"][0]["finish_reason"] = "length" if truncated else "content_filter"
        out.append({**body, "request": _compact(request), "response": _compact(response)})
    return out


def base_bodies(count: int, *, seed: int = 20261201) -> Iterator[dict[str, Any]]:
    """The exchange bodies of ``count`` base conversations (two thirds demo ones, one third
    multi-turn chats), each conversation's exchanges in order."""
    from conversations.demo import QUEUES, demo_bodies

    rng = random.Random(seed)
    demo = count * 2 // 3
    for _, group in itertools.groupby(demo_bodies(demo), key=lambda b: b["conversation"]):
        yield from _vary(list(group), rng)
    for index in range(count - demo):
        turns = rng.randint(1, 9)
        rewrite = rng.randrange(1, turns) if turns > 1 and rng.random() < 0.03 else None
        other = rng.random() < 0.1
        yield from chat_conversation(
            f"conv_chat_{index:06d}",
            customer=f"cus_chat_{index:06d}",
            turns=turns,
            queue=rng.choice(QUEUES),
            started=datetime(2026, 10, 1, 9, tzinfo=UTC) + timedelta(minutes=37 * index),
            rng=rng,
            model="gpt-4.1" if other else "gpt-4.1-mini",
            snapshot="gpt-4.1-2025-04-14" if other else "gpt-4.1-mini-2025-04-14",
            rewrite_at_turn=rewrite,
            truncate_last=rng.random() < 0.015,
        )


# --- the marker --------------------------------------------------------------------------------


def _marker_value(conversations: int) -> dict[str, Any]:
    return {"conversations": conversations, "version": SEED_VERSION}


def seeded(url: str, conversations: int) -> bool:
    """Whether the database at ``url`` exists and holds this store (its marker matches)."""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", [MARKER]).fetchone()
            if not row or not row[0]:
                return False
            found = conn.execute(
                sql.SQL("SELECT value FROM {} WHERE name = 'store'").format(sql.Identifier(MARKER))
            ).fetchone()
    except psycopg.OperationalError:
        return False
    return found is not None and found[0] == _marker_value(conversations)


def _write_marker(conn: psycopg.Connection[Any], conversations: int) -> None:
    marker = sql.Identifier(MARKER)
    conn.execute(
        sql.SQL("CREATE TABLE IF NOT EXISTS {} (name text PRIMARY KEY, value jsonb)").format(marker)
    )
    conn.execute(
        sql.SQL(
            "INSERT INTO {} VALUES ('store', %s) ON CONFLICT (name) DO UPDATE SET value = "
            "excluded.value"
        ).format(marker),
        [psycopg.types.json.Jsonb(_marker_value(conversations))],
    )


# --- seeding -----------------------------------------------------------------------------------


@dataclass
class Progress:
    """Rows copied so far by the two copying threads, for the progress lines."""

    total: int
    sql_done: int = 0  # conversations whose conversation and block rows are in
    python_done: int = 0  # conversations whose exchanges, messages and key are in
    errors: list[BaseException] = field(default_factory=list)


def seed_store(
    conversations: int, *, log: Callable[[str], None] | None = None
) -> list[tuple[str, str]]:
    """Seed the (migrated, empty) bench database with ``conversations`` conversations; returns
    report lines (what was stored, the time of each step). ``log`` gets progress lines."""
    from django.conf import settings
    from django.db import connections

    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    url = _url(settings.DATABASES["default"])
    keys_url = _url(settings.DATABASES["keys"])
    clonable = conversations - len(LONG_TURNS)
    if clonable < 1:
        raise BenchError(f"at least {len(LONG_TURNS) + 1} conversations")
    base = min(BASE, clonable)
    rows: list[tuple[str, str]] = []
    timings: list[tuple[str, float]] = []

    with Stopwatch() as sw:
        lines = _ingest_base(base, say)
    timings.append(
        (f"ingest of the base ({base:,} conversations, {lines:,} exchanges)", sw.seconds)
    )
    _, keys = keystore()
    from conversations.models import Conversation

    base_ids = list(
        Conversation.objects.exclude(external_id__startswith="conv_long_").values_list(
            "pk", flat=True
        )
    )
    plain = keys.data_keys_for(base_ids)
    for alias in connections:
        connections[alias].close()  # the copying below uses connections of its own

    with psycopg.connect(url, autocommit=True) as conn:
        with Stopwatch() as sw:
            conn.execute(SPREAD_ACTIVITY)
            _base_table(conn, base, conversations)
        timings.append(("base: last activity, customers", sw.seconds))
        strides = {t: _max_id(conn, t) for t in TABLES}
        indexes = _secondary_indexes(conn)
        with Stopwatch() as sw:
            for ix in indexes:
                conn.execute(ix.drop)
        timings.append((f"drop {len(indexes)} secondary indexes", sw.seconds))

    rounds = -(-clonable // base)  # round 0 is the base itself
    progress = Progress(total=clonable - base)
    with Stopwatch() as copy:
        if rounds > 1:
            _copy_clones(url, keys_url, base, rounds, clonable, strides, plain, progress, say)
    timings.append((f"clone {clonable - base:,} conversations ({rounds - 1} rounds)", copy.seconds))

    with psycopg.connect(url, autocommit=True) as conn:
        with Stopwatch() as sw:
            _in_parallel(url, [ix.create for ix in indexes], say, "index")
        timings.append((f"rebuild {len(indexes)} indexes (2 at a time)", sw.seconds))
        with Stopwatch() as sw:
            for table in TABLES:
                conn.execute(
                    sql.SQL(
                        "SELECT setval(pg_get_serial_sequence(%s, 'id'), max(id)) FROM {}"
                    ).format(sql.Identifier(table)),
                    [table],
                )
            _in_parallel(
                url,
                [f"VACUUM ANALYZE {t}" for t in (BLOCK, MESSAGE, EXCHANGE, CONVERSATION)],
                say,
                "vacuum",
            )
        with psycopg.connect(keys_url, autocommit=True) as keys_conn:
            keys_conn.execute(
                sql.SQL("SELECT setval(pg_get_serial_sequence(%s, 'id'), max(id)) FROM {}").format(
                    sql.Identifier(KEY_TABLE)
                ),
                [KEY_TABLE],
            )
            keys_conn.execute(f"VACUUM ANALYZE {KEY_TABLE}")
        timings.append(("sequences, VACUUM ANALYZE", sw.seconds))
        counts = {
            t: conn.execute(
                sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(t))
            ).fetchone()[0]
            for t in TABLES
        }
        conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(BASE_TABLE)))
        if counts[CONVERSATION] != conversations:
            raise BenchError(f"seeded {counts[CONVERSATION]:,} conversations of {conversations:,}")

    with Stopwatch() as sw:
        checked = _check_clones(strides[CONVERSATION], rounds)
    timings.append((f"decrypt {checked} clones and compare with their base", sw.seconds))
    with psycopg.connect(url, autocommit=True) as conn:
        _write_marker(conn, conversations)

    size = _database_size(url)
    rows.append(
        (
            "seeding",
            f"{counts[CONVERSATION]:,} conversations, {counts[EXCHANGE]:,} exchanges, "
            f"{counts[MESSAGE]:,} messages, {counts[BLOCK]:,} blocks ({size})",
        )
    )
    rows.extend((f"  {label}", f"{seconds:.1f} s") for label, seconds in timings)
    rows.append(("  total", f"{sum(s for _, s in timings):.1f} s"))
    return rows


def _url(db: dict[str, Any]) -> str:
    """A libpq connection string for one of Django's ``DATABASES``."""
    parts = {"dbname": db["NAME"], "user": db.get("USER"), "password": db.get("PASSWORD")}
    parts |= {"host": db.get("HOST"), "port": str(db.get("PORT") or "")}
    return make_conninfo(**{k: v for k, v in parts.items() if v})


def _database_size(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))").fetchone()
    return f"database {row[0] if row else '?'}"


def _ingest_base(base: int, say: Callable[[str], None]) -> int:
    from django.core.management import CommandError, call_command

    from conversations.demo import QUEUES

    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        path = Path(tmp) / "exchanges.jsonl"
        lines = 0
        bodies = itertools.chain(
            base_bodies(base), *(long_conversation(t, QUEUES[0]) for t in LONG_TURNS)
        )
        with path.open("w", encoding="utf-8") as out:
            for body in bodies:
                out.write(_compact(body))
                out.write("\n")
                lines += 1
        say(f"ingesting the base: {base:,} conversations, {lines:,} exchanges")
        out_buf, err = io.StringIO(), io.StringIO()
        try:
            call_command("ingest", str(path), "--no-progress", stdout=out_buf, stderr=err)
        except CommandError as exc:
            raise BenchError(f"ingest failed: {exc}\n{err.getvalue()[:2000]}") from exc
    return lines


# A bulk ingest stamps a whole batch's conversations with the batch's time (arrival time):
# a few hundred distinct values where a live store has one per conversation. Each conversation
# gets the time its last exchange answered, as if the exchanges had arrived live.
SPREAD_ACTIVITY = """
    UPDATE conversations_conversation AS c
    SET last_activity_at = e.at
    FROM (SELECT conversation_id,
                 max(started_at + make_interval(secs => coalesce(latency_ms, 0) / 1000.0)) AS at
          FROM conversations_exchange GROUP BY conversation_id) AS e
    WHERE c.id = e.conversation_id
"""


def _base_table(conn: psycopg.Connection[Any], base: int, conversations: int) -> None:
    """``bench_console_base``: the base conversations (rank 1..base, their activity before the
    spread); then the base itself gets its spread activity and customer, like every clone."""
    customers = customer_count(conversations)
    conn.execute(f"DROP TABLE IF EXISTS {BASE_TABLE}")
    conn.execute(
        f"""CREATE UNLOGGED TABLE {BASE_TABLE} AS
            SELECT id, row_number() OVER (ORDER BY id) AS rank, last_activity_at AS activity
            FROM {CONVERSATION} WHERE external_id NOT LIKE 'conv\\_long\\_%'"""  # noqa: S608
    )
    found = conn.execute(f"SELECT count(*) FROM {BASE_TABLE}").fetchone()  # noqa: S608
    if not found or found[0] != base:
        raise BenchError(f"the base holds {found[0] if found else 0} conversations, not {base}")
    conn.execute(f"ALTER TABLE {BASE_TABLE} ADD PRIMARY KEY (id)")
    # Base conversations move like their clones: shift = new activity - old activity.
    shift = f"({_activity_sql('b.id')} - b.activity)"
    conn.execute(
        f"""UPDATE {CONVERSATION} c SET last_activity_at = {_activity_sql("c.id")},
                created_at = c.created_at + {shift},
                customer_external_id = {_customer_sql("c.id", customers)}
            FROM {BASE_TABLE} b WHERE b.id = c.id"""  # noqa: S608
    )
    for table, columns in ((EXCHANGE, ("started_at", "created_at")), (MESSAGE, ("created_at",))):
        sets = ", ".join(f"{c} = t.{c} + {shift}" for c in columns)
        conn.execute(
            f"UPDATE {table} t SET {sets} FROM {BASE_TABLE} b "  # noqa: S608
            "WHERE b.id = t.conversation_id"
        )


def _max_id(conn: psycopg.Connection[Any], table: str) -> int:
    row = conn.execute(
        sql.SQL("SELECT coalesce(max(id), 0) FROM {}").format(sql.Identifier(table))
    ).fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class SecondaryIndex:
    table: str
    name: str
    drop: str
    create: str


def _secondary_indexes(conn: psycopg.Connection[Any]) -> list[SecondaryIndex]:
    """Every index of the four tables but their primary keys, with the statements that drop and
    recreate it (a unique constraint as a constraint); the costliest (GIN) first."""
    found = conn.execute(
        """SELECT t.relname, i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid),
                  c.conname, pg_get_constraintdef(c.oid), am.amname
           FROM pg_index i
           JOIN pg_class t ON t.oid = i.indrelid
           JOIN pg_class ic ON ic.oid = i.indexrelid
           JOIN pg_am am ON am.oid = ic.relam
           LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.contype IN ('u', 'x')
           WHERE t.relname = ANY(%s) AND t.relnamespace = 'public'::regnamespace
             AND NOT i.indisprimary
           ORDER BY am.amname <> 'gin', t.relname = %s DESC, t.relname, 2""",
        [list(TABLES), BLOCK],
    ).fetchall()
    out = []
    for table, name, indexdef, conname, condef, _ in found:
        t = sql.Identifier(table).as_string(conn)
        if conname:
            c = sql.Identifier(conname).as_string(conn)
            out.append(
                SecondaryIndex(
                    table,
                    name,
                    f"ALTER TABLE {t} DROP CONSTRAINT {c}",
                    f"ALTER TABLE {t} ADD CONSTRAINT {c} {condef}",
                )
            )
        else:
            out.append(SecondaryIndex(table, name, f"DROP INDEX {name}", indexdef))
    return out


def _in_parallel(url: str, statements: list[str], say: Callable[[str], None], what: str) -> None:
    """Run ``statements`` on two connections, each taking the next one in order (two cores)."""
    pending = list(reversed(statements))
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("SET maintenance_work_mem = '1GB'")
                while True:
                    with lock:
                        if not pending or errors:
                            return
                        statement = pending.pop()
                    with Stopwatch() as sw:
                        conn.execute(statement)
                    say(f"  {what}: {statement[:90]} ({sw.seconds:.1f} s)")
        except BaseException as exc:  # reported by the caller
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise BenchError(f"{what} failed: {errors[0]}") from errors[0]


def _columns(conn: psycopg.Connection[Any], table: str) -> list[tuple[str, int]]:
    """The table's stored columns (not generated ones) and their type oids, in order."""
    return [
        (name, oid)
        for name, oid in conn.execute(
            """SELECT attname, atttypid FROM pg_attribute
               WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped
                 AND attgenerated = ''
               ORDER BY attnum""",
            [table],
        ).fetchall()
    ]


ROUNDS_PER_STEP = 25  # clone rounds per statement: about 50,000 conversations with the full base


def _copy_clones(
    url: str,
    keys_url: str,
    base: int,
    rounds: int,
    clonable: int,
    strides: dict[str, int],
    plain: dict[int, bytes],
    progress: Progress,
    say: Callable[[str], None],
) -> None:
    """Rounds 1..rounds-1: the SQL side (conversations, blocks) and the Python side (exchanges,
    messages, keys) on their own connections at once, with a progress line every 10 s."""
    steps = [(r, min(r + ROUNDS_PER_STEP, rounds)) for r in range(1, rounds, ROUNDS_PER_STEP)]

    def guarded(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as exc:  # reported by the main thread
                progress.errors.append(exc)

        return run

    def sql_side() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET session_replication_role = replica")
            conversation_sql = _clone_conversations(conn, strides, clonable)
            block_sql = _clone_blocks(conn, strides, clonable)
            for r0, r1 in steps:
                if progress.errors:
                    return
                params = {"r0": r0, "r1": r1}
                conn.execute(conversation_sql, params)
                conn.execute(block_sql, params)
                progress.sql_done = min(r1 * base, clonable) - base

    def python_side() -> None:
        _python_clone(url, keys_url, base, clonable, strides, steps, plain, progress)

    threads = [
        threading.Thread(target=guarded(sql_side), daemon=True),
        threading.Thread(target=guarded(python_side), daemon=True),
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        next(t for t in threads if t.is_alive()).join(timeout=10)
        done = min(progress.sql_done, progress.python_done)
        elapsed = time.monotonic() - started
        left = f"~{elapsed / done * (progress.total - done):.0f} s left" if done else "..."
        say(
            f"  cloning: conversations+blocks {progress.sql_done:,}, exchanges+messages+keys "
            f"{progress.python_done:,} of {progress.total:,} ({elapsed:.0f} s, {left})"
        )
    for thread in threads:
        thread.join()
    if progress.errors:
        raise BenchError(f"cloning failed: {progress.errors[0]}") from progress.errors[0]


def _select_list(
    conn: psycopg.Connection[Any], table: str, alias: str, overrides: dict[str, str]
) -> tuple[str, str]:
    columns = [name for name, _ in _columns(conn, table)]
    unknown = set(overrides) - set(columns)
    if unknown:
        raise BenchError(f"{table} has no column {sorted(unknown)}")
    names = ", ".join(sql.Identifier(c).as_string(conn) for c in columns)
    values = ", ".join(
        overrides.get(c, f"{alias}.{sql.Identifier(c).as_string(conn)}") for c in columns
    )
    return names, values


def _clone_conversations(
    conn: psycopg.Connection[Any], strides: dict[str, int], clonable: int
) -> str:
    nid = f"c.id + g.r * {strides[CONVERSATION]}"
    customers = customer_count(clonable + len(LONG_TURNS))
    names, values = _select_list(
        conn,
        CONVERSATION,
        "c",
        {
            "id": nid,
            "external_id": "c.external_id || '~' || g.r",
            "customer_external_id": _customer_sql(nid, customers),
            "created_at": f"c.created_at - c.last_activity_at + {_activity_sql(nid)}",
            "last_activity_at": _activity_sql(nid),
        },
    )
    base = f"(SELECT max(rank) FROM {BASE_TABLE})"  # noqa: S608 (constants)
    return (
        f"INSERT INTO {CONVERSATION} ({names}) SELECT {values} "  # noqa: S608
        f"FROM {BASE_TABLE} b JOIN {CONVERSATION} c ON c.id = b.id "
        "CROSS JOIN generate_series(%(r0)s::int, %(r1)s::int - 1) AS g(r) "
        f"WHERE g.r * {base} + b.rank <= {clonable} ORDER BY g.r, c.id"
    )


def _clone_blocks(conn: psycopg.Connection[Any], strides: dict[str, int], clonable: int) -> str:
    names, values = _select_list(
        conn,
        BLOCK,
        "x",
        {
            "id": f"x.id + g.r * {strides[BLOCK]}",
            "message_id": f"x.message_id + g.r * {strides[MESSAGE]}",
            "conversation_id": f"x.conversation_id + g.r * {strides[CONVERSATION]}",
        },
    )
    base = f"(SELECT max(rank) FROM {BASE_TABLE})"  # noqa: S608 (constants)
    return (
        f"INSERT INTO {BLOCK} ({names}) SELECT {values} "  # noqa: S608
        f"FROM {BASE_TABLE} b JOIN {BLOCK} x ON x.conversation_id = b.id "
        "CROSS JOIN generate_series(%(r0)s::int, %(r1)s::int - 1) AS g(r) "
        f"WHERE g.r * {base} + b.rank <= {clonable} ORDER BY g.r, x.id"
    )


def _python_clone(
    url: str,
    keys_url: str,
    base: int,
    clonable: int,
    strides: dict[str, int],
    steps: list[tuple[int, int]],
    plain: dict[int, bytes],
    progress: Progress,
) -> None:
    """Exchanges and messages re-encrypted for their clone's id (with the project's associated
    data), and one wrapped data key per clone, by binary ``COPY``. ``plain``: the base's data
    keys."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    crypto, keys = keystore()
    exchange_aad, message_aad = keys.exchange_aad, keys.message_aad

    master = keys.master_keys()[0]
    aeads = {cid: AESGCM(key) for cid, key in plain.items()}
    with (
        psycopg.connect(url, autocommit=True) as conn,
        psycopg.connect(keys_url, autocommit=True) as keys_conn,
    ):
        conn.execute("SET session_replication_role = replica")
        # The base's activity after its spread (its rows moved with it): a clone's rows move by
        # the clone's activity minus its base's.
        ranks = dict(conn.execute(f"SELECT id, rank FROM {BASE_TABLE}").fetchall())  # noqa: S608
        spread = {cid: activity_at(cid) for cid in ranks}
        tables = [
            _BaseRows.load(conn, EXCHANGE, "settings_ciphertext", "ordinal", exchange_aad, plain),
            _BaseRows.load(conn, MESSAGE, "raw_ciphertext", "sequence", message_aad, plain),
        ]
        for r0, r1 in steps:
            if progress.errors:
                return
            for t in tables:
                copy_sql = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
                    sql.Identifier(t.table), sql.SQL(", ").join(sql.Identifier(n) for n in t.names)
                )
                id_stride, c_stride, e_stride = (
                    strides[t.table],
                    strides[CONVERSATION],
                    strides[EXCHANGE],
                )
                with conn.cursor() as cur, cur.copy(copy_sql) as copy:
                    copy.set_types(t.oids)
                    for r in range(r0, r1):
                        for row, text in zip(t.rows, t.plaintexts, strict=True):
                            base_id = row[t.i_conv]
                            if r * base + ranks[base_id] > clonable:
                                continue
                            cid = base_id + r * c_stride
                            shift = activity_at(cid) - spread[base_id]
                            out = list(row)
                            out[t.i_id] = row[t.i_id] + r * id_stride
                            out[t.i_conv] = cid
                            if t.i_exchange >= 0:
                                out[t.i_exchange] = row[t.i_exchange] + r * e_stride
                            nonce = os.urandom(crypto.NONCE_BYTES)
                            sealed = aeads[base_id].encrypt(nonce, text, t.aad(cid, row[t.i_pos]))
                            out[t.i_secret] = crypto.VERSION + nonce + sealed
                            for i in t.i_times:
                                if out[i] is not None:
                                    out[i] = out[i] + shift
                            copy.write_row(out)
            # One data key per clone: its base's, wrapped for the clone's id.
            key_copy = sql.SQL(
                "COPY {} (conversation_id, master_key_id, wrapped_key, created_at) "
                "FROM STDIN (FORMAT BINARY)"
            ).format(sql.Identifier(KEY_TABLE))
            now = datetime.now(UTC)
            with keys_conn.cursor() as cur, cur.copy(key_copy) as copy:
                copy.set_types(["int8", "varchar", "bytea", "timestamptz"])
                for r in range(r0, r1):
                    for base_id, rank in ranks.items():
                        if r * base + rank > clonable:
                            continue
                        cid = base_id + r * strides[CONVERSATION]
                        copy.write_row(
                            (cid, master.id, crypto.wrap(master, plain[base_id], cid), now)
                        )
            progress.python_done = min(r1 * base, clonable) - base


@dataclass
class _BaseRows:
    """One table's rows of the base conversations, their secret column decrypted once."""

    table: str
    names: list[str]
    oids: list[int]
    rows: list[tuple[Any, ...]]
    plaintexts: list[bytes]
    aad: Callable[[int, int], bytes]
    i_id: int
    i_conv: int
    i_secret: int
    i_pos: int
    i_exchange: int
    i_times: list[int]

    @classmethod
    def load(
        cls,
        conn: psycopg.Connection[Any],
        table: str,
        secret: str,
        position: str,
        aad: Callable[[int, int], bytes],
        plain: dict[int, bytes],
    ) -> _BaseRows:
        crypto, _ = keystore()
        columns = _columns(conn, table)
        names = [n for n, _ in columns]
        rows = conn.execute(
            sql.SQL(
                "SELECT {} FROM {} t JOIN {} b ON b.id = t.conversation_id ORDER BY t.id"
            ).format(
                sql.SQL(", ").join(sql.Identifier("t", n) for n in names),
                sql.Identifier(table),
                sql.Identifier(BASE_TABLE),
            )
        ).fetchall()
        i_conv, i_secret, i_pos = (
            names.index("conversation_id"),
            names.index(secret),
            names.index(position),
        )
        plaintexts = [
            crypto.decrypt(plain[r[i_conv]], bytes(r[i_secret]), aad(r[i_conv], r[i_pos]))
            for r in rows
        ]
        return cls(
            table=table,
            names=names,
            oids=[oid for _, oid in columns],
            rows=rows,
            plaintexts=plaintexts,
            aad=aad,
            i_id=names.index("id"),
            i_conv=i_conv,
            i_secret=i_secret,
            i_pos=i_pos,
            i_exchange=names.index("exchange_id") if "exchange_id" in names else -1,
            i_times=[i for i, n in enumerate(names) if n in ("started_at", "created_at")],
        )


def _check_clones(stride: int, rounds: int, samples: int = 5) -> int:
    """A few clones, decrypted through the project's own readers: the same messages and exchange
    settings as their base conversation (data keys, ids and associated data line up). Returns the
    number checked."""
    crypto, keys = keystore()
    from conversations.models import Conversation, Exchange
    from conversations.selectors import conversation_message_raws

    def settings_of(conversation: Conversation) -> list[bytes]:
        key = keys.data_key_for(conversation.pk)
        return [
            crypto.decrypt(key, bytes(sealed), keys.exchange_aad(conversation.pk, ordinal))
            for ordinal, sealed in Exchange.objects.filter(conversation=conversation)
            .order_by("ordinal")
            .values_list("ordinal", "settings_ciphertext")
        ]

    if rounds < 2:
        return 0
    rng = random.Random(7)
    base_ids = list(
        Conversation.objects.filter(pk__lt=stride)
        .exclude(external_id__startswith="conv_long_")
        .values_list("pk", flat=True)
    )
    checked = 0
    for _ in range(samples):
        base_id = rng.choice(base_ids)
        clone = Conversation.objects.filter(pk=base_id + rng.randrange(1, rounds) * stride).first()
        if clone is None:  # the last round is partial
            continue
        original = Conversation.objects.get(pk=base_id)
        if conversation_message_raws(clone) != conversation_message_raws(original) or settings_of(
            clone
        ) != settings_of(original):
            raise BenchError(f"clone {clone.pk} of {base_id} does not decrypt to its base")
        checked += 1
    return checked


__all__ = [
    "BASE",
    "LONG_TURNS",
    "RARE_MODEL",
    "activity_at",
    "base_bodies",
    "chat_conversation",
    "customer_of",
    "long_conversation",
    "seed_store",
    "seeded",
]
