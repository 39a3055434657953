"""Bedrock Converse's messages and content blocks, read: the request's history, a Converse JSON
response, and the block, stop reason, usage and trace readers that the stream (``stream.py``)
shares with them (``parser.py`` says what each becomes)."""

from __future__ import annotations

from typing import Any

from ...blocks import Block, BlockClass, Message, Params, classify
from ..base import (
    FormatError,
    element_spans,
    expect,
    object_member_spans,
    optional,
    required,
)
from ..profile import Finish
from .profile import FORMAT, PROFILE, kind_of

ROLES = ("user", "assistant", "system")


def block(value: Any, *, field: str, at: str, cut_input: str | None = None) -> Block:
    """One content block, typed and classified by its union member."""
    obj = expect(value, dict, field=field, at=at)
    kind = kind_of(obj)
    if not kind:
        raise FormatError(
            "a content block names no type (one member: text, toolUse, reasoningContent...)",
            field=field,
            at=at,
            code="missing",
        )
    cls = classify(FORMAT, kind)
    inner = obj[kind]
    at = f"{at}.{kind}"
    if cls is BlockClass.VISIBLE:
        if kind == "text":
            return Block(kind, cls, text=expect(inner, str, field=field, at=at))
        body = expect(inner, dict, field=field, at=at)
        parts = optional(body, "content", list, field=field, at=at) or []
        texts = [p.get("text") for p in parts if isinstance(p, dict)]
        return Block(kind, cls, text="".join(t for t in texts if isinstance(t, str)))
    if cls is BlockClass.NEVER:
        body = expect(inner, dict, field=field, at=at)
        return Block(kind, cls, redacted=_withheld(body))
    if cls is BlockClass.AUDIT:
        body = expect(inner, dict, field=field, at=at)
        call_id = required(body, "toolUseId", str, field=field, at=at)
        status = optional(body, "status", str, field=field, at=at)
        if kind == "toolUse":
            return Block(
                kind,
                cls,
                tool_name=required(body, "name", str, field=field, at=at),
                call_id=call_id,
                input=body.get("input") if cut_input is None else cut_input,
            )
        return Block(
            kind,
            cls,
            call_id=call_id,
            output=body.get("content"),
            is_error=status == "error",
            status=status,
        )
    return Block(kind, cls)  # UNKNOWN: kept in raw, nothing of it here


def _withheld(body: dict[str, Any]) -> bool:
    """Redacted reasoning, or a reasoning text left empty beside its signature."""
    if "redactedContent" in body:
        return True
    text = body.get("reasoningText")
    return isinstance(text, dict) and not text.get("text") and bool(text.get("signature"))


def _blocks(content: Any, *, field: str, at: str) -> tuple[Block, ...]:
    items = expect(content, list, field=field, at=at)
    return tuple(block(item, field=field, at=f"{at}[{j}]") for j, item in enumerate(items))


# --- request ---------------------------------------------------------------------------------


def parse_request(request: str, params: Params) -> list[Message]:
    field = "request"
    members = object_member_spans(request, field=field)
    body = {key: span.value for key, span in members.items()}
    params.request_settings = {k: v for k, v in body.items() if k != "messages"}
    params.requested_model = optional(body, "modelId", str, field=field, at="$")
    config = optional(body, "inferenceConfig", dict, field=field, at="$")
    if config is not None:
        params.max_tokens = optional(config, "maxTokens", int, field=field, at="$.inferenceConfig")
    extra = optional(body, "additionalModelRequestFields", dict, field=field, at="$")
    if extra is not None:
        _thinking(extra, params, at="$.additionalModelRequestFields")
    required(body, "messages", list, field=field, at="$")
    history = []
    for i, span in enumerate(element_spans(members["messages"], field=field, at="$.messages")):
        at = f"$.messages[{i}]"
        message = expect(span.value, dict, field=field, at=at)
        role = required(message, "role", str, field=field, at=at)
        if role not in ROLES:
            raise FormatError(
                f"expected role 'user', 'assistant' or 'system', got {role!r}",
                field=field,
                at=f"{at}.role",
                code="bad_value",
            )
        required(message, "content", list, field=field, at=at)
        blocks = _blocks(message["content"], field=field, at=f"{at}.content")
        history.append(Message(role=role, raw=span.raw, blocks=blocks))
    return history


def _thinking(extra: dict[str, Any], params: Params, *, at: str) -> None:
    """Anthropic's ``thinking`` ({type, budget_tokens}) or the ``reasoning_config`` other
    models on Bedrock read ({type, budget_tokens} or {type, maxReasoningEffort})."""
    for key in ("thinking", "reasoning_config", "reasoningConfig"):
        value = extra.get(key)
        if not isinstance(value, dict):
            continue
        params.thinking = optional(value, "type", str, field="request", at=f"{at}.{key}")
        params.budget_tokens = optional(
            value, "budget_tokens", int, field="request", at=f"{at}.{key}"
        )
        effort = value.get("maxReasoningEffort")
        params.effort = effort if isinstance(effort, str) else None
        return


# --- facts shared by the JSON response and the stream ----------------------------------------


def apply_stop_reason(reason: str | None, out: Params) -> None:
    if reason is None:
        return
    out.stop_reason = reason
    kind = PROFILE.finish(reason)
    out.refusal = kind is Finish.REFUSED
    if kind is Finish.TRUNCATED:
        out.truncated = True


USAGE = (
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("cacheReadInputTokens", "cache_read_tokens"),
    ("cacheWriteInputTokens", "cache_write_tokens"),
)


def apply_usage(usage: dict[str, Any], out: Params, *, field: str, at: str) -> None:
    for key, attr in USAGE:
        value = optional(usage, key, int, field=field, at=at)
        if value is not None:
            setattr(out.usage, attr, value)


def apply_trace(container: dict[str, Any], out: Params) -> None:
    """The model a prompt router invoked: the snapshot that served the call."""
    trace = container.get("trace")
    router = trace.get("promptRouter") if isinstance(trace, dict) else None
    model = router.get("invokedModelId") if isinstance(router, dict) else None
    if isinstance(model, str) and model:
        out.response_model = model


# --- JSON response ---------------------------------------------------------------------------


def parse_response(response: str, params: Params) -> Message:
    field = "response"
    members = object_member_spans(response, field=field)
    error = members.get("message")
    if "output" not in members and error is not None and isinstance(error.value, str):
        raise FormatError(  # a ValidationException's body: {"message": "..."}
            f"the response is a provider error, not a message: {error.value[:200]}",
            field=field,
            at="$.message",
            code="provider_error",
        )
    body = {key: span.value for key, span in members.items()}
    output = required(body, "output", dict, field=field, at="$")
    message = required(output, "message", dict, field=field, at="$.output")
    at = "$.output.message"
    role = optional(message, "role", str, field=field, at=at)
    if role is not None and role != "assistant":
        raise FormatError(
            f"expected role 'assistant', got {role!r}",
            field=field,
            at=f"{at}.role",
            code="bad_value",
        )
    required(message, "content", list, field=field, at=at)
    blocks = _blocks(message["content"], field=field, at=f"{at}.content")
    raw = object_member_spans(members["output"].raw, field=field)["message"].raw
    apply_stop_reason(optional(body, "stopReason", str, field=field, at="$"), params)
    usage = optional(body, "usage", dict, field=field, at="$")
    if usage is not None:
        apply_usage(usage, params, field=field, at="$.usage")
    apply_trace(body, params)
    return Message(role="assistant", raw=raw, blocks=blocks)


# --- the format ------------------------------------------------------------------------------
