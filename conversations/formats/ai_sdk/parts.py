"""The UIMessage part readers shared by the request, the response and the stream: a part's Block
(its class, its withheld marker), a message's checks, its usage and its tool call ids."""

from __future__ import annotations

from typing import Any

from ...blocks import Block, BlockClass, Usage, classify
from ..base import (
    FormatError,
    opt_int,
)
from ..live import split_inline
from .js import required, want
from .profile import FORMAT, INLINE

_ROLES = ("system", "user", "assistant")
# Keys of providerMetadata entries that mean "the deliberation is withheld, only this token is
# kept" (Anthropic signature / redactedData, Google thoughtSignature, OpenAI encrypted content).
_WITHHELD_MARKERS = ("signature", "redact", "encrypted")


def _withheld(part: dict[str, Any]) -> bool:
    if part.get("text") != "":
        return False
    meta = part.get("providerMetadata")
    if not isinstance(meta, dict):
        return False
    for entry in meta.values():
        if not isinstance(entry, dict):
            continue
        for key, value in entry.items():
            if value not in (None, "", {}, []) and any(m in key.lower() for m in _WITHHELD_MARKERS):
                return True
    return False


def _part_block(
    part: Any, *, fld: str, at: str, streamed_input: str | None = None
) -> Block | tuple[Block, ...] | None:
    part = want(part, dict, "a part object", fld=fld, at=at)
    ptype = required(part, "type", str, "the part type, a string", fld=fld, at=at)
    if ptype == "step-start":
        return None  # structural: a step boundary (see the module docstring)
    cls = classify(FORMAT, ptype)
    if cls is BlockClass.VISIBLE:
        text = required(part, "text", str, "the text, a string", fld=fld, at=at)
        span, visible = split_inline(text, INLINE)
        if span is not None:  # <think>...</think> at the start (the profile's INLINE)
            think = Block(type=INLINE.never_type, cls=BlockClass.NEVER)
            return (think, Block(type=ptype, cls=cls, text=visible)) if visible else (think,)
        return Block(type=ptype, cls=cls, text=text)
    if cls is BlockClass.NEVER:
        required(part, "text", str, "the reasoning text, a string", fld=fld, at=at)
        return Block(type=ptype, cls=cls, redacted=_withheld(part))
    if cls is BlockClass.AUDIT:
        if ptype == "dynamic-tool":
            name = required(part, "toolName", str, "the tool name, a string", fld=fld, at=at)
        else:
            name = ptype[len("tool-") :]
        call_id = required(part, "toolCallId", str, "the tool call id, a string", fld=fld, at=at)
        state = required(part, "state", str, "the tool state, a string", fld=fld, at=at)
        if streamed_input is not None:
            tool_input: Any = streamed_input  # cut off mid-stream: the raw text received
        else:
            tool_input = part["input"] if "input" in part else part.get("rawInput")
        output = part.get("output")
        if state == "output-error" and output is None:
            output = part.get("errorText")
        return Block(
            type=ptype,
            cls=cls,
            tool_name=name,
            call_id=call_id,
            input=tool_input,
            output=output,
            is_error=state == "output-error",
            status=state,
        )
    return Block(type=ptype, cls=BlockClass.UNKNOWN)


def message_blocks(
    msg: dict[str, Any], *, fld: str, at: str, streamed: dict[int, str] | None = None
) -> tuple[Block, ...]:
    parts = required(msg, "parts", list, "the parts, an array", fld=fld, at=at)
    blocks: list[Block] = []
    for j, part in enumerate(parts):
        block = _part_block(
            part,
            fld=fld,
            at=f"{at}.parts[{j}]",
            streamed_input=streamed.get(j) if streamed else None,
        )
        if isinstance(block, tuple):
            blocks.extend(block)
        elif block is not None:
            blocks.append(block)
    return tuple(blocks)


def check_message(msg: Any, *, fld: str, at: str) -> tuple[dict[str, Any], str]:
    msg = want(msg, dict, "a UIMessage object", fld=fld, at=at)
    if "id" in msg:
        want(msg["id"], str, "the message id, a string", fld=fld, at=f"{at}.id")
    role = required(msg, "role", str, "the role, a string", fld=fld, at=at)
    if role not in _ROLES:
        raise FormatError(
            f"expected role system, user or assistant, got {role!r}",
            field=fld,
            at=f"{at}.role",
            code="invalid_role",
        )
    return msg, role


# ---------------------------------------------------------------------------------------------
# Params


def message_usage(metadata: Any) -> Usage:
    """An AI SDK LanguageModelUsage the backend put in the message metadata (v5 flat fields, v6
    ``inputTokenDetails``/``outputTokenDetails``). Nothing is inferred when it is absent."""
    usage = Usage()
    if not isinstance(metadata, dict):
        return usage
    found = metadata.get("totalUsage", metadata.get("usage"))
    if not isinstance(found, dict):
        return usage
    in_details = found.get("inputTokenDetails")
    in_details = in_details if isinstance(in_details, dict) else {}
    out_details = found.get("outputTokenDetails")
    out_details = out_details if isinstance(out_details, dict) else {}
    usage.input_tokens = opt_int(found.get("inputTokens"))
    usage.output_tokens = opt_int(found.get("outputTokens"))
    cache_read = opt_int(in_details.get("cacheReadTokens"))
    usage.cache_read_tokens = (
        cache_read if cache_read is not None else opt_int(found.get("cachedInputTokens"))
    )
    usage.cache_write_tokens = opt_int(in_details.get("cacheWriteTokens"))
    reasoning = opt_int(out_details.get("reasoningTokens"))
    usage.reasoning_tokens = (
        reasoning if reasoning is not None else opt_int(found.get("reasoningTokens"))
    )
    return usage


def tool_call_ids(msg: dict[str, Any] | None) -> set[str]:
    if msg is None:
        return set()
    return {
        p["toolCallId"]
        for p in msg.get("parts", ())
        if isinstance(p, dict) and is_tool(p) and isinstance(p.get("toolCallId"), str)
    }


def server_tool_counts(msg: dict[str, Any], before: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in msg["parts"]:
        if is_tool(p) and p.get("providerExecuted") is True and p.get("toolCallId") not in before:
            name = p.get("toolName") if p["type"] == "dynamic-tool" else p["type"][5:]
            if isinstance(name, str):
                counts[name] = counts.get(name, 0) + 1
    return counts


def is_tool(part: dict[str, Any]) -> bool:
    ptype = part.get("type")
    return isinstance(ptype, str) and (ptype.startswith("tool-") or ptype == "dynamic-tool")


# ---------------------------------------------------------------------------------------------
# fix-json / parse-partial-json, ported from vercel/ai packages/ai/src/util/fix-json.ts
