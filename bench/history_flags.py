"""The history-rewrite signal on real recorded traffic: how many exchanges it flags, and why.

What it measures: the VCR cassettes public projects keep of their own test runs (agent
frameworks, SDK wrappers, tracing libraries: ``bench/recordings.py`` reads them), which this
repository does not hold, are posted in order, cassette by cassette (each one a conversation),
through ``POST /api/v1/exchanges`` (Django's test client with a service token, in process).
Counted: exchanges posted, accepted, refused (by error code and detail), flagged as a rewritten
history (by kind), recorded as a change the model does not see (``unseen``, ``reserialised``),
and branches (regenerated, edited, restarted). Each flag is printed with the member paths that
differ between the element sent and the one stored, so a false flag can be read at once.

Then the real changes: for every cassette whose later request sends back an earlier answer, the
same cassette is posted again with that request changed as a backend could change it: the
answer's text edited, its reasoning (thinking block, reasoning item, ``reasoning_content``)
dropped, a tool call dropped, two messages swapped. Each changed request must be flagged, with a
kind the model sees, and priced (``cache_lost_tokens`` set).

The baseline, in the same run: the changed requests, which must all be flagged. The ratio
printed: false flags per exchange accepted (target 0) and changes found per change made (target
1). A flag is counted false when every member that differs is one the model never sees or only
re-serialised, as this script judges it without the console's rules (its own short list below,
``NEVER_SEEN``); each is listed for a person to read.

    .venv/bin/python bench/history_flags.py --corpus DIR [DIR ...] [--limit N] [--verbose]

Get a corpus: check out a project at a commit and point ``--corpus`` at the folders holding its
cassettes (pydantic/pydantic-ai ``tests/models/cassettes``, traceloop/openllmetry
``packages/*/tests/**/cassettes``, Arize-ai/openinference, crewAIInc/crewAI
``lib/crewai/tests/cassettes``, Mirascope/mirascope ``python/tests``); the figures of the last
run are in docs/formats.md ("Real traffic").
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BenchError, report, run_benchmark, setup_django, truncate_conversations
from bench.recordings import Recorded, cassettes

# What a backend may drop, add or change without the model seeing it, as this script judges a
# flag false (its own list, independent of the console's: Profile.unseen): a member that only
# identifies or marks (any value), or one whose value is empty (null, [], {}, "") or a default.
IDENTIFIERS = {"id", "status", "index", "cache_control"}
EMPTY = ("null", "[]", "{}", '""', '{"type": "direct"}')


def _conversation_id(name: str, variant: str = "") -> str:
    return "rec-" + hashlib.sha256(f"{name}#{variant}".encode()).hexdigest()[:24]


def _history(request: str) -> tuple[str, list[Any]] | None:
    try:
        body = json.loads(request)
    except ValueError:
        return None
    for key in ("messages", "input"):
        if isinstance(body.get(key), list):
            return key, body[key]
    return None


def _diff(a: Any, b: Any, at: str = "$") -> list[tuple[str, str, str]]:
    """Where two JSON values differ: (path, how, value), a member on one side only included
    (how: "added", "dropped" or "changed"; the value as JSON, or both values)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a:
                out.append((f"{at}.{key}", "added", json.dumps(b[key])))
            elif key not in b:
                out.append((f"{at}.{key}", "dropped", json.dumps(a[key])))
            else:
                out += _diff(a[key], b[key], f"{at}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{at}[{i}]")
        ]
    if a != b:
        return [(at, "changed", f"{json.dumps(a)} -> {json.dumps(b)}")]
    return []


def _unseen_only(diffs: list[tuple[str, str, str]]) -> bool:
    def unseen(path: str, how: str, value: str) -> bool:
        member = path.rsplit(".", 1)[-1].split("[", 1)[0]
        if member in IDENTIFIERS:
            return True
        return how in ("added", "dropped") and value in EMPTY

    return bool(diffs) and all(unseen(*d) for d in diffs)


def _said(diffs: list[tuple[str, str, str]]) -> str:
    return "; ".join(f"{path} {how} {value[:60]}" for path, how, value in diffs[:4])


# --- the changes a backend could make --------------------------------------------------------


def _is_answer(element: Any) -> bool:
    if not isinstance(element, dict):
        return False
    return element.get("role") == "assistant" or (
        element.get("type")
        in (
            "reasoning",
            "function_call",
            "message",
        )
        and element.get("role", "assistant") == "assistant"
    )


def _edit_text(items: list[Any]) -> bool:
    for element in reversed(items):
        if not _is_answer(element):
            continue
        content = element.get("content")
        if isinstance(content, str) and content:
            element["content"] = content + " (edited)"
            return True
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
                part["text"] += " (edited)"
                return True
    return False


def _drop_reasoning(items: list[Any]) -> bool:
    for i, element in enumerate(items):
        if not isinstance(element, dict):
            continue
        if element.get("type") == "reasoning":
            del items[i]
            return True
        if element.get("role") == "assistant" and isinstance(element.get("content"), list):
            kept = [
                b
                for b in element["content"]
                if not (isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"))
            ]
            if len(kept) < len(element["content"]) and kept:
                element["content"] = kept
                return True
        if element.get("role") == "assistant" and element.get("reasoning_content"):
            del element["reasoning_content"]
            return True
    return False


def _drop_call(items: list[Any]) -> bool:
    for element in items:
        if not isinstance(element, dict) or element.get("role") != "assistant":
            continue
        calls = element.get("tool_calls")
        if isinstance(calls, list) and len(calls) > 1:
            element["tool_calls"] = calls[1:]
            return True
        content = element.get("content")
        if isinstance(content, list):
            uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
            if len(uses) > 1:
                content.remove(uses[0])
                return True
    return False


def _swap(items: list[Any]) -> bool:
    for i in range(len(items) - 1):
        if _is_answer(items[i + 1]) and items[i] != items[i + 1]:
            items[i], items[i + 1] = items[i + 1], items[i]
            return True
    return False


CHANGES = {
    "text edited": _edit_text,
    "reasoning dropped": _drop_reasoning,
    "tool call dropped": _drop_call,
    "messages swapped": _swap,
}


def _changed(recorded: list[Recorded], change: str) -> tuple[list[Recorded], int] | None:
    """The cassette with its last request that sends an answer back changed (and the index of
    that exchange), or None when no request offers what ``change`` needs. Only what the
    request sends back is changed: the previous request's history and the answer after it (a
    message the framework adds to the new request is no history of the conversation's)."""
    for n in range(len(recorded) - 1, 0, -1):
        found, before = _history(recorded[n].request), _history(recorded[n - 1].request)
        if found is None or before is None:
            continue
        key, items = found
        sent_back = len(before[1]) + 1
        items = copy.deepcopy(items)
        head, tail = items[:sent_back], items[sent_back:]
        if not any(_is_answer(e) for e in head) or not CHANGES[change](head):
            continue
        items = head + tail
        body = json.loads(recorded[n].request)
        body[key] = items
        changed = Recorded(
            recorded[n].index,
            recorded[n].format,
            json.dumps(body),
            recorded[n].endpoint,
            recorded[n].response,
            recorded[n].stream,
        )
        return [*recorded[:n], changed], n
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", type=Path, required=True, help="cassette folders")
    parser.add_argument("--limit", type=int, default=0, help="at most this many cassettes")
    parser.add_argument("--verbose", action="store_true", help="every flag and refusal in full")
    args = parser.parse_args(argv)
    for root in args.corpus:
        if not root.is_dir():
            raise BenchError(f"{root}: not a folder")

    setup_django()
    truncate_conversations()
    from django.test import Client

    from conversations.keystore.keys import data_key_for, decrypt_message
    from conversations.models import Exchange, Message
    from conversations.monitoring.rewrites import SEEN
    from conversations.selectors import conversation_tree
    from conversations.services import service_token_create

    _, token = service_token_create(name="bench-history-flags")
    client = Client(SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {token}")

    def post(conversation: str, r: Recorded) -> tuple[int, dict[str, Any]]:
        body: dict[str, Any] = {
            "conversation": conversation,
            "customer": "cus-recorded",
            "format": r.format,
            "request": r.request,
            "endpoint": r.endpoint,
        }
        body["response" if r.response is not None else "stream"] = r.response or r.stream
        answer = client.post("/api/v1/exchanges", json.dumps(body), content_type="application/json")
        return answer.status_code, answer.json()

    corpus = list(cassettes(args.corpus))
    if args.limit:
        corpus = corpus[: args.limit]
    posted = accepted = 0
    refused: Counter[str] = Counter()
    refusals: dict[str, list[str]] = {}
    by_format: Counter[str] = Counter()
    sent: dict[tuple[str, int], Recorded] = {}  # (conversation, exchange id) -> what was sent
    names: dict[str, str] = {}
    for name, recorded in corpus:
        conversation = _conversation_id(name)
        names[conversation] = name
        for r in recorded:
            posted += 1
            by_format[r.format] += 1
            status, body = post(conversation, r)
            if status == 201:
                accepted += 1
                sent[(conversation, body["exchange"])] = r
            else:
                why = f"{status} {body.get('error')} at {body.get('field')} {body.get('at')}"
                refused[why] += 1
                refusals.setdefault(why, []).append(f"{name}#{r.index}: {body.get('detail')}")

    exchanges = list(
        Exchange.objects.filter(pk__in=[pk for _, pk in sent])
        .select_related("conversation")
        .order_by("conversation_id", "ordinal")
    )
    kinds = Counter(e.rewrite_kind for e in exchanges if e.rewrite_kind)
    branches = Counter(e.branch for e in exchanges if e.branch)
    flagged = [e for e in exchanges if e.history_rewritten or e.rewrite_kind in SEEN]
    false_flags, explained = 0, []
    for e in flagged:
        conversation = e.conversation.external_id
        r = sent[(conversation, e.pk)]
        found = _history(r.request)
        diffs: list[tuple[str, str, str]] = []
        if e.rewritten_at is not None and found is not None and e.path_parent is not None:
            tree, _ = conversation_tree(e.conversation_id)
            path = tree.path(e.path_parent)
            if e.rewritten_at < len(path) and e.rewritten_at < len(found[1]):
                row = Message.objects.get(
                    conversation=e.conversation, sequence=path[e.rewritten_at]
                )
                stored = decrypt_message(
                    data_key_for(e.conversation_id),
                    e.conversation_id,
                    row.sequence,
                    bytes(row.raw_ciphertext),
                )
                diffs = _diff(json.loads(stored), found[1][e.rewritten_at])
        false = _unseen_only(diffs)
        false_flags += false
        explained.append(
            f"{'FALSE ' if false else ''}{e.rewrite_kind or 'rewritten'} at {e.rewritten_at}: "
            f"{names[conversation]}#{r.index}  {_said(diffs) or '(settings or elsewhere)'}"
        )

    # The real changes, each in a conversation of its own.
    made: Counter[str] = Counter()
    found_changes: Counter[str] = Counter()
    priced: Counter[str] = Counter()
    missed: list[str] = []
    for name, recorded in corpus:
        for change in CHANGES:
            variant = _changed(recorded, change)
            if variant is None:
                continue
            exchanges_sent, n = variant
            conversation = _conversation_id(name, change)
            results = [post(conversation, r) for r in exchanges_sent]
            if any(status != 201 for status, _ in results[:n]) or results[n][0] != 201:
                continue  # the original was refused: nothing to compare
            made[change] += 1
            e = Exchange.objects.get(pk=results[n][1]["exchange"])
            if e.history_rewritten or e.rewrite_kind in SEEN:
                found_changes[change] += 1
                priced[change] += e.cache_lost_tokens is not None
            else:
                missed.append(f"{change}: {name} (kind {e.rewrite_kind!r}, branch {e.branch!r})")

    rows = [
        ("cassettes", f"{len(corpus)} from {', '.join(str(p) for p in args.corpus)}"),
        (
            "exchanges posted",
            f"{posted} ({', '.join(f'{k} {v}' for k, v in sorted(by_format.items()))})",
        ),
        ("accepted", str(accepted)),
        ("refused", f"{posted - accepted}"),
        *((f"  {why}", str(n)) for why, n in refused.most_common()),
        (
            "flagged (a change the model sees)",
            f"{len(flagged)} " + str(dict(Counter(e.rewrite_kind or "rewritten" for e in flagged))),
        ),
        ("  of which false (only unseen members differ)", str(false_flags)),
        (
            "recorded unseen / re-serialised",
            f"{kinds.get('unseen', 0)} / {kinds.get('reserialised', 0)}",
        ),
        ("branches", str(dict(branches)) or "none"),
        ("real changes made", str(dict(made))),
        ("  flagged", str(dict(found_changes))),
        ("  priced", str(dict(priced))),
        ("false flags per accepted exchange (target 0)", f"{false_flags / max(accepted, 1):.4f}"),
        (
            "changes flagged per change made (target 1)",
            f"{sum(found_changes.values()) / max(sum(made.values()), 1):.3f}",
        ),
    ]
    report(rows)
    print("\nFlags:")
    for line in explained if args.verbose else explained[:40]:
        print("  " + line)
    print("\nRefusals:")
    for why, lines in refusals.items():
        print(f"  {why}")
        for line in lines if args.verbose else lines[:3]:
            print(f"    {line[:300]}")
    if missed:
        print("\nChanges not flagged:")
        for line in missed:
            print("  " + line)
    return 0 if false_flags == 0 and not missed else 1


if __name__ == "__main__":
    run_benchmark(main)
