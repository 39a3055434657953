"""What a chat backend sends back to continue a conversation (DESIGN section 12).

``GET /api/v1/conversations/{id}/messages?for=continuation`` returns the stored history less
what the provider does not need next turn: the reasoning of earlier turns. What is kept is kept
byte for byte: a message left whole is the exact text first received; a message with reasoning
blocks left out is its exact text with those blocks cut out of its content array (every other
byte, every kept block included, exactly as received). The response says how many elements and
bytes were left out. Inside an open tool loop (the last assistant turn ends in a tool call whose
result is still to come, or has just come) that turn is kept unmodified, reasoning and
signatures included, because the provider needs it.

The rule of each format, from the provider's documentation:

- ``anthropic.messages``: Anthropic, *Building with extended thinking*, "Preserving thinking
  blocks" and "Extended thinking with tool use"
  (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking): thinking blocks from
  previous assistant turns are stripped by the API and do not count as context, so they may be
  left out; during tool use the thinking blocks of the last assistant message must be passed
  back complete and unmodified (the signature is checked). Left out: ``thinking`` and
  ``redacted_thinking`` blocks of assistant messages before the open tool loop.
- ``openai.responses``: OpenAI, *Reasoning models*, "Keeping reasoning items in context"
  (https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context) and
  *Function calling* with reasoning models
  (https://platform.openai.com/docs/guides/function-calling): reasoning items are needed from the
  last user message on, while the model is calling functions (pass back the reasoning items with
  the function call and its output); reasoning items of earlier turns are not used by the
  model. Left out: ``reasoning`` items before the last user message, or all of them when no tool
  loop is open after it.
- ``openai.chat``: OpenAI's Chat Completions return no reasoning in their messages (OpenAI,
  *Reasoning models*: reasoning tokens are not returned and are discarded after each call), so
  an OpenAI history has nothing to leave out. Backends on the same wire that return their chain
  of thought in ``reasoning_content`` say to leave it out of earlier turns: DeepSeek, *Reasoning
  model* (https://api-docs.deepseek.com/guides/reasoning_model): "the CoT from previous rounds
  is not concatenated into the context" (and an input carrying it was refused), while in
  thinking mode with tool calls it must be sent back within the tool loop
  (https://api-docs.deepseek.com/guides/thinking_mode). Left out: the ``reasoning_content``
  member of assistant messages before the open tool loop (the message's other members exactly
  as received).
- ``ai-sdk.ui``: Vercel AI SDK, ``convertToModelMessages``
  (https://ai-sdk.dev/docs/reference/ai-sdk-ui/convert-to-model-messages) turns ``reasoning``
  parts into the model's reasoning content for the provider underneath, whose rule is the one
  above (Anthropic's signatures travel in the part's ``providerMetadata``). Left out: the
  ``reasoning`` parts of assistant messages before the last one, or of the last one too when it
  does not end in a tool part (its step is complete).

To add a format: a function ``(values) -> (open loop?, protected indices, cuts)`` below (a cut
names, per element, the indices of its content array to leave out, ``WHOLE`` for the element,
or a member's name), registered in ``RULES``, its documentation cited here, and a case in
``tests/conversations/test_continuation.py`` (open loop and closed, kept elements byte-identical).

Pure: no Django, no model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"
WHOLE = -1  # in a cut set: leave the whole element out


@dataclass(frozen=True)
class Continuation:
    raws: list[str]
    left_out_elements: int
    left_out_bytes: int
    open_tool_loop: bool
    kept_whole: list[int] = field(default_factory=list)  # indices of elements returned as stored


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _member(text: str, name: str) -> tuple[int, int] | None:
    """Where the value of the top-level member ``name`` of a JSON object starts and ends."""
    i = _skip(text, 0)
    if not text.startswith("{", i):
        return None
    i = _skip(text, i + 1)
    found = None
    while i < len(text) and text[i] != "}":
        key, i = _DECODER.raw_decode(text, i)
        i = _skip(text, _skip(text, i) + 1)  # past ':'
        start = i
        _, i = _DECODER.raw_decode(text, i)
        if key == name:
            found = (start, i)  # the last occurrence wins, as json.loads has it
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
    return found


def _items(text: str, start: int) -> list[tuple[int, int]]:
    """Where each element of the array at ``text[start]`` starts and ends."""
    out: list[tuple[int, int]] = []
    i = _skip(text, start + 1)
    while i < len(text) and text[i] != "]":
        begin = i
        _, i = _DECODER.raw_decode(text, i)
        out.append((begin, i))
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
    return out


def cut_blocks(raw: str, member: str, drop: set[int]) -> str:
    """``raw`` with the elements ``drop`` of its array member ``member`` cut out: every other
    byte as it was (the kept elements joined by ``,``)."""
    where = _member(raw, member)
    if where is None or not drop:
        return raw
    start, end = where
    items = _items(raw, start)
    kept = [raw[s:e] for n, (s, e) in enumerate(items) if n not in drop]
    return raw[:start] + "[" + ",".join(kept) + "]" + raw[end:]


# element index -> the indices of its content array to cut, {WHOLE}, or member names to remove
Cuts = dict[int, set[int | str]]
Rule = Callable[[Sequence[Any]], tuple[bool, set[int], Cuts]]


def _members(text: str) -> list[tuple[str, int, int]]:
    """Each top-level member of a JSON object: its key, where its key starts, where its value
    ends."""
    out: list[tuple[str, int, int]] = []
    i = _skip(text, _skip(text, 0) + 1)
    while i < len(text) and text[i] != "}":
        start = i
        key, i = _DECODER.raw_decode(text, i)
        i = _skip(text, _skip(text, i) + 1)
        _, i = _DECODER.raw_decode(text, i)
        out.append((key, start, i))
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
    return out


def cut_members(raw: str, names: set[str]) -> str:
    """``raw`` (a JSON object) without its members ``names``: every other member exactly as it
    was (``"key": value`` with its own spacing), joined by ``,``."""
    members = _members(raw)
    if not any(key in names for key, _, _ in members):
        return raw
    kept = [raw[s:e] for key, s, e in members if key not in names]
    return "{" + ",".join(kept) + "}"


def _blocks(value: Any, member: str) -> list[Any]:
    if isinstance(value, dict) and isinstance(value.get(member), list):
        return list(value[member])
    return []


def _type(block: Any) -> str:
    return str(block.get("type", "")) if isinstance(block, dict) else ""


def _anthropic(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    def genuine_user(v: Any) -> bool:
        if not isinstance(v, dict) or v.get("role") != "user":
            return False
        content = v.get("content")
        return not isinstance(content, list) or any(_type(b) != "tool_result" for b in content)

    last_user = max((i for i, v in enumerate(values) if genuine_user(v)), default=-1)
    turn = range(last_user + 1, len(values))
    assistants = [
        i for i in turn if isinstance(values[i], dict) and values[i].get("role") == "assistant"
    ]
    open_loop = bool(assistants) and any(
        _type(b) == "tool_use" for b in _blocks(values[assistants[-1]], "content")
    )
    protected = set(turn) if open_loop else set()
    cuts: Cuts = {}
    for i, v in enumerate(values):
        if i in protected or not isinstance(v, dict) or v.get("role") != "assistant":
            continue
        blocks = _blocks(v, "content")
        drop: set[int | str] = {
            n for n, b in enumerate(blocks) if _type(b) in ("thinking", "redacted_thinking")
        }
        if drop and len(drop) < len(blocks):  # never an empty assistant message
            cuts[i] = drop
    return open_loop, protected, cuts


# Items the client answers with a matching *_output (OpenAI Responses).
_CLIENT_CALLS = frozenset(
    {"function_call", "custom_tool_call", "computer_call", "local_shell_call", "shell_call",
     "apply_patch_call", "mcp_approval_request"}
)  # fmt: skip


def _openai_responses(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    def genuine_user(v: Any) -> bool:
        if isinstance(v, str):
            return True  # a string input is the user's message
        return isinstance(v, dict) and v.get("role") == "user" and _type(v) in ("", "message")

    last_user = max((i for i, v in enumerate(values) if genuine_user(v)), default=-1)
    turn = list(range(last_user + 1, len(values)))
    calls = [i for i in turn if _type(values[i]) in _CLIENT_CALLS]
    answered = calls and any(
        _type(values[i]) == "message" and values[i].get("role") == "assistant"
        for i in turn
        if i > calls[-1]
    )
    open_loop = bool(calls) and not answered
    protected = set(turn) if open_loop else set()
    cuts: Cuts = {
        i: {WHOLE} for i, v in enumerate(values) if i not in protected and _type(v) == "reasoning"
    }
    return open_loop, protected, cuts


def _openai_chat(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    def genuine_user(v: Any) -> bool:
        return isinstance(v, dict) and v.get("role") == "user"

    last_user = max((i for i, v in enumerate(values) if genuine_user(v)), default=-1)
    turn = range(last_user + 1, len(values))
    assistants = [
        i for i in turn if isinstance(values[i], dict) and values[i].get("role") == "assistant"
    ]
    open_loop = bool(assistants) and bool(values[assistants[-1]].get("tool_calls"))
    protected = set(turn) if open_loop else set()
    cuts: Cuts = {
        i: {"reasoning_content"}
        for i, v in enumerate(values)
        if i not in protected
        and isinstance(v, dict)
        and v.get("role") == "assistant"
        and "reasoning_content" in v
    }
    return open_loop, protected, cuts


def _is_tool_part(part: Any) -> bool:
    kind = _type(part)
    return kind.startswith("tool-") or kind == "dynamic-tool"


def _ai_sdk(values: Sequence[Any]) -> tuple[bool, set[int], Cuts]:
    last = len(values) - 1
    open_loop = False
    if last >= 0 and isinstance(values[last], dict) and values[last].get("role") == "assistant":
        parts = [p for p in _blocks(values[last], "parts") if _type(p) != "step-start"]
        open_loop = bool(parts) and _is_tool_part(parts[-1])
    protected = {last} if open_loop else set()
    cuts: Cuts = {}
    for i, v in enumerate(values):
        if i in protected or not isinstance(v, dict) or v.get("role") != "assistant":
            continue
        parts = _blocks(v, "parts")
        drop: set[int | str] = {n for n, p in enumerate(parts) if _type(p) == "reasoning"}
        if drop and len(drop) < len(parts):
            cuts[i] = drop
    return open_loop, protected, cuts


RULES: dict[str, tuple[Rule, str]] = {
    "anthropic.messages": (_anthropic, "content"),
    "openai.responses": (_openai_responses, ""),
    "openai.chat": (_openai_chat, ""),
    "ai-sdk.ui": (_ai_sdk, "parts"),
}


def continuation(fmt: str, raws: Sequence[str]) -> Continuation:
    """The elements to send back for ``fmt``, and what was left out. A format without a rule
    gets everything, unmodified."""
    rule = RULES.get(fmt)
    if rule is None:
        return Continuation(list(raws), 0, 0, False, list(range(len(raws))))
    decide, member = rule
    values = [json.loads(r) for r in raws]
    open_loop, _, cuts = decide(values)
    out: list[str] = []
    whole: list[int] = []
    left_elements = 0
    left_bytes = 0
    for i, raw in enumerate(raws):
        drop = cuts.get(i)
        if not drop:
            out.append(raw)
            whole.append(i)
            continue
        if WHOLE in drop:
            left_elements += 1
            left_bytes += len(raw.encode("utf-8"))
            continue
        blocks = {n for n in drop if isinstance(n, int)}
        names = {n for n in drop if isinstance(n, str)}
        cut = cut_members(cut_blocks(raw, member, blocks), names)
        left_elements += len(drop)
        left_bytes += len(raw.encode("utf-8")) - len(cut.encode("utf-8"))
        out.append(cut)
    return Continuation(out, left_elements, left_bytes, open_loop, whole)


def continuation_envelope(c: Continuation) -> bytes:
    """The replay envelope with what was left out said after the messages:
    ``{"messages":[...],"left_out":{"elements":n,"bytes":n}}``."""
    head = b'{"messages":[' + b",".join(r.encode("utf-8") for r in c.raws) + b"]"
    tail = f',"left_out":{{"elements":{c.left_out_elements},"bytes":{c.left_out_bytes}}}}}'
    return head + tail.encode("ascii")
