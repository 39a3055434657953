"""Random streams from each format's documented event grammar, for the differential test.

What varies, in every format: how strings are cut into deltas (at any UTF-16 code unit, so a
surrogate pair may be split between two deltas; empty deltas too), what the strings hold (JSON
escapes, control characters, U+2028, combining marks, right-to-left text, astral characters),
how each event's JSON is written (compact, spaced, pretty-printed over several ``data:`` lines,
non-ASCII raw or escaped), the SSE framing (LF, CRLF or CR line ends, ``data:`` with or without
its space, comments, ``id:`` lines, pings), and where the byte stream is cut into reads (inside
lines and multi-byte characters; the SDKs read it in those pieces).

What stays inside the grammar the SDKs and the project agree on: the cases where they do not
(pinned in test_differential.py) are not generated here. One stream per seed, reproducible.

- Anthropic Messages (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
  ``message_start``, then blocks in order, each ``content_block_start`` / deltas /
  ``content_block_stop`` (text with ``text_delta`` and ``citations_delta``; thinking with
  ``thinking_delta`` and ``signature_delta``; ``redacted_thinking`` whole; ``tool_use``,
  ``server_tool_use``, ``mcp_tool_use`` with ``input_json_delta``; ``web_search_tool_result``,
  ``mcp_tool_result`` whole; ``compaction`` with ``compaction_delta``), ``ping`` anywhere,
  ``message_delta``, ``message_stop``; sometimes an ``error`` event ends it early.
- Chat Completions (https://platform.openai.com/docs/api-reference/chat-streaming): chunks whose
  ``choices[0].delta`` carry the role, ``reasoning_content``/``reasoning``, ``content``,
  ``refusal``, ``tool_calls`` (by index; id, type and name first, the name sometimes in pieces,
  then argument pieces; calls interleaved), ``audio`` in pieces; empty deltas; a finishing
  chunk; a usage chunk with no choices; ``[DONE]``.
- Responses (https://platform.openai.com/docs/api-reference/responses-streaming):
  ``response.created``/``in_progress``, items by ``output_index`` (message with output_text and
  refusal parts and annotations, reasoning with summary parts, function_call with argument
  deltas, web_search_call with its progress events), ``response.output_item.done`` for most of
  them, and ``response.completed`` with the finished items (or ``response.incomplete`` without
  ``output``, so the items are the ones the events built).
- AI SDK UI message stream (ai 6.x ``uiMessageChunkSchema``): ``start``, steps, text and
  reasoning parts, tool calls in every flow (streamed input, JSON or text encoded; input
  available; outputs, preliminary outputs, errors, approvals, denials; input errors; an input
  still streaming at the end), sources, files, data parts (updated by id, transient),
  metadata, ``abort``, ``error``, ``finish``, ``[DONE]``; and streams that continue the
  request's last assistant message.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")

# Pieces strings are made of: plain text, JSON's escapes, and Unicode that trips decoders.
_PIECES = [
    *string.ascii_letters,
    *string.digits,
    " ",
    " ",
    ".",
    ",",
    "!",
    "?",
    "-",
    "'",
    '"',
    "\\",
    "/",
    "\n",
    "\t",
    "\r",
    "\b",
    "\x01",
    "\x1f",
    "\x7f",
    "\u2028",
    "\u2029",
    "é",
    "ß",
    "ø",
    "€",
    "中文",
    "日本語",
    "שלום",
    "مرحبا",
    "e\u0301",
    "\u00a0",
    "\ufeff",
    "\U0001f600",
    "\U0001f44d\U0001f3fd",
    "\U0001f1e9\U0001f1ea",
    "\U00020000",
    "\U0001d11e",
    "{",
    "}",
    "[",
    "]",
    ":",
    "data: ",
    "event: x",
    "[DONE]",
]
_WORDS = ["order", "refund", "shipped", "Leipzig", "ORD-1042", "the", "a", "is", "on", "its way"]


class Gen:
    """Random values for one stream (one seed)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.seq = 0

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, options: list[Any]) -> Any:
        return self.r.choice(options)

    def ident(self, prefix: str) -> str:
        self.seq += 1
        return f"{prefix}{self.seq:02d}{self.r.getrandbits(40):010x}"

    def text(self, longest: int = 30) -> str:
        n = self.r.randint(0, longest)
        out = []
        for _ in range(n):
            out.append(self.pick(_WORDS) + " " if self.chance(0.35) else self.pick(_PIECES))
        return "".join(out)

    def key(self) -> str:
        return self.pick(["id", "order_id", "query", "note", "amount", "items", "city", "ok"]) + (
            self.text(3) if self.chance(0.2) else ""
        )

    def number(self) -> int | float:
        kind = self.r.random()
        if kind < 0.4:
            return self.r.randint(-1000, 100000)
        if kind < 0.5:
            return self.r.randint(-(2**53), 2**53)
        if kind < 0.8:
            return round(self.r.uniform(-1e6, 1e6), self.r.randint(0, 6))
        return self.pick([0.1, 1e-7, 1.5e300, -2.5e-300, 123456789.125, 0.0, 1e21])

    def value(self, depth: int = 0) -> Any:
        kind = self.r.random()
        if depth >= 3 or kind < 0.3:
            return self.text(12)
        if kind < 0.5:
            return self.number()
        if kind < 0.6:
            return self.pick([True, False, None])
        if kind < 0.8:
            return [self.value(depth + 1) for _ in range(self.r.randint(0, 3))]
        return self.object(depth + 1)

    def object(self, depth: int = 0) -> dict[str, Any]:
        return {self.key(): self.value(depth) for _ in range(self.r.randint(0, 4))}

    # -- strings cut into deltas

    def pieces(self, text: str, *, most: int = 8) -> list[str]:
        """``text`` cut at random UTF-16 code units (a cut may split a surrogate pair); empty
        pieces where two cuts meet."""
        units = text.encode("utf-16-le", "surrogatepass")
        count = len(units) // 2
        cuts = sorted(self.r.randint(0, count) for _ in range(self.r.randint(0, most)))
        out, start = [], 0
        for cut in [*cuts, count]:
            out.append(units[start * 2 : cut * 2].decode("utf-16-le", "surrogatepass"))
            start = cut
        return out

    def code_point_pieces(self, text: str, *, most: int = 8) -> list[str]:
        """``text`` cut between code points only."""
        cuts = sorted(self.r.randint(0, len(text)) for _ in range(self.r.randint(0, most)))
        out, start = [], 0
        for cut in [*cuts, len(text)]:
            out.append(text[start:cut])
            start = cut
        return out

    def json_text(self, value: Any, *, ascii_only: bool | None = None) -> str:
        """``value`` as JSON text, written one of the ways a server writes it."""
        style = self.r.random()
        if ascii_only is None:
            ascii_only = self.chance(0.4)
        if style < 0.5:
            return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
        if style < 0.8:
            return json.dumps(value, ensure_ascii=ascii_only)
        return json.dumps(value, ensure_ascii=ascii_only, indent=self.r.randint(0, 3))


def _escape_surrogates(text: str) -> str:
    """A lone surrogate written raw cannot be UTF-8: as a JSON escape it can (a split pair's
    halves travel this way)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass
class Frame:
    """How one stream writes its SSE."""

    eol: str
    space: bool  # "data: x" or "data:x"
    named: bool  # `event:` lines
    comments: bool
    ids: bool
    multiline: bool  # pretty JSON spread over several data: lines

    @classmethod
    def random(cls, g: Gen, *, named: bool | None = None) -> Frame:
        return cls(
            eol=g.pick(["\n", "\n", "\r\n", "\r"]),
            space=g.chance(0.8),
            named=g.chance(0.5) if named is None else named,
            comments=g.chance(0.3),
            ids=g.chance(0.2),
            multiline=g.chance(0.3),
        )


@dataclass
class Writer:
    g: Gen
    frame: Frame
    out: list[str] = field(default_factory=list)
    n: int = 0

    def dump(self, obj: Any) -> str:
        g = self.g
        ascii_only = g.chance(0.3)
        if self.frame.multiline and g.chance(0.5):
            text = json.dumps(obj, ensure_ascii=ascii_only, indent=g.r.randint(1, 2))
        elif g.chance(0.5):
            text = json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":"))
        else:
            text = json.dumps(obj, ensure_ascii=ascii_only)
        return text if ascii_only else _escape_surrogates(text)

    def event(self, obj: Any, name: str | None = None, *, data: str | None = None) -> None:
        f, eol = self.frame, self.frame.eol
        lines = []
        if f.comments and self.g.chance(0.15):
            lines.append(": keep-alive")
        if f.named and name is not None:
            lines.append(f"event:{' ' if f.space else ''}{name}")
        if f.ids and self.g.chance(0.5):
            lines.append(f"id: {self.n}")
        text = self.dump(obj) if data is None else data
        sep = "data: " if f.space else "data:"
        for line in text.split("\n"):
            lines.append(sep + line)
        self.out.append(eol.join(lines) + eol + eol)
        self.n += 1

    def text(self) -> str:
        return "".join(self.out)


def byte_cuts(g: Gen, text: str) -> list[int]:
    """Where the stream's bytes are cut into reads (any byte: inside lines and characters)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size < 2 or g.chance(0.2):
        return []
    return sorted({g.r.randint(1, size - 1) for _ in range(g.r.randint(1, 12))})


@dataclass
class Generated:
    format: str
    seed: int
    stream: str
    cuts: list[int]
    request: str | None = None  # None: the runner's minimal request
    base: Any = None  # ai-sdk.ui: the assistant message the stream continues
    beta_only: bool = False  # anthropic: holds blocks only the beta accumulator reads


# --- Anthropic -----------------------------------------------------------------------------------


def anthropic(seed: int) -> Generated:
    g = Gen(seed)
    w = Writer(g, Frame.random(g, named=True if g.chance(0.9) else None))
    beta_only = False

    def ev(obj: dict[str, Any]) -> None:
        w.event(obj, obj["type"])
        if g.chance(0.08):
            w.event({"type": "ping"}, "ping")

    usage: dict[str, Any] = {"input_tokens": g.r.randint(1, 9999), "output_tokens": 1}
    if g.chance(0.4):
        usage |= {"cache_read_input_tokens": g.r.randint(0, 5000)}
        usage |= {"cache_creation_input_tokens": g.r.randint(0, 500)}
    start = {
        "id": g.ident("msg_"),
        "type": "message",
        "role": "assistant",
        "model": g.pick(["claude-sonnet-4-5", "claude-opus-4-6", "claude-haiku-4-5"]),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    ev({"type": "message_start", "message": start})
    stop_reason = "end_turn"
    errored = False
    for index in range(g.r.randint(0, 5)):
        kind = g.pick(
            [
                "text",
                "text",
                "thinking",
                "redacted_thinking",
                "tool_use",
                "server_tool_use",
                "web_search_tool_result",
                "mcp_tool_use",
                "mcp_tool_result",
                "compaction",
            ]
        )
        beta_only |= kind in ("mcp_tool_use", "mcp_tool_result", "compaction")

        def delta(d: dict[str, Any], i: int = index) -> None:
            ev({"type": "content_block_delta", "index": i, "delta": d})

        def begin(block: dict[str, Any], i: int = index) -> None:
            ev({"type": "content_block_start", "index": i, "content_block": block})

        if kind == "text":
            begin({"type": "text", "text": g.text(5) if g.chance(0.1) else ""})
            for piece in g.pieces(g.text(60)):
                delta({"type": "text_delta", "text": piece})
                if g.chance(0.1):
                    citation = {
                        "type": "char_location",
                        "cited_text": g.text(10),
                        "document_index": 0,
                        "document_title": g.text(5),
                        "start_char_index": 0,
                        "end_char_index": g.r.randint(1, 50),
                    }
                    delta({"type": "citations_delta", "citation": citation})
            if g.chance(0.1):
                w.event(
                    {"type": "error", "error": {"type": "overloaded_error", "message": "Busy"}},
                    "error",
                )
                errored = True
                break
        elif kind == "thinking":
            begin({"type": "thinking", "thinking": "", "signature": ""})
            for piece in g.pieces(g.text(60)) if g.chance(0.8) else []:
                delta({"type": "thinking_delta", "thinking": piece})
            if g.chance(0.9):
                delta({"type": "signature_delta", "signature": g.ident("Eq") + "=="})
        elif kind == "redacted_thinking":
            begin({"type": "redacted_thinking", "data": g.ident("EmwKAhgB") + "=="})
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            block: dict[str, Any] = {
                "type": kind,
                "id": g.ident(
                    {"tool_use": "toolu_", "server_tool_use": "srvtoolu_"}.get(kind, "mcptoolu_")
                ),
                "name": g.pick(["get_order", "web_search", "refund", "lookup_customer"]),
                "input": {},
            }
            if kind == "mcp_tool_use":
                block["server_name"] = "crm"
            begin(block)
            if g.chance(0.85):
                text = g.json_text(g.object())
                # The SDK encodes each piece to UTF-8: a piece holding half a pair raw would
                # crash it (a server never cuts inside a character there). Escaped, any cut.
                cut = (
                    g.code_point_pieces(text)
                    if any(ord(c) > 0xFFFF for c in text)
                    else g.pieces(text)
                )
                if g.chance(0.5):
                    cut = ["", *cut]  # the API opens with an empty piece
                for piece in cut:
                    delta({"type": "input_json_delta", "partial_json": piece})
            stop_reason = "tool_use"
        elif kind == "web_search_tool_result":
            results = [
                {
                    "type": "web_search_result",
                    "url": f"https://example.com/{g.r.randint(1, 99)}",
                    "title": g.text(8),
                    "encrypted_content": g.ident("Eo"),
                    "page_age": None,
                }
                for _ in range(g.r.randint(0, 3))
            ]
            begin({"type": kind, "tool_use_id": g.ident("srvtoolu_"), "content": results})
        elif kind == "mcp_tool_result":
            content = [{"type": "text", "text": g.text(20)}]
            begin(
                {
                    "type": kind,
                    "tool_use_id": g.ident("mcptoolu_"),
                    "is_error": False,
                    "content": content,
                }
            )
        else:  # compaction
            begin({"type": "compaction", "content": None})
            d: dict[str, Any] = {"type": "compaction_delta", "content": g.text(60)}
            if g.chance(0.7):
                d["encrypted_content"] = g.ident("Eq") + "=="
            delta(d)
        ev({"type": "content_block_stop", "index": index})
        if g.chance(0.05):
            w.event(
                {"type": "error", "error": {"type": "api_error", "message": "Internal"}},
                "error",
            )
            errored = True
            break
    if not errored:
        final_usage: dict[str, Any] = {"output_tokens": g.r.randint(1, 4000)}
        if g.chance(0.3):
            final_usage["server_tool_use"] = {"web_search_requests": g.r.randint(0, 3)}
        ev(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": final_usage,
            }
        )
        ev({"type": "message_stop"})
    text = w.text()
    return Generated("anthropic.messages", seed, text, byte_cuts(g, text), beta_only=beta_only)


# --- Chat Completions ----------------------------------------------------------------------------


def openai_chat(seed: int) -> Generated:
    g = Gen(seed)
    w = Writer(g, Frame.random(g, named=False))
    head = {
        "id": g.ident("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": 1730000000 + g.r.randint(0, 10**6),
        "model": g.pick(
            ["gpt-4o-mini", "deepseek-reasoner", "qwen3-coder", "gpt-4o-audio-preview"]
        ),
    }
    if g.chance(0.5):
        head["system_fingerprint"] = g.ident("fp_")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
        w.event(
            {
                **head,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
        )
        if g.chance(0.07):
            w.event({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": None}]})

    first: dict[str, Any] = {"role": "assistant"}
    if g.chance(0.7):
        first["content"] = g.pick(["", None])
    if g.chance(0.5):
        first["refusal"] = None
    chunk(first)
    reasoning_key = g.pick(["reasoning_content", "reasoning"])
    if g.chance(0.4):
        for piece in g.pieces(g.text(50)):
            chunk(
                {reasoning_key: piece, "content": None} if g.chance(0.5) else {reasoning_key: piece}
            )
    if g.chance(0.8):
        for piece in g.pieces(g.text(60)):
            d: dict[str, Any] = {"content": piece}
            if g.chance(0.2):
                d[reasoning_key] = None
            chunk(d)
    elif g.chance(0.3):
        for piece in g.pieces(g.text(30)):
            chunk({"refusal": piece})
    finish = g.pick(["stop", "stop", "length"])
    if g.chance(0.5):
        finish = "tool_calls"
        calls = []
        for index in range(g.r.randint(1, 3)):
            name = g.pick(["get_order_status", "lookup", "refund_order", "search_web"])
            names = g.code_point_pieces(name, most=2) if g.chance(0.3) else [name]
            names = [n for n in names if n] or [name]
            arguments = g.pieces(g.json_text(g.object()))
            steps: list[dict[str, Any]] = [
                {
                    "index": index,
                    "id": g.ident("call_"),
                    "type": "function",
                    "function": {"name": names[0], "arguments": ""},
                }
            ]
            steps += [{"index": index, "function": {"name": n}} for n in names[1:]]
            steps += [{"index": index, "function": {"arguments": a}} for a in arguments]
            calls.append(steps)
        # Calls may interleave once begun, but begin in index order (the SDK files a call
        # by its index into the list as it stands: one that begins early is misfiled, pinned
        # apart).
        interleave = g.chance(0.3)
        begun = 0
        while any(calls):
            live = [c for i, c in enumerate(calls) if c and i <= begun]
            source = g.pick(live) if interleave else live[0]
            batch = [source.pop(0)]
            if interleave and g.chance(0.2):
                others = [c for i, c in enumerate(calls) if c and c is not source and i < begun]
                if others:
                    batch.append(g.pick(others).pop(0))
            if batch[0]["index"] == begun:
                begun += 1
            chunk({"tool_calls": batch})
    if g.chance(0.15):
        chunk({"audio": {"id": g.ident("audio_"), "transcript": ""}})
        for _ in range(g.r.randint(1, 5)):
            key = g.pick(["transcript", "data"])
            piece = g.text(10) if key == "transcript" else g.ident("UklGR")
            chunk({"audio": {key: piece}})
        chunk({"audio": {"expires_at": 1730003600 + g.r.randint(0, 99)}})
    chunk({}, finish)
    if g.chance(0.5):
        usage = {"prompt_tokens": g.r.randint(1, 999), "completion_tokens": g.r.randint(1, 999)}
        w.event({**head, "choices": [], "usage": usage})
    if g.chance(0.85):
        w.event(None, data="[DONE]")
    text = w.text()
    return Generated("openai.chat", seed, text, byte_cuts(g, text))


# --- Responses -----------------------------------------------------------------------------------


def openai_responses(seed: int) -> Generated:
    g = Gen(seed)
    w = Writer(g, Frame.random(g))
    seq = [0]
    rid = g.ident("resp_")
    incomplete = g.chance(0.2)  # response.incomplete without "output": items as events built

    def ev(obj: dict[str, Any]) -> None:
        obj["sequence_number"] = seq[0]
        seq[0] += 1
        w.event(obj, obj["type"])

    def response(status: str, output: list[Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": rid,
            "object": "response",
            "created_at": 1765552659,
            "status": status,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"}
            if status == "incomplete"
            else None,
            "model": "gpt-5-mini-2025-08-07",
        }
        if output is not None:
            body["output"] = output
        return body

    ev({"type": "response.created", "response": response("in_progress", [])})
    if g.chance(0.7):
        ev({"type": "response.in_progress", "response": response("in_progress", [])})
    finals: list[Any] = []
    for index in range(g.r.randint(0, 4)):
        kind = g.pick(["message", "message", "reasoning", "function_call", "web_search_call"])
        # Without its done event an item is taken from response.completed, or, when the
        # terminal event has no output, built from its events (messages and calls only: the
        # SDK's snapshot does not apply summary events).
        skip_done = g.chance(0.25) and (not incomplete or kind in ("message", "function_call"))
        iid = g.ident(
            {"message": "msg_", "reasoning": "rs_", "function_call": "fc_"}.get(kind, "ws_")
        )
        at = {"item_id": iid, "output_index": index}
        if kind == "message":
            ev(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {
                        "id": iid,
                        "type": "message",
                        "status": "in_progress",
                        "content": [],
                        "role": "assistant",
                    },
                }
            )
            parts = []
            for ci in range(g.r.randint(1, 2)):
                # The SDK's snapshot does not apply refusal deltas: none on an item it builds.
                refusal = g.chance(0.1) and not (skip_done and incomplete)
                if refusal:
                    part: dict[str, Any] = {"type": "refusal", "refusal": ""}
                    ev(
                        {
                            "type": "response.content_part.added",
                            **at,
                            "content_index": ci,
                            "part": dict(part),
                        }
                    )
                    text = g.text(30)
                    for piece in g.pieces(text):
                        ev(
                            {
                                "type": "response.refusal.delta",
                                **at,
                                "content_index": ci,
                                "delta": piece,
                            }
                        )
                    ev(
                        {
                            "type": "response.refusal.done",
                            **at,
                            "content_index": ci,
                            "refusal": text,
                        }
                    )
                    part["refusal"] = text
                else:
                    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
                    ev(
                        {
                            "type": "response.content_part.added",
                            **at,
                            "content_index": ci,
                            "part": json.loads(json.dumps(part)),
                        }
                    )
                    text = g.text(60)
                    for piece in g.pieces(text):
                        ev(
                            {
                                "type": "response.output_text.delta",
                                **at,
                                "content_index": ci,
                                "delta": piece,
                                "logprobs": [],
                            }
                        )
                    if g.chance(0.3) and not (skip_done and incomplete):
                        note = {
                            "type": "url_citation",
                            "url": "https://example.com/",
                            "title": g.text(5),
                            "start_index": 0,
                            "end_index": 3,
                        }
                        ev(
                            {
                                "type": "response.output_text.annotation.added",
                                **at,
                                "content_index": ci,
                                "annotation_index": 0,
                                "annotation": note,
                            }
                        )
                        part["annotations"].append(note)
                    ev(
                        {
                            "type": "response.output_text.done",
                            **at,
                            "content_index": ci,
                            "text": text,
                            "logprobs": [],
                        }
                    )
                    part["text"] = text
                ev({"type": "response.content_part.done", **at, "content_index": ci, "part": part})
                parts.append(part)
            final = {
                "id": iid,
                "type": "message",
                "status": "completed",
                "content": parts,
                "role": "assistant",
            }
        elif kind == "reasoning":
            added: dict[str, Any] = {"id": iid, "type": "reasoning", "summary": []}
            if g.chance(0.5):
                added["encrypted_content"] = g.ident("gAAAA-early-")
            ev({"type": "response.output_item.added", "output_index": index, "item": added})
            summary = []
            for si in range(g.r.randint(0, 2)):
                ev(
                    {
                        "type": "response.reasoning_summary_part.added",
                        **at,
                        "summary_index": si,
                        "part": {"type": "summary_text", "text": ""},
                    }
                )
                text = g.text(40)
                for piece in g.pieces(text):
                    ev(
                        {
                            "type": "response.reasoning_summary_text.delta",
                            **at,
                            "summary_index": si,
                            "delta": piece,
                        }
                    )
                ev(
                    {
                        "type": "response.reasoning_summary_text.done",
                        **at,
                        "summary_index": si,
                        "text": text,
                    }
                )
                ev(
                    {
                        "type": "response.reasoning_summary_part.done",
                        **at,
                        "summary_index": si,
                        "part": {"type": "summary_text", "text": text},
                    }
                )
                summary.append({"type": "summary_text", "text": text})
            final = {"id": iid, "type": "reasoning", "summary": summary}
            if "encrypted_content" in added or g.chance(0.3):
                final["encrypted_content"] = g.ident("gAAAA-final-")
        elif kind == "function_call":
            call = {
                "id": iid,
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": g.ident("call_"),
                "name": g.pick(["get_order", "refund"]),
            }
            ev({"type": "response.output_item.added", "output_index": index, "item": dict(call)})
            arguments = g.json_text(g.object())
            for piece in g.pieces(arguments):
                ev({"type": "response.function_call_arguments.delta", **at, "delta": piece})
            ev({"type": "response.function_call_arguments.done", **at, "arguments": arguments})
            final = {**call, "status": "completed", "arguments": arguments}
        else:
            ev(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {"id": iid, "type": "web_search_call", "status": "in_progress"},
                }
            )
            for step in ("in_progress", "searching", "completed"):
                ev({"type": f"response.web_search_call.{step}", **at})
            final = {
                "id": iid,
                "type": "web_search_call",
                "status": "completed",
                "action": {"type": "search", "query": g.text(10)},
            }
        if not skip_done:
            ev({"type": "response.output_item.done", "output_index": index, "item": final})
        finals.append(final)
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 5},
        "total_tokens": 30,
    }
    if incomplete:
        ev(
            {
                "type": "response.incomplete",
                "response": response("incomplete", None) | {"usage": usage},
            }
        )
    else:
        ev(
            {
                "type": "response.completed",
                "response": response("completed", finals) | {"usage": usage},
            }
        )
    text = w.text()
    return Generated("openai.responses", seed, text, byte_cuts(g, text))


# --- AI SDK UI message stream --------------------------------------------------------------------

_FINISH_REASONS = ["stop", "length", "content-filter", "tool-calls", "error", "other"]


def _provider_metadata(g: Gen) -> dict[str, Any]:
    provider = g.pick(["anthropic", "openai", "google"])
    return {provider: {g.pick(["signature", "itemId", "cacheControl"]): g.ident("pm_")}}


def ai_sdk(seed: int) -> Generated:
    g = Gen(seed)
    w = Writer(g, Frame.random(g, named=False))
    chunks: list[dict[str, Any]] = []
    add = chunks.append
    base: dict[str, Any] | None = None
    pending: list[str] = []  # tool calls of earlier parts that may receive an output
    used: list[str] = []  # every tool call id so far
    streaming_base: str | None = None
    if g.chance(0.25):
        # A continuation: the request's last message is an assistant message the stream goes on.
        client = g.ident("call_")
        base = {
            "id": g.ident("msg_"),
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "text", "text": g.text(20), "state": "done"},
                {
                    "type": "tool-askForConfirmation",
                    "toolCallId": client,
                    "state": "input-available",
                    "input": g.object(),
                },
            ],
        }
        pending.append(client)
        if g.chance(0.4):
            streaming_base = g.ident("call_")
            raw = '{"note": "' + g.text(5).replace("\\", "").replace('"', "")
            base["parts"].append(
                {
                    "type": "tool-draftReply",
                    "toolCallId": streaming_base,
                    "state": "input-streaming",
                    "input": {},
                    "rawInput": raw,
                }
            )
    start: dict[str, Any] = {"type": "start"}
    if base is not None:
        if g.chance(0.6):
            start["messageId"] = base["id"]
    elif g.chance(0.85):
        start["messageId"] = g.ident("msg_")
    if g.chance(0.4):
        start["messageMetadata"] = {"createdAt": 1765552659, "model": {"id": "m", "tags": ["a"]}}
    add(start)
    if streaming_base is not None:
        for piece in g.pieces(g.text(8).replace("\\", "").replace('"', "") + '"}'):
            add({"type": "tool-input-delta", "toolCallId": streaming_base, "inputTextDelta": piece})
        add(
            {
                "type": "tool-input-available",
                "toolCallId": streaming_base,
                "toolName": "draftReply",
                "input": {"note": "x"},
            }
        )
    if pending and g.chance(0.7):
        add({"type": "tool-output-available", "toolCallId": pending.pop(0), "output": g.value()})
    ended_streaming = False
    for _step in range(g.r.randint(1, 3)):
        add({"type": "start-step"})
        open_text: list[str] = []
        for _ in range(g.r.randint(0, 4)):
            kind = g.pick(
                [
                    "text",
                    "text",
                    "reasoning",
                    "tool",
                    "tool",
                    "source-url",
                    "source-document",
                    "file",
                    "data",
                    "metadata",
                ]
            )
            if kind in ("text", "reasoning"):
                pid = g.ident("p")
                begin: dict[str, Any] = {"type": f"{kind}-start", "id": pid}
                if g.chance(0.3):
                    begin["providerMetadata"] = _provider_metadata(g)
                add(begin)
                for piece in g.pieces(g.text(50)):
                    d = {"type": f"{kind}-delta", "id": pid, "delta": piece}
                    if g.chance(0.1):
                        d["providerMetadata"] = _provider_metadata(g)
                    add(d)
                if g.chance(0.85):
                    end: dict[str, Any] = {"type": f"{kind}-end", "id": pid}
                    if g.chance(0.2):
                        end["providerMetadata"] = _provider_metadata(g)
                    add(end)
                else:
                    open_text.append(pid)
            elif kind == "tool":
                ended_streaming = _tool_flow(g, add, pending, used)
                if ended_streaming:
                    break
            elif kind == "source-url":
                c = {
                    "type": "source-url",
                    "sourceId": g.ident("src_"),
                    "url": "https://example.com/a",
                }
                if g.chance(0.5):
                    c["title"] = g.text(8)
                add(c)
            elif kind == "source-document":
                add(
                    {
                        "type": "source-document",
                        "sourceId": g.ident("doc_"),
                        "mediaType": "application/pdf",
                        "title": g.text(8),
                    }
                )
            elif kind == "file":
                c = {
                    "type": "file",
                    "url": "data:image/png;base64,iVBORw0KGgo=",
                    "mediaType": "image/png",
                }
                if g.chance(0.4):
                    c["providerMetadata"] = _provider_metadata(g)
                add(c)
            elif kind == "data":
                name = g.pick(["data-weather", "data-notice"])
                c = {"type": name, "data": g.value()}
                if g.chance(0.6):
                    c["id"] = g.pick(["d1", "d2"])
                if g.chance(0.15):
                    c["transient"] = g.chance(0.7)
                add(c)
            else:
                add(
                    {
                        "type": "message-metadata",
                        "messageMetadata": {"step": g.r.randint(0, 9), "model": {"tags": ["b"]}},
                    }
                )
        if ended_streaming:
            break
        if g.chance(0.9):
            add({"type": "finish-step"})
        if pending and g.chance(0.3):
            add(
                {"type": "tool-output-available", "toolCallId": pending.pop(0), "output": g.value()}
            )
    if g.chance(0.06):
        add({"type": "abort", "reason": "user"} if g.chance(0.5) else {"type": "abort"})
    if g.chance(0.06):
        add({"type": "error", "errorText": g.text(10)})
        if g.chance(0.5):
            add({"type": "text-start", "id": "after-error"})
    finish: dict[str, Any] = {"type": "finish"}
    if ended_streaming:
        finish["finishReason"] = "length"
    elif g.chance(0.8):
        finish["finishReason"] = g.pick(_FINISH_REASONS)
    if g.chance(0.3):
        finish["messageMetadata"] = {"totalUsage": {"inputTokens": 10, "outputTokens": 20}}
    add(finish)
    for c in chunks:
        w.event(c)
    # eventsource-parser (the AI SDK's) never dispatches the last event of a stream whose lines
    # end in CR alone (pinned apart): such a stream ends with [DONE], which it skips anyway.
    if g.chance(0.9) or w.frame.eol == "\r":
        w.event(None, data="[DONE]")
    text = w.text()
    request = None
    if base is not None:
        user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        request = json.dumps(
            {"id": "chat-1", "messages": [user, base], "trigger": "submit-message"}
        )
    return Generated("ai-sdk.ui", seed, text, byte_cuts(g, text), request=request, base=base)


def _tool_flow(
    g: Gen, add: Callable[[dict[str, Any]], None], pending: list[str], used: list[str]
) -> bool:
    """One tool call's chunks; True when the stream ends with its input still streaming. Now
    and then a call reuses an earlier call's id: the SDK finds a stream's tool part in the
    current step, an output's in the current step and then anywhere."""
    call_id = g.pick(used) if used and g.chance(0.15) else g.ident("call_")
    used.append(call_id)
    name = g.pick(["getWeather", "lookupOrder", "web_search", "apply_patch"])
    dynamic = g.chance(0.25)
    common: dict[str, Any] = {"toolCallId": call_id, "toolName": name}
    if dynamic:
        common["dynamic"] = True
    executed = g.chance(0.3)
    flow = g.pick(["streamed", "streamed", "streamed", "available", "input-error", "cut"])
    text_encoded = flow != "input-error" and g.chance(0.2)
    value: Any = g.text(30) if text_encoded else g.object()
    if flow in ("streamed", "input-error", "cut"):
        begin = {"type": "tool-input-start", **common}
        if executed:
            begin["providerExecuted"] = True
        if g.chance(0.3):
            begin["title"] = g.text(6)
        if text_encoded:
            begin["inputEncoding"] = "text"
        elif g.chance(0.2):
            begin["inputEncoding"] = "json"
        if g.chance(0.2):
            begin["toolMetadata"] = {"source": g.text(4), "n": g.r.randint(0, 9)}
        if g.chance(0.2):
            begin["providerMetadata"] = _provider_metadata(g)
        add(begin)
        # A cut-off input stops between code points, and its astral characters are not
        # escapes (the cut could fall between the two halves' escapes): JavaScript would keep
        # half a pair, the console refuses it (pinned apart).
        text = (
            value
            if text_encoded
            else g.json_text(value, ascii_only=False if flow == "cut" else None)
        )
        if flow == "cut":
            text = text[: g.r.randint(0, len(text))]
        for piece in g.pieces(text):
            add({"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": piece})
        if flow == "cut":
            return True
        if flow == "input-error":
            add(
                {
                    "type": "tool-input-error",
                    **common,
                    "input": text[: len(text) // 2],
                    "errorText": g.text(10),
                }
            )
            return False
    available = {"type": "tool-input-available", **common, "input": value}
    if executed:
        available["providerExecuted"] = True
    if g.chance(0.2):
        available["providerMetadata"] = _provider_metadata(g)
    if g.chance(0.2):
        available["title"] = g.text(6)
    add(available)
    then = g.pick(["output", "output", "preliminary", "error", "approval", "denied", "none"])
    if then == "none":
        pending.append(call_id)
        return False
    if then in ("approval", "denied"):
        request: dict[str, Any] = {
            "type": "tool-approval-request",
            "toolCallId": call_id,
            "approvalId": g.ident("ap_"),
        }
        if g.chance(0.3):
            request["approvalDescriptor"] = {"summary": g.text(5)}
        if g.chance(0.3):
            request["signature"] = g.ident("sig_")
        add(request)
        if then == "denied":
            add({"type": "tool-output-denied", "toolCallId": call_id})
        return False
    output: dict[str, Any] = {
        "type": "tool-output-available",
        "toolCallId": call_id,
        "output": g.value(),
    }
    if then == "error":
        output = {"type": "tool-output-error", "toolCallId": call_id, "errorText": g.text(10)}
    if executed:
        output["providerExecuted"] = True
    if g.chance(0.3):
        output["providerMetadata"] = _provider_metadata(g)
    if g.chance(0.15):
        output["toolMetadata"] = {"k": g.text(3)}
    if then == "preliminary":
        for _ in range(g.r.randint(1, 2)):
            add({**output, "output": g.value(), "preliminary": True})
    add(output)
    return False


GENERATORS: dict[str, Callable[[int], Generated]] = {
    "anthropic.messages": anthropic,
    "openai.chat": openai_chat,
    "openai.responses": openai_responses,
    "ai-sdk.ui": ai_sdk,
}
