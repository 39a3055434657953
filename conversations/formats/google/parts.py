"""The parts of a Gemini ``Content``: each part read into the console's blocks, and the form a
resent part is matched in (``match_form``).

A part's kind is the data member it holds. The REST API and the SDKs accept each member in
camelCase and in snake_case (``functionCall``, ``function_call``; proto JSON reads both), so a
part is read through ``camel``. What a part carries beside its data:

- ``thoughtSignature``: the model's encrypted reasoning, on a ``text`` part (even an empty one,
  often a stream's last), a ``functionCall`` (the first of a step's parallel calls only) or a
  server tool part. It is a NEVER block of its own, before the part's own block: the stored part
  keeps it byte for byte, the projection shows the part's text or call without it, and a history
  that drops one shows as a NEVER block gone (``monitoring/rewrites.py``).
- ``thought: true`` on a ``text`` part: a summary of the model's thinking, NEVER.

A part of a kind the console does not know (``inlineData``, ``fileData``, anything newer) is an
UNKNOWN block: kept verbatim in the stored message, shown as nothing (fail closed).

Signatures are bytes in the API; JSON carries them base64. Google sends the standard alphabet;
the ``google-genai`` SDK sends them back URL-safe (pydantic's ``ser_json_bytes="base64"``). The
same bytes are the same signature: ``match_form`` compares the decoded bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ...blocks import Block, BlockClass, classify
from ..base import FormatError, expect
from .profile import (
    CALL,
    CODE,
    CODE_RESULT,
    FORMAT,
    RESPONSE,
    SERVER_CALL,
    SERVER_RESULT,
    SIGNATURE,
    TEXT,
    THOUGHT,
    server_tool_name,
)

# The data members a part may hold, and the members beside them, by their camelCase name.
DATA = (TEXT, CALL, RESPONSE, CODE, CODE_RESULT, SERVER_CALL, SERVER_RESULT)
_SNAKE = re.compile(r"_([a-z0-9])")
# Members whose value is the caller's own data: their keys are never respelled.
_OPAQUE = frozenset({"args", "response", "partialArgs"})


def camel(name: str) -> str:
    """``function_call`` -> ``functionCall`` (a camelCase name is returned as it is)."""
    return _SNAKE.sub(lambda m: m.group(1).upper(), name) if "_" in name else name


def signature_of(part: dict[str, Any]) -> Any:
    """The part's signature as sent (either spelling), or None."""
    if SIGNATURE in part:
        return part[SIGNATURE]
    return part.get("thought_signature")


def kind_of(part: dict[str, Any]) -> str:
    """The part's kind: its first data member, camelCase; a part holding none is the kind of its
    first member that is not a signature or ``thought`` (an unknown kind), or "" for none."""
    names = [camel(k) for k in part]
    for name in names:
        if name in DATA:
            return name
    rest = [n for n in names if n not in (SIGNATURE, THOUGHT)]
    return rest[0] if rest else ""


def _member(part: dict[str, Any], name: str) -> Any:
    if name in part:
        return part[name]
    for key, value in part.items():
        if camel(key) == name:
            return value
    return None


def part_blocks(value: Any, *, field: str, at: str) -> list[Block]:
    """The blocks of one part: its signature's (if any), then its own."""
    part = expect(value, dict, field=field, at=at)
    out: list[Block] = []
    signature = signature_of(part)
    if signature is not None:
        expect(signature, str, field=field, at=f"{at}.{SIGNATURE}")
        out.append(Block(SIGNATURE, BlockClass.NEVER))
    kind = kind_of(part)
    data = _member(part, kind) if kind else None
    where = f"{at}.{kind}"
    if kind == TEXT:
        text = expect(data, str, field=field, at=where)
        thought = part.get(THOUGHT)
        if thought is not None:
            expect(thought, bool, field=field, at=f"{at}.{THOUGHT}")
        if thought:
            out.append(Block(THOUGHT, BlockClass.NEVER, redacted=not text and bool(signature)))
        elif text or signature is None:
            out.append(Block(TEXT, BlockClass.VISIBLE, text=text))
        return out
    if kind == "":
        if not out:  # an empty part: nothing at all
            out.append(Block("part", BlockClass.UNKNOWN))
        return out
    cls = classify(FORMAT, kind)
    if cls is not BlockClass.AUDIT:
        out.append(Block(kind, cls))  # media and kinds this code does not know: no content
        return out
    data = expect(data, dict, field=field, at=where)
    call_id = _opt_str(data, "id", field=field, at=where)
    if kind == CALL:
        # A streamed call's later pieces (Vertex AI's ``partialArgs``, ``willContinue``) name no
        # function: they continue the call before, and are no call of their own.
        name = _opt_str(data, "name", field=field, at=where)
        args = data.get("args", {} if name else None)
        out.append(Block(kind, cls, tool_name=name, call_id=call_id, input=args))
    elif kind == RESPONSE:
        name = _name(data, field=field, at=where)
        response = data.get("response", {})
        failed = isinstance(response, dict) and "error" in response and "output" not in response
        out.append(
            Block(kind, cls, tool_name=name, call_id=call_id, output=response, is_error=failed)
        )
    elif kind == CODE:
        code = {k: v for k, v in data.items() if k != "id"}
        out.append(Block(kind, cls, tool_name="code_execution", call_id=call_id, input=code))
    elif kind == CODE_RESULT:
        outcome = _member(data, "outcome")
        result = {k: v for k, v in data.items() if k != "id"}
        out.append(
            Block(
                kind,
                cls,
                tool_name="code_execution",
                call_id=call_id,
                output=result,
                is_error=isinstance(outcome, str) and outcome != "OUTCOME_OK",
            )
        )
    else:  # toolCall, toolResponse: a Gemini 3 server tool
        tool_type = _member(data, "toolType")
        name = server_tool_name(tool_type if isinstance(tool_type, str) else "tool")
        if kind == SERVER_CALL:
            out.append(Block(kind, cls, tool_name=name, call_id=call_id, input=data.get("args")))
        else:
            response = data.get("response", {})
            out.append(Block(kind, cls, tool_name=name, call_id=call_id, output=response))
    return out


def _opt_str(data: dict[str, Any], key: str, *, field: str, at: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    result: str = expect(value, str, field=field, at=f"{at}.{key}")
    return result or None


def _name(data: dict[str, Any], *, field: str, at: str) -> str:
    if "name" not in data:
        raise FormatError("missing 'name'", field=field, at=f"{at}.name", code="missing")
    result: str = expect(data["name"], str, field=field, at=f"{at}.name")
    return result


def content_blocks(value: Any, *, field: str, at: str) -> tuple[str, tuple[Block, ...]]:
    """A ``Content``'s role (``user`` when it names none, as the API reads it) and blocks."""
    content = expect(value, dict, field=field, at=at)
    role = content.get("role")
    if role is None:
        role = "user"
    expect(role, str, field=field, at=f"{at}.role")
    parts = content.get("parts")
    if parts is None:
        return role, ()
    expect(parts, list, field=field, at=f"{at}.parts")
    blocks: list[Block] = []
    for j, part in enumerate(parts):
        blocks.extend(part_blocks(part, field=field, at=f"{at}.parts[{j}]"))
    return role, tuple(blocks)


def parts_of(message: Any) -> list[dict[str, Any]]:
    """The parts of a stored content that are objects (a reader's view: never raises)."""
    found = message.get("parts") if isinstance(message, dict) else None
    return [p for p in found if isinstance(p, dict)] if isinstance(found, list) else []


# --- the form a resent content is matched in ---------------------------------------------------


def signature_bytes(value: Any) -> Any:
    """A signature as the bytes it stands for, written in the standard alphabet with padding:
    the form both Google's and the SDK's spelling come to. A value that is not base64 in
    either alphabet is returned as it is (it then matches only itself)."""
    if not isinstance(value, str):
        return value
    text = value.replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64encode(base64.b64decode(text, validate=True)).decode("ascii")
    except (binascii.Error, ValueError):
        return value


def _respelled(value: Any) -> Any:
    """An object's keys in camelCase, its opaque members (arguments, responses) untouched."""
    if isinstance(value, list):
        return [_respelled(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, member in value.items():
        name = camel(key)
        out[name] = member if name in _OPAQUE else _respelled(member)
    return out


def match_form(value: Any) -> Any:
    """A ``Content`` as a resent one is matched: member names in camelCase (the SDKs' and the
    REST API's two spellings), each signature as its bytes (Google's standard base64 and the
    SDK's URL-safe one), a missing role as ``user``."""
    if not isinstance(value, dict):
        return value
    content = _respelled(value)
    if "role" not in content:
        content["role"] = "user"
    parts = content.get("parts")
    if isinstance(parts, list):
        content["parts"] = [
            {**p, SIGNATURE: signature_bytes(p[SIGNATURE])}
            if isinstance(p, dict) and SIGNATURE in p
            else p
            for p in parts
        ]
    return content
